#include "log.h"

#include <syslog.h>
#include <unistd.h>

#include <atomic>
#include <string>

namespace sharemgrd {
namespace {
std::atomic<LogTarget> target{LogTarget::kStderr};
}

void SetLogTarget(LogTarget t) {
  if (t == LogTarget::kSyslog) ::openlog("sharemgrd", LOG_PID, LOG_DAEMON);
  target.store(t);
}

void LogLine(absl::string_view line) {
  if (target.load() == LogTarget::kSyslog) {
    ::syslog(LOG_INFO, "%.*s", static_cast<int>(line.size()), line.data());
    return;
  }
  std::string s = "sharemgrd: ";
  s.append(line.data(), line.size());
  s.push_back('\n');
  // One write per line so lines from several threads do not interleave.
  const char* p = s.data();
  size_t n = s.size();
  while (n > 0) {
    ssize_t w = ::write(STDERR_FILENO, p, n);
    if (w <= 0) return;
    p += w;
    n -= static_cast<size_t>(w);
  }
}

}  // namespace sharemgrd
