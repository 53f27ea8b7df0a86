#include "libshare/batch.h"

namespace libshare {

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
  }
  return "unknown";
}

}  // namespace libshare
