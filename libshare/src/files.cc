#include "libshare/files.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "internal_text.h"

namespace libshare {
namespace {

using internal::Quote;
using internal::ToAbsl;

absl::Status ErrnoError(std::string_view what, const std::string& path,
                        int err) {
  return absl::InternalError(
      absl::StrCat(Quote(path), ": ", ToAbsl(what), ": ", std::strerror(err)));
}

// Writes all of `data`, retrying short writes and EINTR.
bool WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

}  // namespace

absl::Status MakeParentFolders(const std::string& file) {
  std::size_t slash = file.rfind('/');
  if (slash == std::string::npos || slash == 0) return absl::OkStatus();
  const std::string dir = file.substr(0, slash);
  for (std::size_t i = 1; i <= dir.size(); ++i) {
    if (i != dir.size() && dir[i] != '/') continue;
    std::string part = dir.substr(0, i);
    if (::mkdir(part.c_str(), 0755) != 0 && errno != EEXIST) {
      return absl::InternalError(
          absl::StrCat(part, ": cannot create folder: ", std::strerror(errno)));
    }
  }
  return absl::OkStatus();
}

absl::Status ReplaceFile(const std::string& path, std::string_view contents,
                         mode_t mode) {
  // mkostemp opens with O_CREAT|O_EXCL, which never follows a link at the
  // name; the random suffix keeps others from planting it beforehand.
  std::string tmp = path + ".tmpXXXXXX";
  int fd = ::mkostemp(tmp.data(), O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return ErrnoError("cannot create temporary file", path, errno);
  auto fail = [&](std::string_view what) {
    int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    return ErrnoError(what, path, err);
  };
  // On the descriptor, so the mode lands on our file whatever the name
  // points to by now; exact, unlike a umask-dependent create mode.
  if (::fchmod(fd, mode) != 0) return fail("fchmod");
  if (!WriteAll(fd, contents)) return fail("write");
  if (::fsync(fd) != 0) return fail("fsync");
  if (::close(fd) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return ErrnoError("close", path, err);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return ErrnoError("rename", path, err);
  }
  // The rename is durable only once the folder is synced.
  int dfd = ::open(FolderOf(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return ErrnoError("open folder", path, errno);
  int rc = ::fsync(dfd);
  int err = errno;
  ::close(dfd);
  if (rc != 0) return ErrnoError("fsync folder", path, err);
  return absl::OkStatus();
}

std::string FolderOf(const std::string& path) {
  std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace libshare
