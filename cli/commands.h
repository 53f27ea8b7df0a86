// The sharectl command table and the parsing of command words into
// libshare operations. One table feeds the parser, `sharectl --help`,
// `sharectl COMMAND --help` and (by hand, checked by a test) sharectl.8.
//
// The same parser reads a command line and a line of a batch file, so a
// batch line means exactly what it would mean after `sharectl`.
//
// Pure functions and constant data; thread-safe.
#ifndef SHARECTL_COMMANDS_H_
#define SHARECTL_COMMANDS_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "libshare/batch.h"

namespace sharectl {

struct OptionSpec {
  std::string_view name;  // "-o" or "--exports"
  std::string_view arg;   // "" for a flag, else the metavariable ("OPTS")
  std::string_view help;
};

struct CommandSpec {
  std::string_view name;  // "add-share"
  std::string_view
      synopsis;  // "[-o OPTS] [-d DESC] [-r RESOURCE] -s PATH GROUP"
  std::string_view summary;  // one line
  bool changes = false;      // a change, allowed in a batch file
  std::vector<OptionSpec> options;
  int min_args = 0;  // positional arguments
  int max_args = 0;  // -1: unbounded
};

// Every command, in the order --help lists them.
const std::vector<CommandSpec>& Commands();
const CommandSpec* FindCommand(std::string_view name);
// Options that come before the command.
const std::vector<OptionSpec>& GlobalOptions();
// Whether the command takes -n/--dry-run: every changing command, batch
// and import. The options themselves (DryRunOptions) are not in each
// command's table: ParseArgs and the help add them.
bool TakesDryRun(const CommandSpec& spec);
const std::vector<OptionSpec>& DryRunOptions();

// `sharectl --help` and `sharectl COMMAND --help`.
std::string GlobalHelp();
std::string CommandHelp(const CommandSpec& spec);

// Options and positional arguments of one command.
struct ParsedArgs {
  // "-o" -> {"rw"}; an option given twice keeps both values, in order.
  std::map<std::string, std::vector<std::string>, std::less<>> values;
  std::map<std::string, int, std::less<>> flags;  // "-a" -> count
  std::vector<std::string> args;
  bool help = false;  // --help was given

  // -n or --dry-run was given.
  bool DryRun() const { return Has("-n") || Has("--dry-run"); }
  bool Has(std::string_view opt) const {
    return values.count(opt) != 0 || flags.count(opt) != 0;
  }
  std::string Get(std::string_view opt) const {
    auto it = values.find(opt);
    return it == values.end() ? std::string() : it->second.back();
  }
};

// Parses words (after the command name) against spec. Accepts "-o V",
// "-oV", "--long V", "--long=V" and "--" before positional arguments.
// Errors are usage errors (kInvalidArgument) and name the culprit:
//   unknown option "-x"
//   option "-o" needs a value
[[nodiscard]] absl::StatusOr<ParsedArgs> ParseArgs(
    const CommandSpec& spec, const std::vector<std::string>& words);
[[nodiscard]] absl::StatusOr<ParsedArgs> ParseArgs(
    const CommandSpec& spec, absl::Span<const std::string> words);

// A changing command turned into operations. enable/disable -a stand for
// every group, which only the daemon knows: `all` is set and ops is empty.
struct ChangeCommand {
  std::string name;
  std::vector<libshare::Operation> ops;
  bool all = false;
  libshare::Operation::Type all_type = libshare::Operation::Type::kEnableGroup;
  bool dry_run = false;  // -n / --dry-run
};

// words[0] is the command name. Errors: kInvalidArgument for a usage error
// (unknown command or option, missing argument), kFailedPrecondition for a
// refused value (a path that NormalizePath rejects). Messages do not repeat
// the command name; callers prefix it.
[[nodiscard]] absl::StatusOr<ChangeCommand> ParseChangeCommand(
    const std::vector<std::string>& words);

// The command words that ParseChangeCommand turns back into `op`
// (libshare's, shared with the daemon's audit log).
using libshare::OperationWords;

}  // namespace sharectl

#endif  // SHARECTL_COMMANDS_H_
