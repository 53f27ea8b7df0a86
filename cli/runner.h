// sharectl's Runner: one run of one command (everything Run() does once
// the global options are read), shared by the files that implement its
// commands: sharectl.cc (dispatch, connection, sending a batch and the
// other commands), batch_command.cc, import_command.cc and json_report.cc
// (the --json documents). Private to sharectl_core. Not thread-safe: one
// Runner per command run.
#ifndef SHARECTL_RUNNER_H_
#define SHARECTL_RUNNER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "batch_report.h"
#include "commands.h"
#include "libshare/batch.h"
#include "libshare/client.h"
#include "libshare/import.h"
#include "sharectl.h"

namespace sharectl {

// A warning that did not stop the command (an import option dropped by
// --skip-unsupported): where and why.
struct Warning {
  std::string origin;
  std::string message;
};

// The origin of operation i of a batch being sent, asked only for an i
// below the number of its operations.
using OriginOf = absl::FunctionRef<std::string(std::size_t)>;

// The document printed with --json for a usage error or a failed command
// that is not a change (json_report.cc): {"error": {kind, command,
// message}}, with a newline. `command` may be empty.
std::string ErrorJson(std::string_view kind, std::string_view command,
                      std::string_view message);

class JsonWriter;
// The "error" member of every failure's document (json_report.cc): kind
// is "usage" (exit 2), "refused" or "permission" (exit 1), "unreachable"
// (exit 3); an empty `command` is written as null.
void WriteErrorMember(std::string_view kind, std::string_view command,
                      std::string_view message, JsonWriter* w);

// How a failed call to the daemon is reported: exit code, the error's
// kind and its one-line message (naming the socket when unreachable).
struct CallFailure {
  int code = kExitRefused;
  std::string kind;
  std::string message;
};
CallFailure ClassifyCallFailure(const absl::Status& s,
                                const std::string& socket);

// What a changing command, batch or import did, for its --json document.
struct ChangeOutcome {
  bool ok = false;
  bool dry_run = false;  // asked for (-n)
  uint64_t applied = 0;
  // A dry run the daemon checked: the operations that would apply (0 when
  // refused). Unset (null) otherwise.
  std::optional<uint64_t> would_apply;
  uint64_t generation = 0;  // 0: the daemon was not asked (null)
  std::string commit_error;
  // When !ok: the error's kind and message ("" for "N problems, nothing
  // applied", or the commit error).
  std::string error_kind = "refused";
  std::string error_message;
};

// One run of one command: its streams, socket and output mode.
class Runner {
 public:
  Runner(const Environment& env, std::string socket, bool json)
      : env_(env), socket_(std::move(socket)), json_(json) {}

  int Dispatch(const CommandSpec& spec, const std::vector<std::string>& words);

 private:
  std::ostream& out() { return *env_.out; }
  std::ostream& err() { return *env_.err; }

  // Prints "sharectl: CMD: MESSAGE" on stderr and, with --json, the error
  // document on stdout; returns the exit code.
  int Fail(int code, std::string_view kind, std::string_view cmd,
           std::string_view message);
  int Usage(std::string_view cmd, absl::string_view message) {
    return Fail(kExitUsage, "usage", cmd, {message.data(), message.size()});
  }
  int Refused(std::string_view cmd, absl::string_view message) {
    return Fail(kExitRefused, "refused", cmd, {message.data(), message.size()});
  }
  // Several refusals: one line each on stderr, one error document.
  int RefusedAll(std::string_view cmd, const std::vector<std::string>& what);
  // Maps a client call's failure to a message and an exit code.
  int CallFailed(std::string_view cmd, const absl::Status& s);
  // Says to the daemon that a big batch follows (PREPARE_BATCH), before
  // `file` is read and parsed: sharemgrd before the batch arena made the
  // batch's memory ready meanwhile (this one answers and changes nothing). On a connection of its own, closed at once: the batch's
  // own is opened when it is sent, as before (a PREPARE that failed, or a
  // long parse, cannot leave it broken or idle). Quiet: a daemon that
  // cannot be reached or refuses is told nothing, and the batch then
  // fails or goes as it would have.
  void AnnounceBatch(const std::string& file);

  // Connects once; on failure prints why and sets *rc.
  libshare::Client* Connection(std::string_view cmd, int* rc);
  // Connects once; on failure returns why, printing nothing.
  absl::StatusOr<libshare::Client*> Connect();
  // "sharectl: CMD: MESSAGE" on stderr only (the document comes later).
  void SayFailure(std::string_view cmd, std::string_view message);

