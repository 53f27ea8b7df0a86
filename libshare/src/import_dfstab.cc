// dfstab import: Solaris/illumos `share` commands into add-share
// operations (libshare/import.h).
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "import_common.h"
#include "libshare/import.h"
#include "libshare/path.h"
#include "libshare/shell_words.h"

namespace libshare {

using import_internal::AddOpenWarnings;
using import_internal::ControlCharacterProblem;

ImportPlan ImportDfstab(const std::vector<SourceFile>& files,
                        const std::string& group) {
  ImportPlan plan;
  for (const SourceFile& f : files) {
    for (const SplitLine& l : SplitShellLines(f.text)) {
      const std::string where = absl::StrCat(f.name, ":", l.line);
      const auto fail = [&](std::string why) {
        plan.problems.push_back({where, std::move(why), false});
      };
      if (!l.error.empty()) {
        fail(l.error);
        continue;
      }
      if (std::optional<std::string> bad = ControlCharacterProblem(l.words)) {
        fail(*std::move(bad));
        continue;
      }
      const std::vector<std::string>& w = l.words;
      std::string_view cmd = w[0];
      if (size_t slash = cmd.rfind('/'); slash != std::string_view::npos) {
        cmd = cmd.substr(slash + 1);
      }
      if (cmd != "share") {
        fail(absl::StrCat("\"", w[0], "\": not a share command"));
        continue;
      }
      Operation op;
      op.type = Operation::Type::kAddShare;
      op.group = group;
      std::vector<std::string> args;
      bool bad = false;
      for (size_t i = 1; i < w.size() && !bad; ++i) {
        const std::string& t = w[i];
        if (t.size() < 2 || t[0] != '-') {
          args.push_back(t);
          continue;
        }
        char flag = t[1];
        if (flag == 'p' && t.size() == 2) continue;  // persistent: always
        if (flag != 'F' && flag != 'o' && flag != 'd') {
          fail(absl::StrCat("unknown option \"", t, "\""));
          bad = true;
          break;
        }
        std::string value;
        if (t.size() > 2) {
          value = t.substr(2);
        } else if (i + 1 < w.size()) {
          value = w[++i];
        } else {
          fail(absl::StrCat("option \"", t, "\" needs a value"));
          bad = true;
          break;
        }
        if (flag == 'F' && value != "nfs") {
          fail(absl::StrCat("file system type \"", value,
                            "\": only nfs is supported"));
          bad = true;
        } else if (flag == 'o') {
          op.options = value;
        } else if (flag == 'd') {
          op.description = value;
        }
      }
      if (bad) continue;
      if (args.empty() || args.size() > 2) {
        fail("expected: share [-F nfs] [-o OPTS] [-d DESC] PATH [RESOURCE]");
        continue;
      }
      absl::StatusOr<std::string> path = NormalizePath(args[0]);
      if (!path.ok()) {
        fail(std::string(path.status().message()));
        continue;
      }
      op.path = *path;
      if (args.size() == 2 && args[1] != "-") op.resource = args[1];
      AddOpenWarnings(op, where, &plan.warnings);
      plan.ops.push_back(std::move(op));
      plan.origins.push_back(where);
    }
  }
  return plan;
}

}  // namespace libshare
