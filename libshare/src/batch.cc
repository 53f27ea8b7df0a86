#include "libshare/batch.h"

#include "absl/strings/str_cat.h"

namespace libshare {

absl::Status CheckOperationText(const Operation& op) {
  const struct {
    const std::string* text;
    const char* field;
  } fields[] = {{&op.group, "group"},
                {&op.path, "path (-s)"},
                {&op.options, "options (-o)"},
                {&op.description, "description (-d)"},
                {&op.resource, "resource (-r)"}};
  for (const auto& f : fields) {
    if (f.text->find('\0') != std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat(f.field, " contains a NUL byte"));
    }
  }
  return absl::OkStatus();
}

std::string_view OperationName(Operation::Type t) {
  switch (t) {
    case Operation::Type::kCreateGroup:
      return "create";
    case Operation::Type::kDeleteGroup:
      return "delete";
    case Operation::Type::kEnableGroup:
      return "enable";
    case Operation::Type::kDisableGroup:
      return "disable";
    case Operation::Type::kAddShare:
      return "add-share";
    case Operation::Type::kRemoveShare:
      return "remove-share";
    case Operation::Type::kMoveShare:
      return "move-share";
    case Operation::Type::kSetOptions:
      return "set";
    case Operation::Type::kModifyShare:
      return "set-share";
    case Operation::Type::kUnsetOption:
      return "unset";
    case Operation::Type::kManageGroup:
      return "manage";
  }
  return "unknown";
}

std::string_view ShareChangeKindName(ShareChange::Kind k) {
  switch (k) {
    case ShareChange::Kind::kAdded:
      return "added";
    case ShareChange::Kind::kRemoved:
      return "removed";
    case ShareChange::Kind::kChanged:
      break;
  }
  return "changed";
}

}  // namespace libshare
