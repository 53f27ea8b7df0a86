// Files the share manager writes, often as root, in folders other users
// may be able to write (a group-writable state folder, a sticky /tmp):
// making the folders above a file, and replacing a file atomically without
// ever following a link someone planted. The one place for both (the
// sharetab view, the store's folder, the daemon's lock, socket and pid
// files use them). Stateless functions; thread-safe.
//
//   absl::Status s = libshare::ReplaceFile("/run/x.pid", "42\n", 0644);
#ifndef LIBSHARE_FILES_H_
#define LIBSHARE_FILES_H_

#include <sys/types.h>

#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace libshare {

// The folder that holds `path`: "." for a bare name, "/" for "/x".
std::string FolderOf(const std::string& path);

// Creates every missing folder above `file` with mode 0755 (less the
// umask). Existing folders, whoever owns them, are not changed; it is not
// an error if all exist. Errors name the folder that could not be made.
[[nodiscard]] absl::Status MakeParentFolders(const std::string& file);

// Replaces `path` atomically with `contents`, mode `mode` exactly (no
// umask), owned by the caller: writes a temporary file of a unique,
// unpredictable name in the same folder, created with O_EXCL|O_NOFOLLOW
// (so a name planted there, link or file, is never opened), fsyncs it,
// renames it over `path` (a link at `path` is replaced, not followed) and
// fsyncs the folder. A reader sees the old file or the new one, never a
// part. On failure the temporary is removed and `path` is unchanged.
// Errors read "PATH": what: strerror, with PATH quoted.
[[nodiscard]] absl::Status ReplaceFile(const std::string& path,
                                       std::string_view contents, mode_t mode);

}  // namespace libshare

#endif  // LIBSHARE_FILES_H_
