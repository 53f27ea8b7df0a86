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

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "libshare/batch.h"

namespace sharectl {

struct OptionSpec {
  std::string_view name;  // "-o" or "--exports"
  std::string_view arg;   // "" for a flag, else the metavariable ("OPTS")
  std::string_view help;
  // May be given more than once (each value counts). Any other option
  // that takes a value is refused the second time, rather than the last
  // value silently winning.
  bool repeatable = false;
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

// Option names are a few characters: compared inline, not by a call to
// memcmp (a batch line looks its options up a dozen times; with memcmp
// calls that was a sixth of parsing it).
inline bool SameOptionName(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

// ParsedArgs as views of the words it was parsed from, which must outlive
// it: a batch line's options are read without copying a word.
struct ArgViews {
  struct Given {
    const OptionSpec* option;  // the spec's entry (or DryRunOptions()'s)
    std::string_view value;    // "" for a flag
  };
  absl::InlinedVector<Given, 4> given;  // every option, in order
  absl::InlinedVector<std::string_view, 2> args;
  bool help = false;

  bool DryRun() const { return Has("-n") || Has("--dry-run"); }
  bool Has(std::string_view opt) const { return Find(opt) != nullptr; }
  // The last value given for opt, or "".
  std::string_view Get(std::string_view opt) const {
    const Given* g = Find(opt);
    return g == nullptr ? std::string_view() : g->value;
  }
  // The last time opt was given, or null.
  const Given* Find(std::string_view opt) const {
    for (auto it = given.rbegin(); it != given.rend(); ++it) {
      if (SameOptionName(it->option->name, opt)) return &*it;
    }
    return nullptr;
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
// The same parse into views: ParseArgs copies its result.
[[nodiscard]] absl::Status ParseArgViews(
    const CommandSpec& spec, absl::Span<const std::string_view> words,
    ArgViews* out);

// What a changing command means besides its operations. enable/disable -a
// stand for every group, which only the daemon knows: `all` is set and the
// command makes no operation.
struct ChangeMode {
  bool all = false;
  libshare::Operation::Type all_type = libshare::Operation::Type::kEnableGroup;
  bool dry_run = false;  // -n / --dry-run
};

// A changing command turned into operations.
struct ChangeCommand : ChangeMode {
  std::string name;
  std::vector<libshare::Operation> ops;
};

// words[0] is the command name. Errors: kInvalidArgument for a usage error
// (unknown command or option, missing argument), kFailedPrecondition for a
// refused value (a path that NormalizePath rejects). Messages do not repeat
// the command name; callers prefix it.
[[nodiscard]] absl::StatusOr<ChangeCommand> ParseChangeCommand(
    const std::vector<std::string>& words);

// ParseChangeCommand for the many lines of a batch: the words are views,
// and the command's operations are appended to *ops (none on error), so
// that each line goes straight into the batch without a copy.
[[nodiscard]] absl::StatusOr<ChangeMode> AppendChangeCommand(
    absl::Span<const std::string_view> words,
    std::vector<libshare::Operation>* ops);

// The command words that ParseChangeCommand turns back into `op`
// (libshare's, shared with the daemon's audit log).
using libshare::OperationWords;

}  // namespace sharectl

#endif  // SHARECTL_COMMANDS_H_
