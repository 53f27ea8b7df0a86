#include "file_safety.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "libshare/files.h"

namespace sharemgrd {
namespace {

using libshare::FolderOf;

std::string BaseOf(const std::string& path) {
  std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string UserText(uid_t uid) {
  return uid == 0 ? std::string("root")
                  : absl::StrCat("uid ", uid, " (the daemon's user)");
}

absl::Status Refuse(const std::string& path, const std::string& why) {
  return absl::FailedPreconditionError(
      absl::StrCat(path, " ", why, ": refusing to start"));
}

absl::Status ErrnoFailure(const std::string& path, absl::string_view what,
                          int err) {
  return absl::FailedPreconditionError(
      absl::StrCat(path, ": ", what, ": ", ::strerror(err)));
}

enum class Kind { kStore, kStoreFolder, kRuntimeFolder };

absl::Status Check(const std::string& path, Kind kind, uid_t owner) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return absl::OkStatus();  // we create it
    return absl::FailedPreconditionError(
        absl::StrCat(path, ": cannot stat: ", ::strerror(errno)));
  }
  const bool folder = kind != Kind::kStore;
  if (folder != S_ISDIR(st.st_mode)) {
    return Refuse(path, folder ? "is not a folder" : "is not a regular file");
  }
  const bool owner_ok = st.st_uid == owner || (folder && st.st_uid == 0);
  if (!owner_ok) {
    return Refuse(path, absl::StrCat("is owned by uid ", st.st_uid, ", not ",
                                     UserText(owner)));
  }
  // Sticky: others may add names but not remove or rename ours, which is
  // all the socket and pid file need; the store's folder holds the WAL and
  // journal files SQLite opens by name, so it gets no such exception.
  if ((st.st_mode & S_IWOTH) != 0 &&
      !(kind == Kind::kRuntimeFolder && (st.st_mode & S_ISVTX) != 0)) {
    return Refuse(path, absl::StrFormat("is writable by others (mode %04o)",
                                        st.st_mode & 07777));
  }
  // SQLite opens shares.db-wal, -shm and -journal by name, following
  // links, and truncates -shm: whoever may add names here could make the
  // daemon's user truncate or write any file, so not even a group may.
  if (kind == Kind::kStoreFolder && (st.st_mode & S_IWGRP) != 0) {
    return Refuse(
        path,
        absl::StrFormat(
            "is writable by its group (gid %u, mode %04o); the store's "
            "folder must be writable only by its owner, since SQLite opens "
            "the store's -wal, -shm and -journal files there by name",
            st.st_gid, st.st_mode & 07777));
  }
  return absl::OkStatus();
}

// Closes a descriptor at scope exit unless released.
class FdCloser {
 public:
  explicit FdCloser(int fd) : fd_(fd) {}
  ~FdCloser() {
    if (fd_ >= 0) ::close(fd_);
  }
  FdCloser(const FdCloser&) = delete;
  FdCloser& operator=(const FdCloser&) = delete;
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

}  // namespace

absl::Status CheckStartupFiles(const std::string& db_path,
                               const std::string& socket_path,
                               const std::string& pid_path, uid_t owner) {
  if (absl::Status s = Check(FolderOf(db_path), Kind::kStoreFolder, owner);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = Check(db_path, Kind::kStore, owner); !s.ok()) return s;
  if (absl::Status s =
          Check(FolderOf(socket_path), Kind::kRuntimeFolder, owner);
      !s.ok()) {
    return s;
  }
  if (pid_path.empty()) return absl::OkStatus();
  return Check(FolderOf(pid_path), Kind::kRuntimeFolder, owner);
}

absl::StatusOr<int> OpenLockFile(const std::string& path, uid_t owner) {
  // O_NONBLOCK: a FIFO planted at the name must not hang the start.
  FdCloser fd(::open(path.c_str(),
                     O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
                     0644));
  if (fd.get() < 0) {
    int err = errno;
    struct stat st;
    if (err == ELOOP && ::lstat(path.c_str(), &st) == 0 &&
        S_ISLNK(st.st_mode)) {
      return Refuse(path, absl::StrCat("is a symbolic link (owned by uid ",
                                       st.st_uid, ")"));
    }
    return ErrnoFailure(path, "cannot open lock", err);
  }
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) {
    return ErrnoFailure(path, "cannot stat lock", errno);
  }
  if (!S_ISREG(st.st_mode)) return Refuse(path, "is not a regular file");
  if (st.st_uid != owner) {
    return Refuse(path, absl::StrCat("is owned by uid ", st.st_uid, ", not ",
                                     UserText(owner),
                                     " (remove it if no sharemgrd runs)"));
  }
  if (st.st_nlink != 1) {
    return Refuse(path, absl::StrCat("has ", st.st_nlink,
                                     " links (a hard link to another file)"));
  }
  if ((st.st_mode & 07777) != 0644 && ::fchmod(fd.get(), 0644) != 0) {
    return ErrnoFailure(path, "cannot set the lock's mode", errno);
  }
  int flags = ::fcntl(fd.get(), F_GETFL);
  if (flags < 0 || ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK) != 0) {
    return ErrnoFailure(path, "fcntl", errno);
  }
  return fd.release();
}

