// One-line log messages of the daemon: to stderr (foreground) or syslog
// (detached). Thread-safe: each line is written with one call.
#ifndef SHAREMGRD_LOG_H_
#define SHAREMGRD_LOG_H_

#include "absl/strings/string_view.h"

namespace sharemgrd {

enum class LogTarget { kStderr, kSyslog };
void SetLogTarget(LogTarget target);
// Writes "sharemgrd: <line>".
void LogLine(absl::string_view line);

}  // namespace sharemgrd

#endif  // SHAREMGRD_LOG_H_
