// Walking share paths on disk without following symbolic links: the one
// mechanism behind "share paths are canonical" (add, batch, import, load)
// and "a MNT below a share stays beneath it" (sharemgrd's ShareAccess).
//
// Each component is opened relative to the descriptor of its parent with
// O_PATH|O_NOFOLLOW, so no link is ever followed and a name swapped for a
// link between two steps is seen as a link, not followed. A component
// walk rather than openat2(RESOLVE_BENEATH) alone: it works on kernels
// without openat2, and it checks the client's search permission on each
// directory it passes (see WalkIdentity). When there is no permission to
// check, one openat2(RESOLVE_NO_SYMLINKS, and RESOLVE_NO_XDEV beneath a
// share) call does the walk; any failure is walked again component by
// component, which classifies it and names the component.
//
// Stateless functions; thread-safe.
//
//   libshare::WalkResult root = libshare::OpenDirectoryNoSymlinks("/srv/a");
//   libshare::WalkResult w = libshare::WalkBeneath(
//       root.fd.get(), "/srv/a", "b/c", {.root = false, .uid = 1000});
//   if (w.stop == libshare::WalkStop::kOk) { ... w.dev, w.ino ... }
#ifndef LIBSHARE_DIR_WALK_H_
#define LIBSHARE_DIR_WALK_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace libshare {

