#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
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

// The folder of `path` ("." for a bare name).
std::string FolderOf(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// Opens the log file without waiting on or writing through a name someone
// else planted (issue 48): no link followed, non-blocking (a FIFO with no
// reader fails at once, one with a reader is refused below), and kept only
// if it is a regular file with one link, owned by the daemon's user and
// writable by nobody else; its folder, as the pid file's, must be owned by
// that user or root and not writable by others unless sticky.
absl::StatusOr<int> OpenLogFile(const std::string& path) {
  auto refuse = [&](const std::string& why) {
    return absl::FailedPreconditionError(
        absl::StrCat("--log-file ", path, ": ", why));
  };
  const uid_t me = ::geteuid();
  const std::string folder = FolderOf(path);
  struct stat ds {};
  if (::stat(folder.c_str(), &ds) == 0) {
    if (ds.st_uid != me && ds.st_uid != 0) {
      return refuse(absl::StrCat("its folder ", folder, " is owned by uid ",
                                 ds.st_uid, ", not uid ", me));
    }
    if ((ds.st_mode & S_IWOTH) && !(ds.st_mode & S_ISVTX)) {
      return refuse(absl::StrCat("its folder ", folder,
                                 " is writable by others (and not sticky)"));
    }
  }
  const int fd = ::open(path.c_str(),
                        O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW |
                            O_NONBLOCK | O_NOCTTY,
                        0640);
  if (fd < 0) {
    if (errno == ELOOP) return refuse("is a symbolic link");
    if (errno == ENXIO) return refuse("is a FIFO (not a regular file)");
    return refuse(::strerror(errno));
  }
  struct stat st {};
  std::string why;
  if (::fstat(fd, &st) != 0) {
    why = ::strerror(errno);
  } else if (!S_ISREG(st.st_mode)) {
    why = "is not a regular file";
  } else if (st.st_uid != me) {
    why = absl::StrCat("is owned by uid ", st.st_uid, ", not uid ", me);
  } else if (st.st_nlink != 1) {
    why = absl::StrCat("has ", st.st_nlink, " links (a hard link elsewhere)");
  } else if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    why = absl::StrFormat("is writable by its group or others (mode %04o)",
                          st.st_mode & 07777);
  }
  if (!why.empty()) {
    ::close(fd);
    return refuse(why);
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
