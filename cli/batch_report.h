// What sharectl says about a batch (batch, import, a changing command):
// the bad lines, sorted by FILE:LINE with many of one kind collapsed, and
// one summary line. Also the text of `sharectl changes`. Pure functions;
// thread-safe.
#ifndef SHARECTL_BATCH_REPORT_H_
#define SHARECTL_BATCH_REPORT_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "libshare/client.h"

namespace sharectl {

// One bad line: where, the command, why.
struct Problem {
  std::string origin;   // "FILE:LINE", "/etc/exports:7", or "sharectl"
  std::string command;  // "add-share"; "" when the origin says enough
  std::string message;
  std::optional<std::size_t> index = std::nullopt;  // the operation's, if sent
};

// Lines of one kind of error shown before the rest are counted:
//   FILE:LINE: ... and N more lines with this kind of error: ...
inline constexpr std::size_t kErrorsShownPerKind = 5;

// Sorts by file, then line number (numerically), keeping the order of
// problems on one line; origins without ":LINE" come first.
void SortProblems(std::vector<Problem>* problems);

// The kind of an error message: the message with what varies from line to
// line set aside, so that 15,000 missing folders are one kind. Absolute
// paths become PATH (a message's leading path runs to its first ": "),
// quoted text "...", the name after "group " GROUP, numbers N:
//   "/export/home/u1: no such directory" -> "PATH: no such directory"
//   "group hmoes does not exist" -> "group GROUP does not exist"
std::string ErrorKind(std::string_view message);

// The stderr text of `problems` (already sorted): one line each,
// "ORIGIN: COMMAND: MESSAGE", in order, except that after
// `shown_per_kind` lines of one kind (the same command and ErrorKind) the
// others are one line, where the next would be:
//   "ORIGIN: ... and N more lines with the same error: COMMAND: MESSAGE"
// when their messages are all the same, else
//   "... with this kind of error: COMMAND: KIND"
// followed by "; OPTION lists every line" when `all_option` is given.
// A kind with one line more than `shown_per_kind` is shown whole;
// `shown_per_kind` 0 shows every line. `kind` names them in the count
// line ("error", or "warning" for warnings).
std::string FormatProblems(const std::vector<Problem>& problems,
                           std::string_view kind = "error",
                           std::size_t shown_per_kind = kErrorsShownPerKind,
                           std::string_view all_option = "");

// The counts of one batch run, for its summary line.
struct BatchSummary {
  std::string label;  // "batch /root/homes.batch", "import", "set"
  bool dry_run = false;
  bool committed = false;      // applied (never for a dry run)
  std::size_t lines = 0;       // command lines (batch) or entries (import)
  std::size_t operations = 0;  // operations applied or that would apply
  std::size_t refused_lines = 0;
  std::size_t errors = 0;
  double ms = 0;
  uint64_t generation = 0;
  std::string commit_error;
};

// One line, e.g.
//   sharectl: batch b: 15001 operations applied in 812 ms: 15001 lines,
//     0 refused, generation 7
//   sharectl: batch b: refused in 812 ms, nothing applied: 15001 lines,
//     14993 refused, 14993 errors
//   sharectl: batch b: dry run passed in 52 ms, nothing changed: 15001
//     lines, 15001 operations would apply
std::string FormatSummary(const BatchSummary& s);

// Distinct origins among problems: the number of refused lines.
std::size_t RefusedLines(const std::vector<Problem>& problems);

// How much of a change list `changes` shows.
struct ChangesView {
  // The most lines listed (batch lines and share lines), 0 for all; what
  // is left out is counted on one last line (text) or in "more" (JSON).
  std::size_t limit = 0;
  bool summary = false;  // one line per batch, without its shares
};
// `changes`' default limit of text lines (--limit); JSON has none unless
// --limit is given.
inline constexpr std::size_t kDefaultChangesLimit = 1000;

// `sharectl changes` as text: per batch a header line (generation, time in
// UTC as ISO 8601, uid, pid, origin, what it did) and, unless
// `view.summary`, one line per share it touched; with `view.summary` the
// header ends with the shares' counts per change ("; shares: 3 added").
// Past `view.limit` lines, a batch's other shares are counted on one line
// and a last line says what was left out and how to see it.
std::string FormatChanges(const libshare::ChangeList& changes,
                          const ChangesView& view = {});
// {"generation", "oldest", "batches": [{"generation", "time" (as the
// text), "time_unix", "uid", "pid", "origin", "operations", "summary",
// "share_counts": {"added", "removed", "changed"}, "shares" (null with
// view.summary), "shares_omitted"}], "more": null or {"batches",
// "shares"}}: `view.limit` counts as in the text.
std::string FormatChangesJson(const libshare::ChangeList& changes,
                              const ChangesView& view = {});

}  // namespace sharectl

#endif  // SHARECTL_BATCH_REPORT_H_
