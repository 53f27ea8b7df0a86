#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"

namespace sharemgrd {
namespace {
std::atomic<LogTarget> target{LogTarget::kStderr};

// The log file: its name and descriptor, swapped whole on reopen.
struct LogFile {
  absl::Mutex mu;
  std::string path ABSL_GUARDED_BY(mu);
  int fd ABSL_GUARDED_BY(mu) = -1;
};
LogFile& File() {
  static auto* f = new LogFile;
  return *f;
}

absl::StatusOr<int> OpenLogFile(const std::string& path) {
  int fd = ::open(path.c_str(),
                  O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0640);
  if (fd < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("--log-file ", path, ": ", ::strerror(errno)));
  }
  return fd;
}

void WriteAll(int fd, const std::string& s) {
  const char* p = s.data();
  size_t n = s.size();
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w <= 0) return;
    p += w;
    n -= static_cast<size_t>(w);
  }
}
}  // namespace

absl::Status SetLogFile(const std::string& path) {
  int fd = -1;
  if (!path.empty()) {
    absl::StatusOr<int> opened = OpenLogFile(path);
    if (!opened.ok()) return opened.status();
    fd = *opened;
  }
  LogFile& f = File();
  absl::MutexLock l(&f.mu);
  if (f.fd >= 0) ::close(f.fd);
  f.fd = fd;
  f.path = path;
  return absl::OkStatus();
}

absl::Status ReopenLogFile() {
  LogFile& f = File();
  absl::MutexLock l(&f.mu);
  if (f.path.empty()) return absl::OkStatus();
  absl::StatusOr<int> opened = OpenLogFile(f.path);
  if (!opened.ok()) return opened.status();
  if (f.fd >= 0) ::close(f.fd);
  f.fd = *opened;
  return absl::OkStatus();
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
  {
    LogFile& f = File();
    absl::MutexLock l(&f.mu);
    if (f.fd >= 0) {
      // One write per line (O_APPEND): lines of several threads, or of a
      // daemon and logrotate's copy, do not interleave.
      WriteAll(f.fd,
               absl::StrCat(absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ",
                                             absl::Now(), absl::UTCTimeZone()),
                            " sharemgrd[", ::getpid(),
                            "]: ", absl::string_view(s).substr(prefix), "\n"));
    }
  }
  switch (target.load()) {
    case LogTarget::kSyslog:
      ::syslog(LOG_INFO, "%s", s.c_str() + prefix);
      return;
    case LogTarget::kFileOnly:
      return;
    case LogTarget::kStderr:
      break;
  }
  s.push_back('\n');
  // One write per line so lines from several threads do not interleave.
  WriteAll(STDERR_FILENO, s);
}

namespace {

std::string Escape(absl::string_view text, std::size_t max_bytes,
                   bool backslashes) {
  std::string out;
  absl::string_view kept = text.substr(0, max_bytes);
  out.reserve(kept.size());
  for (char c : kept) {
    auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '\\':
        out += backslashes ? "\\\\" : "\\";
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

}  // namespace

std::string EscapeForLog(absl::string_view text, std::size_t max_bytes) {
  return Escape(text, max_bytes, /*backslashes=*/true);
}

std::string EscapeReasonForLog(absl::string_view text, std::size_t max_bytes) {
  return Escape(text, max_bytes, /*backslashes=*/false);
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
