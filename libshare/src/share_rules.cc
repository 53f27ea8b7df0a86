#include "share_rules.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "internal_text.h"
#include "libshare/path.h"

namespace libshare::internal {
namespace {

absl::Status CheckText(std::string_view path, std::string_view field,
                       std::string_view text) {
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f) {
      return absl::InvalidArgumentError(absl::StrCat(
          ToAbsl(path), ": ", ToAbsl(field), " contains a control character (",
          Quote(std::string_view(&ch, 1)), ")"));
    }
  }
  if (std::optional<unsigned> c1 = FirstC1Control(text)) {
    return absl::InvalidArgumentError(
        absl::StrCat(ToAbsl(path), ": ", ToAbsl(field),
                     absl::StrFormat(" contains the C1 control character "
                                     "U+%04X",
                                     *c1)));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateShareFields(std::string_view path,
                                 std::string_view resource,
                                 std::string_view description) {
  if (absl::Status s = ValidatePath(path); !s.ok()) return s;
  if (absl::Status s = CheckText(path, "resource", resource); !s.ok()) {
    return s;
  }
  return CheckText(path, "description", description);
}

absl::Status CheckShareLimits(std::string_view path, std::string_view resource,
                              std::string_view description) {
  if (resource.size() > kMaxResourceLength) {
    return absl::InvalidArgumentError(
        absl::StrCat(ToAbsl(path), ": resource longer than ",
                     kMaxResourceLength, " bytes (", resource.size(), ")"));
  }
  if (description.size() > kMaxDescriptionLength) {
    return absl::InvalidArgumentError(
        absl::StrCat(ToAbsl(path), ": description longer than ",
                     kMaxDescriptionLength, " bytes (", description.size(),
                     ")"));
  }
  return absl::OkStatus();
}

std::string ResourceTakenMessage(std::string_view path,
                                 std::string_view resource,
                                 std::string_view user) {
  return absl::StrCat(ToAbsl(path), ": resource name ", Quote(resource),
                      " is already used by ", ToAbsl(user));
}

}  // namespace libshare::internal
