#include "commands.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "batch_report.h"
#include "libshare/path.h"
#include "libshare/spelling.h"
#include "output.h"

namespace sharectl {

using libshare::Operation;

namespace {

// absl here is built with its own string_view type.
absl::string_view A(std::string_view s) { return {s.data(), s.size()}; }

// The commands that change the table (those a batch file may hold).
std::vector<CommandSpec> ChangeCommands() {
  return {
      {"create",
       "[-o OPTS] GROUP",
       "create a share group (enabled), with default options for its shares",
       true,
       {{"-o", "OPTS", "share_nfs options the group's shares inherit"}},
       1,
       1},
      {"delete",
       "[-f] GROUP",
       "delete a group; refused while it has shares unless -f",
       true,
       {{"-f", "", "also remove the group's shares"}},
       1,
       1},
      {"enable",
       "{-a | GROUP...}",
       "enable groups: their shares are exported",
       true,
       {{"-a", "", "every group"}},
       0,
       -1},
      {"disable",
       "{-a | GROUP...}",
       "disable groups: their shares are kept but not exported",
       true,
       {{"-a", "", "every group"}},
       0,
       -1},
      {"add-share",
       "[-o OPTS] [-d DESC] [-r RESOURCE] -s PATH GROUP",
       "add a share to a group",
       true,
       {{"-o", "OPTS",
         "the share's own share_nfs options (default: the group's)"},
        {"-d", "DESC", "description"},
        {"-r", "RESOURCE", "resource name"},
        {"-s", "PATH", "the directory to share"}},
       1,
       1},
      {"remove-share",
       "-s PATH [GROUP]",
       "remove a share (from GROUP, if given)",
       true,
       {{"-s", "PATH", "the shared directory"}},
       0,
       1},
      {"move-share",
       "-s PATH GROUP",
       "move a share to another group",
       true,
       {{"-s", "PATH", "the shared directory"}},
       1,
       1},
      {"set",
       "-o OPTS [-s PATH] GROUP",
       "set a group's options, or with -s the options one share overrides",
       true,
       {{"-o", "OPTS", "share_nfs options (not empty)"},
        {"-s", "PATH", "the share to change"}},
       1,
       1},
      {"set-share",
       "[-o OPTS] [-d DESC] [-r RESOURCE] -s PATH [GROUP]",
       "change a share in place (it keeps its id)",
       true,
       {{"-o", "OPTS", "the share's own share_nfs options (not empty)"},
        {"-d", "DESC", "description (\"\" clears it)"},
        {"-r", "RESOURCE", "resource name (\"\" clears it)"},
        {"-s", "PATH", "the share to change"}},
       0,
       1},
      {"unset",
       "-p PROPERTY [-s PATH] GROUP",
       "remove one option property from a group, or from a share's own",
       true,
       {{"-p", "PROPERTY",
         "nosuid, rw, root, ..., sec=MODE (a scope), or with -s all"},
        {"-s", "PATH", "the share to change"}},
       1,
       1},
  };
}

// The commands that only read: the table, the daemon's state, its
// counters, its change log; and `cache flush`.
std::vector<CommandSpec> ReadCommands() {
  return {
      {"list",
       "[-v]",
       "list groups",
       false,
       {{"-v", "", "also state, share count and options"}},
       0,
       0},
      {"show",
       "[-v] [GROUP... | -s PATH...]",
       "show groups and their shares, or the shares of the given paths",
       false,
       {{"-v", "", "also options, resources and descriptions"},
        {"-s", "PATH", "show the share of this path (repeatable)", true}},
       0,
       -1},
      {"dump",
       "[GROUP...]",
       "print a batch that recreates the groups (all or those named) and "
       "shares",
       false,
       {},
       0,
       -1},
      {"share",
       "",
       "show the active shares (the sharetab view)",
       false,
       {},
       0,
       0},
      {"check",
       "[--sec FLAVOR] CLIENT PATH",
       "show the access CLIENT gets to PATH, and why (exit 1 if none)",
       false,
       {{"--sec", "FLAVOR",
         "decide for this security flavor (sys, none, dh, krb5, krb5i, "
         "krb5p; default sys)"}},
       2,
       2},
      {"stats",
       "",
       "show table size, load time, cache and request counters",
       false,
       {},
       0,
       0},
      {"mounts",
       "",
       "list who has what mounted: client address, path, since when",
       false,
       {},
       0,
       0},
      {"cache", "flush", "empty the authorization cache", false, {}, 1, 1},
      // Not a batch: the file system a share is on is the daemon's record.
      {"rerecord",
       "-s PATH...",
       "record anew the file system a share is on now (one added before "
       "its file system was mounted)",
       false,
       {{"-s", "PATH", "the share (repeatable)", true}},
       0,
       0},
      {"changes",
       "--since GENERATION [--limit N] [--summary]",
       "show the batches committed after GENERATION: who, what, which shares",
       false,
       {{"--since", "GENERATION",
         "a generation from stats, an earlier changes or a change's --json "
         "reply"},
        {"--limit", "N",
         "list at most N lines, then count the rest (default 1000, 0: all; "
         "with --json all unless given)"},
        {"--summary", "",
         "one line per batch, with the shares it added, removed, changed"}},
       0,
       0},
  };
}

// batch's and import's --all-errors.
OptionSpec AllErrorsOption() {
  static const std::string* const kHelp = new std::string(
      absl::StrCat("list every bad line (default: ", kErrorsShownPerKind,
                   " of each kind of error, then a count)"));
  return {"--all-errors", "", *kHelp};
}

// The commands whose changes come from elsewhere: exportfs(8)'s own
// words, a batch file, exports(5) or dfstab files.
std::vector<CommandSpec> FileCommands() {
  return {
      {"exportfs",
       "[-a] [-r] [-u] [-o OPTS] [-v] [-s] [-f] [-i] [CLIENT:PATH...]",
       "exportfs(8) front end: re-read the followed exports files, add or "
       "remove transient exports, list them (also run as exportfs)",
       false,
       {{"-a", "", "re-read every followed exports file now (as -r)"},
        {"-r", "",
         "re-read every followed exports file now; reply when applied"},
        {"-u", "", "unexport CLIENT:PATH (with -a: every transient export)"},
        {"-o", "OPTS", "exports(5) options for CLIENT:PATH"},
        {"-v", "", "verbose; list with options"},
        {"-s", "", "list in exports(5) form"},
        {"-f", "", "flush the caches, as cache flush"},
        {"-i", "", "ignore the followed files (they are never read for -o)"}},
       0,
       -1},
      {"batch",
       "[-n] [--all-errors] FILE|-",
       "apply the commands of FILE (- for standard input) as one transaction",
       false,
       {AllErrorsOption()},
       1,
       1},
      {"import",
       "{--exports FILE | --dfstab FILE} [-g GROUP] [--skip-unsupported] "
       "[--dry-run] [--all-errors]",
       "import shares from Linux exports(5) or Solaris dfstab files",
       false,
       {{"--exports", "FILE",
         "exports(5) file, folder of *.exports files, or glob; repeatable",
         true},
        {"--dfstab", "FILE", "Solaris dfstab file; repeatable", true},
        {"-g", "GROUP", "group of the imported shares (default: imported)"},
        {"--skip-unsupported", "",
         "drop exports options that have no share_nfs equivalent"},
        {"--dry-run", "",
         "print the batch; the daemon checks it and changes nothing"},
        AllErrorsOption()},
       0,
       0},
  };
}

}  // namespace

const std::vector<CommandSpec>& Commands() {
  // In the order --help lists them.
  static const auto* const kCommands = [] {
    auto* table = new std::vector<CommandSpec>;
    for (const auto& part :
         {ChangeCommands(), ReadCommands(), FileCommands()}) {
      table->insert(table->end(), part.begin(), part.end());
    }
    return table;
  }();
  return *kCommands;
}

const CommandSpec* FindCommand(std::string_view name) {
  for (const auto& c : Commands()) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

bool TakesDryRun(const CommandSpec& spec) {
  return spec.changes || spec.name == "batch" || spec.name == "import";
}

const std::vector<OptionSpec>& DryRunOptions() {
  static const auto* const kDryRun = new std::vector<OptionSpec>{
      {"-n", "",
       "dry run: the daemon checks against the live table, changes nothing"},
      {"--dry-run", "", "the same as -n"},
  };
  return *kDryRun;
}

const std::vector<OptionSpec>& GlobalOptions() {
  static const auto* const kGlobal = new std::vector<OptionSpec>{
      {"--socket", "PATH",
       "daemon socket (default: $SHARECTL_SOCKET, else "
       "/run/sharemgr/sharemgrd.sock)"},
      {"--json", "", "print one JSON document on standard output"},
      {"-n", "",
       "before a changing command, batch or import: its dry run (as its "
       "own -n)"},
      {"--help", "", "print this help, or a command's help after COMMAND"},
      {"--version", "", "print the version"},
  };
  return *kGlobal;
}

namespace {

std::string OptionLines(const std::vector<OptionSpec>& options) {
  std::string out;
  for (const auto& o : options) {
    std::string head = std::string(o.name);
    if (!o.arg.empty()) absl::StrAppend(&head, " ", A(o.arg));
    if (head.size() < 22) head.resize(22, ' ');
    absl::StrAppend(&out, "  ", head, " ", A(o.help), "\n");
  }
  return out;
}

}  // namespace

std::string GlobalHelp() {
  std::string out =
      "usage: sharectl [--socket PATH] [--json] [-n] COMMAND [ARGS]\n"
      "       sharectl --help | --version | COMMAND --help | help [COMMAND]\n"
      "--socket and --json may also follow the command.\n"
      "\nOptions:\n";
  absl::StrAppend(&out, OptionLines(GlobalOptions()), "\nCommands:\n");
  for (const auto& c : Commands()) {
    absl::StrAppend(&out, "  ", A(c.name), c.synopsis.empty() ? "" : " ",
                    A(c.synopsis), "\n");
  }
  absl::StrAppend(&out, "\nCommand options:\n");
  for (const auto& c : Commands()) {
    if (c.options.empty()) continue;
    absl::StrAppend(&out, " ", A(c.name), ":\n", OptionLines(c.options));
  }
  absl::StrAppend(&out, " every changing command, batch and import:\n",
                  OptionLines(DryRunOptions()));
  absl::StrAppend(&out,
                  "\nExit status: 0 done, 1 refused, 2 usage error, 3 daemon "
                  "unreachable.\nSee sharectl(8).\n");
  return out;
}

std::string CommandHelp(const CommandSpec& spec) {
  std::string out = absl::StrCat("usage: sharectl ", A(spec.name), " ",
                                 A(spec.synopsis), "\n", A(spec.summary), "\n");
  std::vector<OptionSpec> options = spec.options;
  if (TakesDryRun(spec)) {
    for (const OptionSpec& d : DryRunOptions()) {
      bool listed = false;
      for (const OptionSpec& o : spec.options) listed |= o.name == d.name;
      if (!listed) options.push_back(d);
    }
  }
  if (!options.empty()) {
    absl::StrAppend(&out, "\nOptions:\n", OptionLines(options));
  }
  return out;
}

absl::StatusOr<ParsedArgs> ParseArgs(const CommandSpec& spec,
                                     const std::vector<std::string>& words) {
  return ParseArgs(spec, absl::MakeConstSpan(words));
}

absl::StatusOr<ParsedArgs> ParseArgs(const CommandSpec& spec,
                                     absl::Span<const std::string> words) {
  const std::vector<std::string_view> views(words.begin(), words.end());
  ArgViews v;
  if (absl::Status s = ParseArgViews(spec, views, &v); !s.ok()) return s;
  ParsedArgs out;
  for (const ArgViews::Given& g : v.given) {
    const std::string name(g.option->name);
    if (g.option->arg.empty()) {
      ++out.flags[name];
    } else {
      out.values[name].emplace_back(g.value);
    }
  }
  out.args.assign(v.args.begin(), v.args.end());
  out.help = v.help;
  return out;
}

namespace {

// A path among the arguments while -s is not given, or "".
std::string_view PathGivenWithoutS(const ArgViews& a) {
  if (a.Has("-s")) return {};
  for (std::string_view arg : a.args) {
    if (!arg.empty() && arg[0] == '/') return arg;
  }
  return {};
}

absl::Status NeedOption(const ArgViews& a, std::string_view opt,
                        const CommandSpec& spec) {
  if (a.Has(opt)) return absl::OkStatus();
  std::string hint;
  if (opt == "-s") {
    if (std::string_view path = PathGivenWithoutS(a); !path.empty()) {
      hint = absl::StrCat(" (give the path \"", ShownWord(path), "\" with -s)");
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat("option ", A(opt), " is required", hint,
                   "; usage: ", A(spec.name), " ", A(spec.synopsis)));
}

}  // namespace

absl::Status ParseArgViews(const CommandSpec& spec,
                           absl::Span<const std::string_view> words,
                           ArgViews* out) {
  const auto find = [&](std::string_view name) -> const OptionSpec* {
    for (const auto& o : spec.options) {
      if (SameOptionName(o.name, name)) return &o;
    }
    if (TakesDryRun(spec)) {
      for (const auto& o : DryRunOptions()) {
        if (SameOptionName(o.name, name)) return &o;
      }
    }
    return nullptr;
  };
  bool only_args = false;
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string_view w = words[i];
    if (only_args || w.size() < 2 || w[0] != '-') {
      out->args.push_back(w);
      continue;
    }
    if (w == "--") {
      only_args = true;
      continue;
    }
    if (w == "--help") {
      out->help = true;
      continue;
    }
    std::string_view name = w;
    std::optional<std::string_view> inline_value;
    if (w.substr(0, 2) == "--") {
      size_t eq = w.find('=');
      if (eq != std::string_view::npos) {
        name = w.substr(0, eq);
        inline_value = w.substr(eq + 1);
      }
    } else if (w.size() > 2) {
      name = w.substr(0, 2);
      inline_value = w.substr(2);
    }
    const OptionSpec* o = find(name);
    if (o == nullptr) {
      std::vector<std::string_view> names = {"--help"};
      for (const auto& known : spec.options) names.push_back(known.name);
      return absl::InvalidArgumentError(
          absl::StrCat("unknown option \"", ShownWord(w), "\"",
                       libshare::DidYouMean(w.substr(0, w.find('=')), names)));
    }
    if (o->arg.empty()) {
      if (inline_value) {
        return absl::InvalidArgumentError(
            absl::StrCat("option \"", A(name), "\" takes no value"));
      }
      out->given.push_back({o, {}});
      continue;
    }
    if (!inline_value) {
      if (i + 1 >= words.size()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "option \"", A(name), "\" needs a value (", A(o->arg), ")"));
      }
      inline_value = words[++i];
    }
    if (!o->repeatable) {
      for (const ArgViews::Given& g : out->given) {
        if (g.option == o) {
          return absl::InvalidArgumentError(absl::StrCat(
              "option \"", A(o->name), "\" given twice (\"", ShownWord(g.value),
              "\" and \"", ShownWord(*inline_value), "\"); give it once"));
        }
      }
    }
    out->given.push_back({o, *inline_value});
  }
  if (out->help) return absl::OkStatus();
  const int n = static_cast<int>(out->args.size());
  if (n < spec.min_args || (spec.max_args >= 0 && n > spec.max_args)) {
    if (n > spec.max_args && spec.max_args >= 0) {
      // move-share /a g: the path without its -s.
      const bool takes_s = std::any_of(
          spec.options.begin(), spec.options.end(),
          [](const OptionSpec& o) { return o.name == "-s"; });
      if (takes_s && !PathGivenWithoutS(*out).empty()) {
        return NeedOption(*out, "-s", spec);
      }
      return absl::InvalidArgumentError(
          absl::StrCat("unexpected argument \"", A(out->args[spec.max_args]),
                       "\"; usage: ", A(spec.name), " ", A(spec.synopsis)));
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "missing argument; usage: ", A(spec.name), " ", A(spec.synopsis)));
  }
  return absl::OkStatus();
}

