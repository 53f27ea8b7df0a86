#include "batch_file.h"

#include <cstring>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "commands.h"
#include "libshare/shell_words.h"

namespace sharectl {

namespace {

// With memchr: std::count looks at one byte at a time (a tenth of the
// parse).
std::size_t CountLines(std::string_view text) {
  std::size_t lines = 1;
  const char* const end = text.data() + text.size();
  for (const char* p = text.data(); p != end; ++p) {
    p = static_cast<const char*>(std::memchr(p, '\n', end - p));
    if (p == nullptr) break;
    ++lines;
  }
  return lines;
}

}  // namespace

BatchFile ParseBatchFile(std::string_view text, std::string_view where) {
  BatchFile out;
  // Most lines are one operation: growing these one by one would move
  // every Operation log2(N) times.
  const std::size_t lines = CountLines(text);
  out.ops.reserve(lines);
  out.op_lines.reserve(lines);
  libshare::ShellLineReader reader(text);
  libshare::ShellLineView l;
  while (reader.Next(&l)) {
    ++out.commands;
    // Only a refused line has its origin and command made into text.
    const auto refuse = [&](std::string_view why) {
      out.bad.push_back(
          {absl::StrCat(absl::string_view(where.data(), where.size()), ":",
                        l.line),
           l.words.empty() ? "batch" : std::string(l.words[0]),
           std::string(why)});
    };
    if (!l.error.empty()) {
      refuse(l.error);
      continue;
    }
    const std::size_t first = out.ops.size();
    absl::StatusOr<ChangeMode> mode = AppendChangeCommand(l.words, &out.ops);
    if (!mode.ok()) {
      const absl::string_view why = mode.status().message();
      refuse({why.data(), why.size()});
      continue;
    }
    if (mode->dry_run) {
      out.ops.resize(first);  // the line's operations are not sent
      refuse("-n applies to the whole batch: sharectl batch -n FILE");
      continue;
    }
    if (mode->all) {
      out.all.emplace_back(out.ops.size(), mode->all_type);
      out.ops.emplace_back();
    }
    out.op_lines.resize(out.ops.size(), l.line);  // each of the line's
  }
  return out;
}

}  // namespace sharectl
