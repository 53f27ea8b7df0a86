// Start-up checks that the daemon's store and socket folders cannot be
// changed by users other than the daemon's own (or root): a store another
// user owns or may write lets that user grant themselves any share; a
// socket folder others may write lets them replace the socket (and
// impersonate the daemon to sharectl) or plant its lock file.
// Stateless functions; thread-safe.
#ifndef SHAREMGRD_FILE_SAFETY_H_
#define SHAREMGRD_FILE_SAFETY_H_

#include <sys/types.h>

#include <string>

#include "absl/status/status.h"

namespace sharemgrd {

// The store file (if it exists) must be a regular file owned by `owner`
// and not writable by others; its folder (if it exists) must be owned by
// `owner` or root and not writable by others. The socket's folder (if it
// exists) must be owned by `owner` or root and not writable by others
// unless its sticky bit is set (as /tmp). Group write is allowed (an admin
// group). Errors say which file and why, e.g.
//   /x/shares.db is owned by uid 65534, not root: refusing to start
[[nodiscard]] absl::Status CheckStartupFiles(const std::string& db_path,
                                             const std::string& socket_path,
                                             uid_t owner);

}  // namespace sharemgrd

#endif  // SHAREMGRD_FILE_SAFETY_H_