  // One line per problem on stderr, and with --json the same as the
  // document Apply() prints for a refused batch.
  void ReportProblems(const std::vector<Problem>& problems);
  // FormatProblems as this command shows them: every line with
  // --all-errors, else kErrorsShownPerKind of each kind and a count that
  // names --all-errors when the command takes it.
  std::string ProblemText(const std::vector<Problem>& problems,
                          std::string_view kind = "error") const;

  // The document a changing command prints with --json, whether the batch
  // was refused before sending (problems without index), by the daemon,
  // or committed, and also for a failure of the command itself (usage,
  // permission, an unreachable daemon): it has "ok" and "errors" always,
  // and "error" exactly when the command fails.
  // With import --dry-run --json it also holds the batch text ("batch").
  std::string ChangeJson(const ChangeOutcome& outcome,
                         const std::vector<Problem>& problems) const;

  int RunChange(const CommandSpec& spec, const std::vector<std::string>& words);
  // Warnings and notes on stderr after one committed change: options that
  // open to every client; for a group's `set`, the shares that keep their
  // own value of a changed property.
  void ReportChange(std::string_view cmd, const libshare::Operation& op,
                    const std::optional<std::string>& old_group_options);
  // After a dry run of `delete GROUP` passed: how many shares it would
  // remove with the group (the daemon's count; nothing if it cannot say).
  void ReportDeleteDryRun(const std::string& group);
  int RunList(const ParsedArgs& a);
  int RunShow(const ParsedArgs& a);
  int RunShowShares(const ParsedArgs& a);
  int RunDump(const ParsedArgs& a);
  int RunShare();
  int RunCheck(const ParsedArgs& a);
  int RunStats();
  int RunMounts();
  int RunCacheFlush(const ParsedArgs& a);
  int RunRerecord(const ParsedArgs& a);
  int RunBatch(const ParsedArgs& a);
  int RunImport(const ParsedArgs& a);
  int RunChanges(const ParsedArgs& a);

  // The steps of RunImport (import_command.cc).
  //
  // The problems of `plan` that stop the import. Those --skip-unsupported
  // (`skip`) drops, and the plan's warnings, are said on stderr and kept
  // for the JSON document instead.
  std::vector<Problem> ImportStoppingProblems(const libshare::ImportPlan& plan,
                                              bool skip);
  // Whether the daemon has `group` (*group_exists), keeping the
  // connection for the batch. A dry run goes on without a daemon:
  // *reachable is then false. Returns kExitOk to go on, else the exit
  // code of a refusal already reported (with the `stopping` problems).
  int LookUpImportGroup(const std::string& group, bool dry_run,
                        std::vector<Problem>* stopping, bool* group_exists,
                        bool* reachable);
  // A dry run that no daemon checked: the bad entries and a note on
  // stderr, and the document with --json. Returns the exit code.
  int EndUncheckedImport(std::vector<Problem> stopping);

  // Sends ops as one batch. origin_of(i) prefixes operation i's errors
  // ("FILE:12" for a batch line, "/etc/exports:3", or "sharectl"); it is
  // asked only for the operations reported.
  // `problems` are bad lines found before sending: the other lines are
  // then sent as a dry run, so that every bad line is reported in one run
  // (sorted by FILE:LINE) and nothing is committed. With `summary`, one
  // summary line ends the report (label and lines set by the caller).
  int Apply(std::string_view cmd, libshare::Batch batch, OriginOf origin_of,
            bool progress, std::vector<Problem> problems = {},
            BatchSummary* summary = nullptr);
  // Group names the daemon knows, for enable -a and import.
  absl::StatusOr<std::vector<std::string>> GroupNames(std::string_view cmd,
                                                      int* rc);

  const Environment& env_;
  const std::string socket_;
  const bool json_;
  std::unique_ptr<libshare::Client> client_;
  // import --dry-run --json: the batch text, put in the one document.
  std::optional<std::string> json_batch_text_;
  std::string command_;  // the command being run, for error documents
  // The command takes -n (a change, batch, import): its failures print
  // ChangeJson's document, with dry_run_ as asked.
  bool change_document_ = false;
  bool dry_run_ = false;
  bool takes_all_errors_ = false;  // batch, import
  bool all_errors_ = false;        // --all-errors was given
  std::string batch_file_;         // batch's FILE ("-": standard input)
  std::vector<Warning> warnings_;
  // Warnings about the operations of the batch being applied (options
  // open to every client), said by Apply once it is committed or passes
  // as a dry run.
  std::vector<Problem> batch_warnings_;
};

}  // namespace sharectl

#endif  // SHARECTL_RUNNER_H_
