// sharemgrd: parse the command line, detach unless --foreground, start the
// daemon, wait for signals, stop. See sharemgrd(8).
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "config.h"
#include "daemon.h"
#include "libshare/files.h"
#include "log.h"

namespace {

constexpr char kVersion[] = "sharemgrd 0.1.0";

// Says why the start failed: on standard error (the terminal, also when
// detaching: the daemon has not detached its stderr yet) and in the
// --log-file once that is open.
void Fail(absl::string_view message) { sharemgrd::LogLine(message); }

// Forks twice; the original process waits until the daemon reports that
// it serves (exit 0) or fails (exit 1). Returns the fd the daemon writes
// its one readiness byte to.
int Detach() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return -1;
  pid_t pid = ::fork();
  if (pid < 0) return -1;
  if (pid > 0) {
    ::close(fds[1]);
    char c = 0;
    ssize_t n;
    do {
      n = ::read(fds[0], &c, 1);
    } while (n < 0 && errno == EINTR);
    int status = 0;
    ::waitpid(pid, &status, 0);  // the intermediate child exits at once
    _exit(n == 1 && c == '0' ? 0 : 1);
  }
  ::close(fds[0]);
  ::setsid();
  pid = ::fork();
  if (pid < 0) _exit(1);
  if (pid > 0) _exit(0);
  if (::chdir("/") != 0) {
    // Not fatal: every path the daemon uses is absolute or was given.
  }
  return fds[1];
}

// Through libshare::ReplaceFile: a unique O_EXCL temporary, so nothing
// planted in the folder (a PATH.tmp link or file) is opened, and the file
// is root's with mode 0644 whatever was there.
absl::Status WritePidFile(const std::string& path) {
  // The default folder (/run/sharemgr) may not exist yet when --socket
  // points elsewhere.
  if (absl::Status s = libshare::MakeParentFolders(path); !s.ok()) return s;
  return libshare::ReplaceFile(
      path, absl::StrCat(static_cast<int>(::getpid()), "\n"), 0644);
}

// [mountd] descriptors, as rpc.mountd applies it: the soft limit, at
// start (ApplyNfsConf checked it against the hard limit).
absl::Status SetDescriptorLimit(int descriptors) {
  rlimit rl{};
  if (::getrlimit(RLIMIT_NOFILE, &rl) == 0) {
    rl.rlim_cur = static_cast<rlim_t>(descriptors);
    if (::setrlimit(RLIMIT_NOFILE, &rl) == 0) return absl::OkStatus();
  }
  return absl::FailedPreconditionError(
      absl::StrCat("cannot set RLIMIT_NOFILE to ", descriptors,
                   " ([mountd] descriptors): ", ::strerror(errno)));
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  absl::StatusOr<sharemgrd::DaemonConfig> config =
      sharemgrd::ParseCommandLine(args);
  if (!config.ok()) {
    Fail(absl::StrCat(config.status().message(), " (see --help)"));
    return 2;
  }
  if (config->help) {
    fputs(sharemgrd::UsageText().c_str(), stdout);
    return 0;
  }
  if (config->version) {
    puts(kVersion);
    return 0;
  }
  // Before anything is created: a bad line stops the start here.
  absl::StatusOr<sharemgrd::NfsConfReport> nfs_conf =
      sharemgrd::ApplyNfsConf(&*config);
  if (!nfs_conf.ok()) {
    Fail(nfs_conf.status().message());
    return 1;
  }
  if (config->descriptors > 0) {
    if (absl::Status s = SetDescriptorLimit(config->descriptors); !s.ok()) {
      Fail(s.message());
      return 1;
    }
  }

  // Every server thread would otherwise get its own malloc arena that keeps
  // freed memory (EXPORT replies, batches): two arenas keep RSS within the
  // design's bound at no measurable cost for this allocation pattern.
  mallopt(M_ARENA_MAX, 2);

  // Opened before detaching, so that a bad path is said on the terminal.
  if (!config->log_file.empty()) {
    if (absl::Status s = sharemgrd::SetLogFile(config->log_file); !s.ok()) {
      Fail(s.message());
      return 1;
    }
  }
  for (const std::string& line : nfs_conf->LogLines()) {
    sharemgrd::LogLine(line);
  }

  int ready_fd = -1;
  if (!config->foreground) {
    ready_fd = Detach();
    if (ready_fd < 0) {
      Fail("cannot detach");
      return 1;
    }
  }

  // Signals are taken synchronously by this thread; every thread started
  // after this inherits the mask.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  signal(SIGPIPE, SIG_IGN);
  // Debian's Abseil checks every Mutex acquisition for lock-order cycles;
  // that bookkeeping showed in MNT hit-path profiles. A server turns it off.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);

  sharemgrd::Daemon daemon(*config);
  if (absl::Status s = daemon.Start(); !s.ok()) {
    Fail(s.message());
    return 1;
  }
  const bool pid_file = config->writes_pid_file();
  if (absl::Status s =
          pid_file ? WritePidFile(config->pid_file) : absl::OkStatus();
      !s.ok()) {
    Fail(absl::StrCat("cannot write pid file: ", s.message()));
    daemon.Abandon();
    return 1;
  }
  sharemgrd::LogLine(daemon.ServingLine());
  if (ready_fd >= 0) {
    // From now on nobody reads our stderr: log to syslog, or only to the
    // log file when there is one.
    sharemgrd::SetLogTarget(config->log_file.empty()
                                ? sharemgrd::LogTarget::kSyslog
                                : sharemgrd::LogTarget::kFileOnly);
    int null = ::open("/dev/null", O_RDWR);
    if (null >= 0) {
      ::dup2(null, STDIN_FILENO);
      ::dup2(null, STDOUT_FILENO);
      ::dup2(null, STDERR_FILENO);
      if (null > STDERR_FILENO) ::close(null);
    }
    if (::write(ready_fd, "0", 1) != 1) {
      // The parent is gone; nothing to tell.
    }
    ::close(ready_fd);
  }

  for (;;) {
    int sig = 0;
    if (sigwait(&set, &sig) != 0) continue;
    if (sig == SIGHUP) {
      if (absl::Status s = sharemgrd::ReopenLogFile(); !s.ok()) {
        sharemgrd::LogLine(
            absl::StrCat("cannot reopen the log file: ", s.message(),
                         "; still writing to the "
                         "old one"));
      }
      daemon.ReloadResolver();
      continue;
    }
    sharemgrd::LogLine(absl::StrCat("stopping on signal ",
                                    sig == SIGINT ? "SIGINT" : "SIGTERM"));
    break;
  }
  daemon.KeepMemoryAtExit();  // the process ends next
  daemon.Stop();
  if (pid_file) ::unlink(config->pid_file.c_str());
  sharemgrd::LogLine("stopped");
  return 0;
}
