#include "log.h"

#include <syslog.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace sharemgrd {
namespace {
std::atomic<LogTarget> target{LogTarget::kStderr};
}

void SetLogTarget(LogTarget t) {
  if (t == LogTarget::kSyslog) ::openlog("sharemgrd", LOG_PID, LOG_DAEMON);
  target.store(t);
}

void LogLine(absl::string_view line) {
  std::string s = "sharemgrd: ";
  const std::size_t prefix = s.size();
  for (char c : line) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      absl::StrAppendFormat(&s, "\\x%02x", u);
    } else {
      s.push_back(c);
    }
  }
  if (target.load() == LogTarget::kSyslog) {
    ::syslog(LOG_INFO, "%s", s.c_str() + prefix);
    return;
  }
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

std::string EscapeForLog(absl::string_view text, std::size_t max_bytes) {
  std::string out;
  absl::string_view kept = text.substr(0, max_bytes);
  out.reserve(kept.size());
  for (char c : kept) {
    auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (u < 0x20 || u >= 0x7f) {
          absl::StrAppendFormat(&out, "\\x%02x", u);
        } else {
          out.push_back(c);
        }
    }
  }
  if (kept.size() < text.size()) {
    absl::StrAppend(&out, "...(", text.size(), " bytes)");
  }
  return out;
}

void LogRateLimiter::Log(absl::string_view line, absl::Time now) {
  const int64_t second = absl::ToUnixSeconds(now);
  int64_t report = 0;
  {
    absl::MutexLock l(&mu_);
    if (second != second_) {
      second_ = second;
      lines_this_second_ = 0;
    }
    if (lines_this_second_ >= per_second_) {
      ++suppressed_;
      return;
    }
    ++lines_this_second_;
    report = suppressed_;
    suppressed_ = 0;
  }
  if (report > 0) {
    LogLine(absl::StrCat("suppressed ", report, " ", what_, " log lines"));
  }
  LogLine(line);
}

int64_t LogRateLimiter::suppressed() const {
  absl::MutexLock l(&mu_);
  return suppressed_;
}

}  // namespace sharemgrd
