#include "libshare/batch.h"

#include "absl/strings/str_cat.h"

namespace libshare {

absl::Status CheckOperationText(const Operation& op) {
  const struct {
    const Text* text;
    const char* field;
  } fields[] = {{&op.group, "group"},
                {&op.path, "path (-s)"},
                {&op.options, "options (-o)"},
                {&op.description, "description (-d)"},
                {&op.resource, "resource (-r)"}};
  for (const auto& f : fields) {
    if (f.text->view().find('\0') != std::string_view::npos) {
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

std::vector<std::string> OperationWords(const Operation& op) {
  std::vector<std::string> w;
  w.emplace_back(OperationName(op.type));
  switch (op.type) {
    case Operation::Type::kCreateGroup:
      if (!op.options.empty()) w.insert(w.end(), {"-o", op.options.str()});
      break;
    case Operation::Type::kDeleteGroup:
      if (op.force) w.push_back("-f");
      break;
    case Operation::Type::kEnableGroup:
    case Operation::Type::kDisableGroup:
      break;
    case Operation::Type::kAddShare:
      if (!op.options.empty()) w.insert(w.end(), {"-o", op.options.str()});
      if (!op.description.empty())
        w.insert(w.end(), {"-d", op.description.str()});
      if (!op.resource.empty()) w.insert(w.end(), {"-r", op.resource.str()});
      w.insert(w.end(), {"-s", op.path.str()});
      break;
    case Operation::Type::kRemoveShare:
    case Operation::Type::kMoveShare:
      w.insert(w.end(), {"-s", op.path.str()});
      break;
    case Operation::Type::kSetOptions:
      if (!op.path.empty() && op.options.empty()) {
        // What the client API's "inherit again" is on a command line.
        w[0] = "unset";
        w.insert(w.end(), {"-p", "all", "-s", op.path.str()});
        break;
      }
      w.insert(w.end(), {"-o", op.options.str()});
      if (!op.path.empty()) w.insert(w.end(), {"-s", op.path.str()});
      break;
    case Operation::Type::kModifyShare:
      if (op.set_options) w.insert(w.end(), {"-o", op.options.str()});
      if (op.set_description) w.insert(w.end(), {"-d", op.description.str()});
      if (op.set_resource) w.insert(w.end(), {"-r", op.resource.str()});
      w.insert(w.end(), {"-s", op.path.str()});
      break;
    case Operation::Type::kUnsetOption:
      w.insert(w.end(), {"-p", op.options.str()});
      if (!op.path.empty()) w.insert(w.end(), {"-s", op.path.str()});
      break;
    case Operation::Type::kManageGroup:  // never in a batch file
      // The mark cleared: the group is handed back to its admins.
      if (op.path.empty()) w[0] = "release";
      break;
  }
  if (!op.group.empty()) {
    // A word starting with "-" after "--" is read as an argument.
    if (op.group[0] == '-') w.push_back("--");
    w.push_back(op.group.str());
  }
  return w;
}

}  // namespace libshare