namespace {

// The path of -s, normalized, into *path.
absl::Status UserPath(std::string_view text, libshare::Text* path) {
  // A valid path is its own normal form (path.h): the usual path is then
  // taken as it is, without NormalizePath's search for "//" and copies
  // (half of what parsing a batch's add-share line cost).
  if (libshare::ValidatePath(text).ok()) {
    *path = text;
    return absl::OkStatus();
  }
  absl::StatusOr<std::string> p = libshare::NormalizePath(text);
  if (!p.ok()) return absl::FailedPreconditionError(p.status().message());
  *path = *std::move(p);
  return absl::OkStatus();
}

// The option a changing command cannot go without, or "".
std::string_view RequiredOption(std::string_view command) {
  if (command == "add-share" || command == "remove-share" ||
      command == "move-share") {
    return "-s";
  }
  return {};
}

// *to = the value of `opt` if given. *to is empty before: assigning ""
// would cost a call per field of every batch line.
void CopyOption(const ArgViews& a, std::string_view opt, libshare::Text* to) {
  if (std::string_view v = a.Get(opt); !v.empty()) *to = v;
}

// The one operation of a changing command other than enable and disable
// (its required option and group names checked), into *op, which is new.
absl::Status ParseOperation(const CommandSpec& spec, const ArgViews& a,
                            Operation* op) {
  const std::string_view name = spec.name;
  // An empty -o (think -o "$OPTS" with OPTS unset) would open a group to
  // every client, or silently mean "inherit" for a share: refused.
  if (a.Has("-o") && a.Get("-o").empty()) {
    const bool share = name == "add-share" || name == "set-share" ||
                       (name == "set" && a.Has("-s"));
    return absl::FailedPreconditionError(
        share ? "option -o is empty; leave -o out to inherit the group's "
                "options (unset -p all -s PATH GROUP drops a share's own)"
              : "option -o is empty, which would make the group's shares "
                "read-write to every client; write the access you mean: "
                "-o rw (every client, explicitly), -o ro, -o "
                "rw=@10.0.0.0/8");
  }
  if (name == "create") {
    op->type = Operation::Type::kCreateGroup;
    op->group = a.args[0];
    CopyOption(a, "-o", &op->options);
  } else if (name == "delete") {
    op->type = Operation::Type::kDeleteGroup;
    op->group = a.args[0];
    op->force = a.Has("-f");
  } else if (name == "add-share") {
    op->type = Operation::Type::kAddShare;
    op->group = a.args[0];
    CopyOption(a, "-o", &op->options);
    CopyOption(a, "-d", &op->description);
    CopyOption(a, "-r", &op->resource);
  } else if (name == "remove-share") {
    op->type = Operation::Type::kRemoveShare;
    if (!a.args.empty()) op->group = a.args[0];
  } else if (name == "move-share") {
    op->type = Operation::Type::kMoveShare;
    op->group = a.args[0];
  } else if (name == "set") {
    if (absl::Status s = NeedOption(a, "-o", spec); !s.ok()) return s;
    op->type = Operation::Type::kSetOptions;
    op->group = a.args[0];
    CopyOption(a, "-o", &op->options);
  } else if (name == "set-share") {
    if (absl::Status s = NeedOption(a, "-s", spec); !s.ok()) return s;
    op->type = Operation::Type::kModifyShare;
    if (!a.args.empty()) op->group = a.args[0];
    op->set_options = a.Has("-o");
    op->set_description = a.Has("-d");
    op->set_resource = a.Has("-r");
    if (!op->set_options && !op->set_description && !op->set_resource) {
      return absl::InvalidArgumentError(
          "give at least one of -o, -d, -r; usage: set-share "
          "[-o OPTS] [-d DESC] [-r RESOURCE] -s PATH [GROUP]");
    }
    CopyOption(a, "-o", &op->options);
    CopyOption(a, "-d", &op->description);
    CopyOption(a, "-r", &op->resource);
  } else if (name == "unset") {
    if (absl::Status s = NeedOption(a, "-p", spec); !s.ok()) return s;
    op->type = Operation::Type::kUnsetOption;
    op->group = a.args[0];
    CopyOption(a, "-p", &op->options);
    if (op->options == "all" && !a.Has("-s")) {
      return absl::FailedPreconditionError(
          "-p all needs -s PATH (a group's options are changed with set -o)");
    }
  }
  if (a.Has("-s")) return UserPath(a.Get("-s"), &op->path);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ChangeCommand> ParseChangeCommand(
    const std::vector<std::string>& words) {
  const std::vector<std::string_view> views(words.begin(), words.end());
  ChangeCommand cmd;
  absl::StatusOr<ChangeMode> mode = AppendChangeCommand(views, &cmd.ops);
  if (!mode.ok()) return mode.status();
  static_cast<ChangeMode&>(cmd) = *mode;
  cmd.name = words[0];
  return cmd;
}

absl::StatusOr<ChangeMode> AppendChangeCommand(
    absl::Span<const std::string_view> words, std::vector<Operation>* ops) {
  if (words.empty()) return absl::InvalidArgumentError("empty command");
  const CommandSpec* spec = FindCommand(words[0]);
  if (spec == nullptr) {
    std::vector<std::string_view> names;
    for (const auto& c : Commands()) {
      if (c.changes) names.push_back(c.name);
    }
    return absl::InvalidArgumentError(
        absl::StrCat("unknown command \"", ShownWord(words[0]), "\"",
                     libshare::DidYouMean(words[0], names)));
  }
  if (!spec->changes) {
    return absl::InvalidArgumentError(
        "not a changing command (a batch holds create, delete, enable, "
        "disable, add-share, remove-share, move-share, set, set-share, "
        "unset)");
  }
  ArgViews a;
  if (absl::Status s = ParseArgViews(*spec, words.subspan(1), &a); !s.ok()) {
    return s;
  }
  if (a.help) return absl::InvalidArgumentError("--help in a change");

  // A missing required option is a usage error even when a positional
  // argument is there (remove-share /export/a: the path without -s).
  if (std::string_view required = RequiredOption(spec->name);
      !required.empty()) {
    if (absl::Status s = NeedOption(a, required, *spec); !s.ok()) return s;
  }
  ChangeMode mode;
  mode.dry_run = a.DryRun();
  // The daemon refuses bad group names too; refusing them here says so
  // before connecting, and keeps "--help" or "" out of batch files.
  const bool optional_group =
      spec->name == "remove-share" || spec->name == "set-share";
  for (std::string_view group : a.args) {
    if (optional_group && group.empty()) continue;
    if (absl::Status s = libshare::ValidateGroupName(group); !s.ok()) {
      // A refusal (exit 1), as the daemon's, not a usage error.
      return absl::FailedPreconditionError(s.message());
    }
  }
  const std::string_view name = spec->name;
  if (name == "enable" || name == "disable") {
    const Operation::Type t = name == "enable" ? Operation::Type::kEnableGroup
                                               : Operation::Type::kDisableGroup;
    if (a.Has("-a") == !a.args.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "give -a or group names, not both or neither; usage: ", A(name), " ",
          A(spec->synopsis)));
    }
    if (a.Has("-a")) {
      mode.all = true;
      mode.all_type = t;
      return mode;
    }
    for (std::string_view g : a.args) {
      Operation& o = ops->emplace_back();
      o.type = t;
      o.group = g;
    }
    return mode;
  }
  // Made in place, and taken back if refused.
  if (absl::Status s = ParseOperation(*spec, a, &ops->emplace_back());
      !s.ok()) {
    ops->pop_back();
    return s;
  }
  return mode;
}

}  // namespace sharectl