absl::StatusOr<int> BindSocket(const std::string& path, uid_t uid, gid_t gid,
                               mode_t mode) {
  const std::string folder = FolderOf(path);
  const std::string base = BaseOf(path);
  // Short names: the private path must fit sun_path like `path` itself.
  std::string private_path = folder + "/.sockXXXXXX";
  const std::string inner = "s";
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string bind_path = private_path + "/" + inner;
  if (base.empty() || bind_path.size() >= sizeof addr.sun_path) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--socket \"", path, "\": too long (at most ",
        sizeof addr.sun_path - 1 - (bind_path.size() - folder.size()),
        " bytes for its folder) or no file name"));
  }
  FdCloser dir(::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.get() < 0) return ErrnoFailure(folder, "cannot open folder", errno);
  if (::mkdtemp(private_path.data()) == nullptr) {
    return ErrnoFailure(folder, "cannot create a private folder", errno);
  }
  const std::string private_name = BaseOf(private_path);
  std::memcpy(addr.sun_path, private_path.data(), private_path.size());
  addr.sun_path[private_path.size()] = '/';
  std::memcpy(addr.sun_path + private_path.size() + 1, inner.data(),
              inner.size());

  // The folder's name could be swapped (its parent may be group-writable);
  // the descriptor, once checked, is the folder we made: only we can add
  // names to it.
  FdCloser priv(::openat(dir.get(), private_name.c_str(),
                         O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  auto cleanup = [&] {
    if (priv.get() >= 0) ::unlinkat(priv.get(), inner.c_str(), 0);
    ::unlinkat(dir.get(), private_name.c_str(), AT_REMOVEDIR);
  };
  struct stat st;
  if (priv.get() < 0 || ::fstat(priv.get(), &st) != 0 ||
      st.st_uid != ::geteuid() || (st.st_mode & 07777) != 0700) {
    cleanup();
    return Refuse(private_path, "was replaced while starting");
  }
  FdCloser sock(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (sock.get() < 0) {
    int err = errno;
    cleanup();
    return ErrnoFailure(path, "socket", err);
  }
  if (::bind(sock.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) !=
      0) {
    int err = errno;
    cleanup();
    return ErrnoFailure(path, "cannot bind", err);
  }
  // If the name led elsewhere during bind, the socket is not in our folder.
  if (::fstatat(priv.get(), inner.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 ||
      !S_ISSOCK(st.st_mode)) {
    cleanup();
    return Refuse(private_path, "was replaced while starting");
  }
  if ((uid != static_cast<uid_t>(-1) || gid != static_cast<gid_t>(-1)) &&
      ::fchownat(priv.get(), inner.c_str(), uid, gid, AT_SYMLINK_NOFOLLOW) !=
          0) {
    int err = errno;
    cleanup();
    return ErrnoFailure(path, "cannot chown", err);
  }
  if (::fchmodat(priv.get(), inner.c_str(), mode, 0) != 0 ||
      ::listen(sock.get(), 128) != 0) {
    int err = errno;
    cleanup();
    return ErrnoFailure(path, "cannot set up", err);
  }
  if (::renameat(priv.get(), inner.c_str(), dir.get(), base.c_str()) != 0) {
    int err = errno;
    cleanup();
    return ErrnoFailure(path, "cannot move the socket into place", err);
  }
  cleanup();
  return sock.release();
}

}  // namespace sharemgrd
