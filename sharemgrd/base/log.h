// One-line log messages of the daemon: to stderr (foreground) or syslog
// (detached), and to a log file when one is set (--log-file; detached,
// the file replaces syslog). Thread-safe: each line is written with one
// call.
#ifndef SHAREMGRD_LOG_H_
#define SHAREMGRD_LOG_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace sharemgrd {

enum class LogTarget {
  kStderr,
  kSyslog,
  kFileOnly,  // only the log file (detached with --log-file)
};
void SetLogTarget(LogTarget target);

// Also writes every line to `path` (appended, created 0640), each line with
// a UTC timestamp and the pid:
//   2026-12-01T07:04:42.123456Z sharemgrd[4242]: serving ...
// Error if it cannot be opened, or if what is at the name is not the
// daemon's own: a symbolic link, a FIFO or anything not a regular file, a
// file with another owner, more than one link, or group or other write;
// or a folder another user owns, or others may write without the sticky
// bit. Never waits on what is at the name. An empty path stops writing to
// a file.
[[nodiscard]] absl::Status SetLogFile(const std::string& path);
// Opens the log file again by its name (after logrotate moved it; SIGHUP).
// On failure keeps the old descriptor and returns why.
[[nodiscard]] absl::Status ReopenLogFile();
// Writes "sharemgrd: <line>". Control characters still in `line` are
// written as \xNN, so no input can start a forged log line; text from
// clients should go through EscapeForLog first.
void LogLine(absl::string_view line);

// `text` (from a client: a path, a name) made safe for one log line:
// printable ASCII is kept, a backslash becomes "\\", \n \r \t are
// written so, any other byte as \xNN. At most max_bytes bytes of `text`
// are kept; a longer text ends in "...(N bytes)".
std::string EscapeForLog(absl::string_view text, std::size_t max_bytes = 256);
// The same for a message this program made, which may quote client text
// already escaped (a path as "/x\\ny"): control bytes are escaped, a
// backslash is kept as it is rather than doubled.
std::string EscapeReasonForLog(absl::string_view text,
                               std::size_t max_bytes = 512);

// Lets at most per_second lines of one kind through each second, so that a
// client repeating a refused call cannot fill the log. Thread-safe.
class LogRateLimiter {
 public:
  // `what` names the lines in the summary, e.g. "refused-mount".
  LogRateLimiter(std::string what, int per_second)
      : what_(std::move(what)), per_second_(per_second) {}

  // Logs `line` unless this second's quota is spent. The first line let
  // through after some were dropped is preceded by
  // "suppressed M <what> log lines".
  void Log(absl::string_view line, absl::Time now = absl::Now());

  // Lines dropped since the last summary (for tests).
  int64_t suppressed() const;

 private:
  const std::string what_;
  const int per_second_;
  mutable absl::Mutex mu_;
  int64_t second_ ABSL_GUARDED_BY(mu_) = 0;
  int lines_this_second_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t suppressed_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace sharemgrd

#endif  // SHAREMGRD_LOG_H_
