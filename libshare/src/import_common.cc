#include "import_common.h"

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "libshare/options.h"

namespace libshare::import_internal {

std::optional<std::string> ControlCharacterProblem(
    const std::vector<std::string>& words) {
  for (const std::string& w : words) {
    for (char c : w) {
      const auto u = static_cast<unsigned char>(c);
      if (u >= 0x20 && u != 0x7f) continue;
      std::string shown;
      for (char d : w) {
        const auto v = static_cast<unsigned char>(d);
        if (v < 0x20 || v == 0x7f) {
          absl::StrAppend(&shown, "\\", (v >> 6) & 7, (v >> 3) & 7, v & 7);
        } else {
          shown.push_back(d);
        }
      }
      return absl::StrCat("\"", shown,
                          "\": control characters are not allowed");
    }
  }
  return std::nullopt;
}

void AddOpenWarnings(const Operation& op, const std::string& where,
                     std::vector<ImportProblem>* out) {
  absl::StatusOr<ShareOptions> o = ParseOptions(op.options);
  if (!o.ok()) return;  // reported by the daemon
  if (OpensReadWriteToAll(*o)) {
    out->push_back(
        {where,
         absl::StrCat(op.path.str(), ": read-write to every client (",
                      op.options.empty() ? "no options" : op.options.str(),
                      ")")});
  }
  if (GivesRootToAll(*o)) {
    out->push_back(
        {where, absl::StrCat(op.path.str(), ": root for every client (",
                             op.options.str(), ")")});
  }
}

}  // namespace libshare::import_internal