// An owned file descriptor, closed on destruction.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& o) noexcept : fd_(o.release()) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd();
  int get() const { return fd_; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  bool valid() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

// Who walks. `root`: no permission check (the daemon's own rights; a
// client whose root is kept). Otherwise search (x) permission on every
// directory passed is checked for `uid`, `gid` and the supplementary
// `groups` (an AUTH_SYS credential's gids<16>, RFC 5531) as the kernel
// checks it: against the directory's POSIX access ACL when it has one
// (read from system.posix_acl_access; an ACL that cannot be read or
// parsed refuses), else its owner, group and mode bits.
struct WalkIdentity {
  bool root = true;
  uint32_t uid = 0;
  uint32_t gid = 0;
  absl::Span<const uint32_t> groups = {};  // must outlive the walk
};

enum class WalkStop : uint8_t {
  kOk,            // fd is the final directory
  kSymlink,       // a component is a symbolic link
  kNotFound,      // a component does not exist
  kNotDirectory,  // a component (or the last) is not a directory
  kOtherMount,    // a component is on another mount than the start
  kNoSearch,      // the identity may not search a directory passed
  kError,         // any other failure (error holds errno)
};

struct WalkResult {
  WalkStop stop = WalkStop::kError;
  std::string at;  // the path up to the component that stopped the walk
  int error = 0;   // errno, for kError
  UniqueFd fd;     // kOk: an O_PATH descriptor of the final directory
  uint64_t dev = 0;
  uint64_t ino = 0;
  // kOk: the final directory is the root of a mount (something is mounted
  // at the path), as statx(2) says (STATX_ATTR_MOUNT_ROOT); true when the
  // kernel does not say (before Linux 5.8).
  bool mount_root = true;
  bool ok() const { return stop == WalkStop::kOk; }
  // "a symlink component", "no such directory", ... (for messages).
  std::string Why() const;
};

// Opens an absolute, normalized path from "/" with the caller's rights,
// crossing mounts, refusing any symlink component.
WalkResult OpenDirectoryNoSymlinks(std::string_view path);

// Walks `relative` (components separated by single "/", none "." or "..";
// "" means base itself) beneath `base_fd`, an open directory whose path is
// `base_path` (used only in WalkResult::at). Never follows a link, never
// leaves base's mount, and checks `who`'s search permission on base and
// every directory before the last.
WalkResult WalkBeneath(int base_fd, std::string_view base_path,
                       std::string_view relative, const WalkIdentity& who);

// What the share-path rule learns of a directory it accepts.
struct DirectoryPlace {
  uint64_t dev = 0;
  bool mount_root = true;  // as WalkResult::mount_root
};
// The rule for share paths (add, batch, import and the loader): the path
// exists, is a directory and has no symlink component. Returns its device
// and whether a file system is mounted at it (from the same statx).
// Errors name the path and, for a link, its canonical form:
//   path "/srv/link": a symlink component; its canonical form is "/srv/real"
//   /srv/none: no such directory
[[nodiscard]] absl::StatusOr<DirectoryPlace> CanonicalDirectoryPlace(
    std::string_view path);

// CanonicalDirectoryPlace for many paths in a row (a batch's add-shares),
// keeping the parent directory of the last path open: siblings, the usual
// batch of home directories, then cost one statx(2) of their last
// component each (without following it) instead of a walk from "/" plus a
// close. The same answers and the same errors: a path it cannot answer
// from the open parent (a link, missing, not a directory, a parent it
// cannot open, a path not in normal form) goes to
// CanonicalDirectoryPlace. The parent's own check is made when it is
// opened, not again per sibling: like any check before use, it says what
// the path was when checked (the daemon opens each path again, without
// following links, where it serves or exports it). Not thread-safe: one
// per thread.
//
// `siblings` says how many paths in a row, this one first, share its
// parent. From kListSiblings on, and when the parent holds at most
// kListFactor times that many entries, the parent is listed once
// (getdents64) instead of one statx per sibling: on a file system whose
// directories all carry the file system's own device (ext4, xfs, tmpfs,
// zfs), a name listed as a directory and not a mount point (read from
// /proc/self/mountinfo when the parent is listed) is a directory on the
// parent's device. Anything else (a link, another type, a name not
// listed, a mount point, another file system, a long mountinfo) is
// checked by statx as before. A listing is the parent as it was when
// listed, as the statx of a sibling checked ahead of its turn is.
class CanonicalDirectoryChecker {
 public:
  static constexpr std::size_t kListSiblings = 256;
  static constexpr std::size_t kListFactor = 4;

  [[nodiscard]] absl::StatusOr<DirectoryPlace> Check(std::string_view path,
                                                     std::size_t siblings = 1);
  // Opens (and, with `siblings` as for Check, lists) the parent of `path`
  // unless it is the open one: the slow part of the first Check of a run
  // of siblings, done ahead of it. Check answers the same with or without.
  void Prepare(std::string_view path, std::size_t siblings);
  // Paths answered from a listing so far (tests, diagnostics).
  std::size_t listed_answers() const { return listed_answers_; }

 private:
  // Makes the parent of `path` (its last '/' at `slash`) the open one;
  // false when it cannot be opened.
  bool OpenParent(std::string_view path, std::size_t slash,
                  std::size_t siblings);
  void List(std::size_t siblings);

  std::string parent_;  // the path of parent_fd_; "" when none is open
  UniqueFd parent_fd_;
  // The parent's listing: its subdirectories that are not mount points,
  // each followed by a NUL in names_ and kept in dirs_ as its offset there
  // (4 bytes a name, not a 16-byte view: a parent of 1,000,000 homes is
  // listed in 19 MiB, not 43). Empty when not listed.
  bool listed_ = false;
  uint64_t parent_dev_ = 0;
  // On the heap, so that the set's hash and equality, which point at it,
  // stay right when the checker is moved.
  std::unique_ptr<std::string> names_ = std::make_unique<std::string>();
  // A name looked up in dirs_: an offset in names_, or a name given.
  struct NameKey {
    std::string_view name;
  };
  struct NameHash {
    using is_transparent = void;
    const std::string* names;
    std::size_t operator()(uint32_t at) const {
      return (*this)(NameKey{std::string_view(names->data() + at)});
    }
    std::size_t operator()(NameKey k) const {
      return absl::Hash<absl::string_view>()(
          absl::string_view(k.name.data(), k.name.size()));
    }
  };
  struct NameEq {
    using is_transparent = void;
    const std::string* names;
    std::string_view At(uint32_t at) const {
      return std::string_view(names->data() + at);
    }
    bool operator()(uint32_t a, uint32_t b) const { return a == b; }
    bool operator()(uint32_t a, NameKey b) const { return At(a) == b.name; }
    bool operator()(NameKey a, uint32_t b) const { return a.name == At(b); }
  };
  absl::flat_hash_set<uint32_t, NameHash, NameEq> dirs_{
      0, NameHash{names_.get()}, NameEq{names_.get()}};
  std::size_t listed_answers_ = 0;
};

}  // namespace libshare

#endif  // LIBSHARE_DIR_WALK_H_
