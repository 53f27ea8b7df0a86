// The files the daemon creates or changes as root, made safe against other
// local users: start-up checks that the store and the folders of the
// socket and pid file cannot be changed by users other than the daemon's
// own (or root), the lock files opened without following links, and the
// management socket bound without a path race. A store another user owns
// or may write lets that user grant themselves any share; a folder others
// may write lets them replace the socket (and impersonate the daemon to
// sharectl) or plant names in it.
//
// The store's folder must not be writable by its group: SQLite opens the
// store's -wal, -shm and -journal files there by name, following links, so
// a member could make the daemon's user write or truncate any file. The
// socket's and pid file's folders may be group-writable (an
// administrators' group): its members can then plant names (links, files)
// in them, and nothing here ever writes, re-owns or truncates through such
// a name. They can still replace or remove the daemon's socket and pid
// file there, as anyone who may write a folder can: give group write to
// the administrators only.
//
// Stateless functions; thread-safe, except that BindSocket() must not run
// while another thread binds the same path.
#ifndef SHAREMGRD_FILE_SAFETY_H_
#define SHAREMGRD_FILE_SAFETY_H_

#include <sys/types.h>

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace sharemgrd {

// The store file (if it exists) must be a regular file owned by `owner`
// and not writable by others (its group may write it); its folder (if it
// exists) must be owned by `owner` or root and writable by neither its
// group nor others, sticky bit or not. The folders of the socket and
// (unless `pid_path` is empty: no pid file is written) of the pid file
// (if they exist) must be owned by `owner` or root and not writable by
// others unless their sticky bit is set (as /tmp); group write is allowed
// there.
// Errors say which file and why, e.g.
//   /x/shares.db is owned by uid 65534, not root: refusing to start
[[nodiscard]] absl::Status CheckStartupFiles(const std::string& db_path,
                                             const std::string& socket_path,
                                             const std::string& pid_path,
                                             uid_t owner);

// Opens the lock file `path` for reading and writing, creating it with
// mode 0644 if missing, without following a link at its name, and returns
// the descriptor (close-on-exec) once it is known to be ours: a regular
// file owned by `owner` with one link (a hard link to another file would
// make writes land there). Its mode is set to 0644, so only its owner may
// write the pid in it. Anything else is refused, naming the file and why:
//   /x/shares.db.lock is a symbolic link (owned by uid 65534): refusing to
//   start /x/shares.db.lock is owned by uid 65534, not root: refusing to start
// A lock file another user owns is refused whether or not they hold a lock
// on it: its content is theirs, so it never reads as another daemon's pid.
[[nodiscard]] absl::StatusOr<int> OpenLockFile(const std::string& path,
                                               uid_t owner);

// Creates a listening Unix stream socket at `path` with mode `mode`, owner
// `uid` and group `gid` (-1: unchanged), and returns its descriptor
// (close-on-exec). Never sets owner or mode through a name others could
// swap: it binds in a private folder it creates next to `path` (mode 0700,
// checked through its descriptor), sets owner and mode there, listens, and
// renames the socket over `path` (replacing a stale socket or a planted
// link, never following it). On Linux the socket file's mode and owner are
// what control connect() (write permission); fchmod/fchown on the socket's
// descriptor change only the descriptor's own inode, not the file, so they
// cannot do this. Errors name the path and what failed.
[[nodiscard]] absl::StatusOr<int> BindSocket(const std::string& path, uid_t uid,
                                             gid_t gid, mode_t mode);

}  // namespace sharemgrd

#endif  // SHAREMGRD_FILE_SAFETY_H_
