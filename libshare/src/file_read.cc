#include "libshare/file_read.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "libshare/dir_walk.h"

namespace libshare {
namespace {

std::string Size(std::size_t bytes) {
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) {
    return absl::StrCat(bytes >> 20, " MiB");
  }
  return absl::StrCat(bytes, " bytes");
}

// Appends what `fd` holds from where it is to its end; false with errno
// set on a failed read, with `*over` set past `max_bytes` (stops there).
bool ReadToEnd(int fd, std::size_t max_bytes, std::string* text, bool* over) {
  char buf[65536];
  *over = false;
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n == 0) return true;
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    text->append(buf, static_cast<std::size_t>(n));
    if (text->size() > max_bytes) {
      *over = true;
      return true;
    }
  }
}

}  // namespace

absl::StatusOr<std::optional<std::string>> ReadRegularFile(
    const std::string& path, std::size_t max_bytes) {
  UniqueFd fd(
      ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (!fd.valid()) {
    if (errno == ENOENT) return std::optional<std::string>();
    return absl::FailedPreconditionError(
        absl::StrCat(path, ": cannot open: ", ::strerror(errno)));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, ": not a regular file"));
  }
  const absl::Status too_big = absl::FailedPreconditionError(
      absl::StrCat(path, ": bigger than ", Size(max_bytes)));
  if (static_cast<std::size_t>(st.st_size) > max_bytes) return too_big;
  std::string text;
  bool over = false;
  if (!ReadToEnd(fd.get(), max_bytes, &text, &over)) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, ": cannot read: ", ::strerror(errno)));
  }
  if (over) return too_big;  // grew while read
  return std::optional<std::string>(std::move(text));
}

absl::StatusOr<std::string> ReadFromStart(int fd, std::size_t max_bytes) {
  if (::lseek(fd, 0, SEEK_SET) < 0) {
    return absl::InternalError(absl::StrCat("lseek: ", ::strerror(errno)));
  }
  std::string text;
  bool over = false;
  if (!ReadToEnd(fd, max_bytes, &text, &over)) {
    return absl::InternalError(absl::StrCat("read: ", ::strerror(errno)));
  }
  if (over) {
    return absl::OutOfRangeError(absl::StrCat("more than ", Size(max_bytes)));
  }
  return text;
}

}  // namespace libshare
