// Reading a file whole, with a bound: the one way the project does it
// (exports files followed by the daemon, nfs.conf, mountinfo).
//
//   absl::StatusOr<std::optional<std::string>> t =
//       libshare::ReadRegularFile("/etc/exports", 64 << 20);
//   if (!t.ok()) ...            // names the path and what was wrong
//   else if (!t->has_value()) ... // nothing at that name
#ifndef LIBSHARE_FILE_READ_H_
#define LIBSHARE_FILE_READ_H_

#include <cstddef>
#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace libshare {

// The text of the regular file at `path`; nullopt when nothing is at the
// name (ENOENT). Opened O_NONBLOCK: a FIFO or device planted at the name
// is refused as not a regular file, never waited on. Errors
// (FailedPrecondition) name the path:
//   /etc/exports: cannot open: Permission denied
//   /etc/exports: not a regular file
//   /etc/exports: bigger than 64 MiB
//   /etc/exports: cannot read: Input/output error
[[nodiscard]] absl::StatusOr<std::optional<std::string>> ReadRegularFile(
    const std::string& path, std::size_t max_bytes);

// Everything in the open file `fd` from its start (it is seeked to 0
// first, so a descriptor kept open, such as mountinfo's polled for
// changes, is read again whole). OutOfRange when it holds more than
// `max_bytes`; Internal for a failed seek or read.
[[nodiscard]] absl::StatusOr<std::string> ReadFromStart(int fd,
                                                        std::size_t max_bytes);

}  // namespace libshare

#endif  // LIBSHARE_FILE_READ_H_
