#include "libshare/dir_walk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "libshare/file_read.h"
#include "libshare/mount_table.h"

#if defined(SYS_openat2)
#include <linux/openat2.h>
#endif

#ifndef STATX_MNT_ID
#define STATX_MNT_ID 0x00001000U
#endif

namespace libshare {
namespace {

struct Node {
  mode_t mode = 0;
  uint32_t uid = 0;
  uint32_t gid = 0;
  uint64_t dev = 0;
  uint64_t ino = 0;
  bool has_mnt_id = false;
  uint64_t mnt_id = 0;
  bool mount_root = true;  // as WalkResult::mount_root
};

// Whether a statx result is the root of a mount; true when the kernel does
// not say.
bool MountRootOf(const struct statx& sx) {
  return (sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) == 0 ||
         (sx.stx_attributes & STATX_ATTR_MOUNT_ROOT) != 0;
}

// statx of a descriptor; the mount id when the kernel gives it (5.8+),
// else the device number alone tells mounts apart (bind mounts of the same
// file system then pass: only root can make them).
bool StatFd(int fd, Node* n, int* err) {
  struct statx sx;
  if (::statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW,
              STATX_TYPE | STATX_MODE | STATX_UID | STATX_GID | STATX_INO |
                  STATX_MNT_ID,
              &sx) != 0) {
    *err = errno;
    return false;
  }
  n->mode = sx.stx_mode;
  n->uid = sx.stx_uid;
  n->gid = sx.stx_gid;
  n->dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
  n->ino = sx.stx_ino;
  n->has_mnt_id = (sx.stx_mask & STATX_MNT_ID) != 0;
  n->mnt_id = sx.stx_mnt_id;
  n->mount_root = MountRootOf(sx);
  return true;
}

bool SameMount(const Node& a, const Node& b) {
  if (a.dev != b.dev) return false;
  return !(a.has_mnt_id && b.has_mnt_id) || a.mnt_id == b.mnt_id;
}

bool InGroups(uint32_t gid, const WalkIdentity& who) {
  if (gid == who.gid) return true;
  for (uint32_t g : who.groups) {
    if (g == gid) return true;
  }
  return false;
}

// A POSIX access ACL as the kernel stores it in the extended attribute
// system.posix_acl_access: a little-endian version word (2), then
// entries of tag (u16), permissions (u16) and id (u32).
constexpr char kAccessAclAttribute[] = "system.posix_acl_access";
constexpr uint32_t kAclVersion = 2;
enum AclTag : uint16_t {
  kUserObj = 0x01,
  kUser = 0x02,
  kGroupObj = 0x04,
  kGroup = 0x08,
  kMask = 0x10,
  kOther = 0x20,
};
constexpr uint16_t kAclSearch = 0x01;  // the x bit
struct AclEntry {
  uint16_t tag = 0;
  uint16_t perm = 0;
  uint32_t id = 0;
};

uint32_t LittleEndian32(const unsigned char* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 |
         uint32_t{p[3]} << 24;
}

// The access ACL of the directory open at `fd` (an O_PATH descriptor,
// read through /proc/self/fd: fgetxattr refuses O_PATH). False when it
// cannot be read or parsed; true with *acl empty when there is none.
bool ReadAccessAcl(int fd, std::vector<AclEntry>* acl) {
  acl->clear();
  const std::string proc = absl::StrCat("/proc/self/fd/", fd);
  unsigned char buf[4 + 8 * 64];
  ssize_t n = ::getxattr(proc.c_str(), kAccessAclAttribute, buf, sizeof buf);
  std::vector<unsigned char> big;
  if (n < 0 && errno == ERANGE) {
    n = ::getxattr(proc.c_str(), kAccessAclAttribute, nullptr, 0);
    if (n > 0) {
      big.resize(static_cast<std::size_t>(n));
      n = ::getxattr(proc.c_str(), kAccessAclAttribute, big.data(), big.size());
    }
  }
  if (n < 0) {
    // No ACL, or a file system without them: the mode bits decide.
    return errno == ENODATA || errno == ENOTSUP || errno == EOPNOTSUPP;
  }
  const unsigned char* p = big.empty() ? buf : big.data();
  const std::size_t size = static_cast<std::size_t>(n);
  if (size < 4 || (size - 4) % 8 != 0 || LittleEndian32(p) != kAclVersion) {
    return false;
  }
  for (std::size_t off = 4; off < size; off += 8) {
    AclEntry e;
    e.tag = static_cast<uint16_t>(p[off] | p[off + 1] << 8);
    e.perm = static_cast<uint16_t>(p[off + 2] | p[off + 3] << 8);
    e.id = LittleEndian32(p + off + 4);
    acl->push_back(e);
  }
  return true;
}

// Search permission as the kernel's posix_acl_permission() gives it: the
// owner entry for the owner, then a named user entry, then the owning
// group and named group entries (any that matches and allows, else
// refused if one matched), then other; named entries and the owning group
// are limited by the mask.
bool AclAllowsSearch(const std::vector<AclEntry>& acl, const Node& n,
                     const WalkIdentity& who) {
  uint16_t mask = 0x07;
  for (const AclEntry& e : acl) {
    if (e.tag == kMask) mask = e.perm;
  }
  if (n.uid == who.uid) {
    for (const AclEntry& e : acl) {
      if (e.tag == kUserObj) return (e.perm & kAclSearch) != 0;
    }
    return false;
  }
  for (const AclEntry& e : acl) {
    if (e.tag == kUser && e.id == who.uid) {
      return (e.perm & mask & kAclSearch) != 0;
    }
  }
  bool group_matched = false;
  for (const AclEntry& e : acl) {
    const bool matches = (e.tag == kGroupObj && InGroups(n.gid, who)) ||
                         (e.tag == kGroup && InGroups(e.id, who));
    if (!matches) continue;
    if ((e.perm & mask & kAclSearch) != 0) return true;
    group_matched = true;
  }
  if (group_matched) return false;
  for (const AclEntry& e : acl) {
    if (e.tag == kOther) return (e.perm & kAclSearch) != 0;
  }
  return false;
}

// `who` may search the directory `n`, open at `fd`: its access ACL
// decides when it has one (one that cannot be read refuses), else its
// owner, group and mode bits.
bool MaySearch(const Node& n, int fd, const WalkIdentity& who) {
  if (who.root) return true;
  std::vector<AclEntry> acl;
  if (!ReadAccessAcl(fd, &acl)) return false;
  if (!acl.empty()) return AclAllowsSearch(acl, n, who);
  if (n.uid == who.uid) return (n.mode & S_IXUSR) != 0;
  if (InGroups(n.gid, who)) return (n.mode & S_IXGRP) != 0;
  return (n.mode & S_IXOTH) != 0;
}

std::string Join(std::string_view base, std::string_view rel) {
  if (rel.empty()) return std::string(base);
  std::string out(base == "/" ? "" : base);
  out += '/';
  out += rel;
  return out;
}

// Components separated by single "/", none "." or "..": what the walks
// accept (the component walk refuses anything else with EINVAL), so the
// one-call open never resolves a path the component walk would refuse.
bool PlainRelative(std::string_view rel) {
  if (rel.empty()) return false;
  std::size_t i = 0;
  while (i <= rel.size()) {
    std::size_t j = rel.find('/', i);
    if (j == std::string_view::npos) j = rel.size();
    std::string_view c = rel.substr(i, j - i);
    if (c.empty() || c == "." || c == "..") return false;
    i = j + 1;
  }
  return true;
}

// The whole walk in one openat2(2) call (Linux 5.6+): the kernel refuses
// every link (RESOLVE_NO_SYMLINKS) and, when asked, every mount crossing
// (RESOLVE_NO_XDEV). Returns -1 when the kernel lacks openat2 or the call
// fails for any reason; the caller then walks component by component,
// which classifies the failure and names the component. One call instead
// of two per component keeps add-share of 100,000 paths near one stat()
// per path.
int OpenInOneCall(int dirfd, std::string_view rel, bool same_mount) {
#if defined(SYS_openat2)
  static std::atomic<bool> unsupported{false};
  if (unsupported.load(std::memory_order_relaxed)) return -1;
  open_how how{};
  how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  if (same_mount) how.resolve |= RESOLVE_NO_XDEV | RESOLVE_BENEATH;
  const std::string path(rel);
  long fd = ::syscall(SYS_openat2, dirfd, path.c_str(), &how, sizeof how);
  if (fd < 0 && (errno == ENOSYS || errno == E2BIG)) {
    unsupported.store(true, std::memory_order_relaxed);
  }
  return static_cast<int>(fd);
#else
  (void)dirfd;
  (void)rel;
  (void)same_mount;
  return -1;
#endif
}

// Fills `r` from what OpenInOneCall returned: true if it is a directory
// (on `mount_of`'s mount, when given); false leaves `r` as it was.
bool TakeOneCall(int fd, std::string at, const Node* mount_of, WalkResult* r) {
  UniqueFd fast(fd);
  Node end;
  int err = 0;
  if (!fast.valid() || !StatFd(fast.get(), &end, &err) || !S_ISDIR(end.mode) ||
      (mount_of != nullptr && !SameMount(*mount_of, end))) {
    return false;
  }
  r->at = std::move(at);
  r->stop = WalkStop::kOk;
  r->fd = std::move(fast);
  r->dev = end.dev;
  r->ino = end.ino;
  r->mount_root = end.mount_root;
  return true;
}

// The walk itself. `same_mount`: stay on base's mount; `who`: checked on
// base and every directory before the last.
WalkResult Walk(int base_fd, std::string_view base_path,
                std::string_view relative, const WalkIdentity& who,
                bool same_mount) {
  WalkResult r;
  Node base;
  if (!StatFd(base_fd, &base, &r.error)) {
    r.stop = WalkStop::kError;
    r.at = std::string(base_path);
    return r;
  }
  if (!S_ISDIR(base.mode)) {
    r.stop = WalkStop::kNotDirectory;
    r.at = std::string(base_path);
    return r;
  }
  // Without a permission check to make, one call does the whole walk.
  if (who.root && PlainRelative(relative) &&
      TakeOneCall(OpenInOneCall(base_fd, relative, same_mount),
                  Join(base_path, relative), same_mount ? &base : nullptr,
                  &r)) {
    return r;
  }
  UniqueFd cur(::fcntl(base_fd, F_DUPFD_CLOEXEC, 0));
  if (!cur.valid()) {
    r.error = errno;
    r.at = std::string(base_path);
    return r;
  }
  Node node = base;
  std::size_t done = 0;  // bytes of `relative` walked
  while (done < relative.size()) {
    std::size_t slash = relative.find('/', done);
    if (slash == std::string_view::npos) slash = relative.size();
    std::string name(relative.substr(done, slash - done));
    r.at = Join(base_path, relative.substr(0, slash));
    if (!MaySearch(node, cur.get(), who)) {
      r.stop = WalkStop::kNoSearch;
      r.at = Join(base_path, relative.substr(0, done == 0 ? 0 : done - 1));
      return r;
    }
    if (name.empty() || name == "." || name == "..") {
      r.stop = WalkStop::kError;
      r.error = EINVAL;
      return r;
    }
    UniqueFd next(
        ::openat(cur.get(), name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    if (!next.valid()) {
      r.error = errno;
      r.stop = errno == ENOENT    ? WalkStop::kNotFound
               : errno == ENOTDIR ? WalkStop::kNotDirectory
               : errno == EACCES  ? WalkStop::kNoSearch
                                  : WalkStop::kError;
      return r;
    }
    if (!StatFd(next.get(), &node, &r.error)) {
      r.stop = WalkStop::kError;
      return r;
    }
    if (S_ISLNK(node.mode)) {
      r.stop = WalkStop::kSymlink;
      return r;
    }
    if (same_mount && !SameMount(base, node)) {
      r.stop = WalkStop::kOtherMount;
      return r;
    }
    if (!S_ISDIR(node.mode)) {
      r.stop = WalkStop::kNotDirectory;
      return r;
    }
    cur = std::move(next);
    done = slash + 1;
  }
  r.at = Join(base_path, relative);
  r.stop = WalkStop::kOk;
  r.fd = std::move(cur);
  r.dev = node.dev;
  r.ino = node.ino;
  r.mount_root = node.mount_root;
  return r;
}

}  // namespace

UniqueFd& UniqueFd::operator=(UniqueFd&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.release();
  }
  return *this;
}

UniqueFd::~UniqueFd() {
  if (fd_ >= 0) ::close(fd_);
}

std::string WalkResult::Why() const {
  switch (stop) {
    case WalkStop::kOk:
      return "ok";
    case WalkStop::kSymlink:
      return "a symlink component";
    case WalkStop::kNotFound:
      return "no such directory";
    case WalkStop::kNotDirectory:
      return "not a directory";
    case WalkStop::kOtherMount:
      return "another file system is mounted there";
    case WalkStop::kNoSearch:
      return "no search permission";
    case WalkStop::kError:
      break;
  }
  return strerror(error);
}

WalkResult OpenDirectoryNoSymlinks(std::string_view path) {
  WalkResult r;
  if (path.empty() || path.front() != '/') {
    r.error = EINVAL;
    r.at = std::string(path);
    return r;
  }
  // Absolute, so the descriptor is ignored: no need to open "/" first.
  if (PlainRelative(path.substr(1)) &&
      TakeOneCall(OpenInOneCall(AT_FDCWD, path, /*same_mount=*/false),
                  std::string(path), nullptr, &r)) {
    return r;
  }
  UniqueFd root(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!root.valid()) {
    r.error = errno;
    r.at = "/";
    return r;
  }
  return Walk(root.get(), "/", path.substr(1), WalkIdentity{},
              /*same_mount=*/false);
}

WalkResult WalkBeneath(int base_fd, std::string_view base_path,
                       std::string_view relative, const WalkIdentity& who) {
  return Walk(base_fd, base_path, relative, who, /*same_mount=*/true);
}

absl::StatusOr<DirectoryPlace> CanonicalDirectoryPlace(std::string_view view) {
  WalkResult w = OpenDirectoryNoSymlinks(view);
  if (w.stop == WalkStop::kOk) return DirectoryPlace{w.dev, w.mount_root};
  // An error: its message and realpath(3) want a string.
  const std::string path(view);
  switch (w.stop) {
    case WalkStop::kOk:
      return DirectoryPlace{w.dev, w.mount_root};
    case WalkStop::kSymlink: {
      std::unique_ptr<char, decltype(&std::free)> real(
          ::realpath(path.c_str(), nullptr), &std::free);
      if (real == nullptr) {
        return absl::FailedPreconditionError(
            absl::StrCat("path \"", path, "\": a symlink component (\"", w.at,
                         "\") that does not lead to a directory"));
      }
      return absl::FailedPreconditionError(absl::StrCat(
          "path \"", path, "\": a symlink component; its canonical form is \"",
          real.get(), "\""));
    }
    case WalkStop::kNotFound:
      return absl::NotFoundError(absl::StrCat(path, ": no such directory"));
    case WalkStop::kNotDirectory:
      return absl::FailedPreconditionError(
          absl::StrCat(path, ": not a directory"));
    case WalkStop::kOtherMount:
    case WalkStop::kNoSearch:
    case WalkStop::kError:
      break;
  }
  return absl::FailedPreconditionError(absl::StrCat(path, ": ", w.Why()));
}

namespace {

// Where the last '/' of `path` is, when `path` is absolute, in normal form
// and not "/" itself: what CanonicalDirectoryChecker answers from its
// parent. npos otherwise.
std::size_t LastSlashIfPlain(std::string_view path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos || slash + 1 == path.size() ||
      path.front() != '/' || !PlainRelative(path.substr(1))) {
    return std::string::npos;
  }
  return slash;
}

}  // namespace

bool CanonicalDirectoryChecker::OpenParent(std::string_view path,
                                           std::size_t slash,
                                           std::size_t siblings) {
  const std::string_view parent =
      slash == 0 ? std::string_view("/") : path.substr(0, slash);
  if (parent_fd_.valid() && parent == parent_) return true;
  parent_.clear();
  parent_fd_ = UniqueFd();
  listed_ = false;
  WalkResult w = OpenDirectoryNoSymlinks(parent);
  if (!w.ok()) return false;
  parent_fd_ = std::move(w.fd);
  parent_.assign(parent);
  List(siblings);
  return true;
}

void CanonicalDirectoryChecker::Prepare(std::string_view path,
                                        std::size_t siblings) {
  const std::size_t slash = LastSlashIfPlain(path);
  if (slash != std::string::npos) (void)OpenParent(path, slash, siblings);
}

absl::StatusOr<DirectoryPlace> CanonicalDirectoryChecker::Check(
    std::string_view path, std::size_t siblings) {
  const std::size_t slash = LastSlashIfPlain(path);
  if (slash == std::string::npos || !OpenParent(path, slash, siblings)) {
    return CanonicalDirectoryPlace(path);
  }
  if (listed_ && dirs_.contains(NameKey{path.substr(slash + 1)})) {
    ++listed_answers_;
    return DirectoryPlace{parent_dev_, /*mount_root=*/false};
  }
  // The last component, NUL-terminated (`path` need not be): a longer one
  // than a name may be goes the long way, which names the error.
  const std::string_view last = path.substr(slash + 1);
  char name[NAME_MAX + 1];
  if (last.size() > NAME_MAX) return CanonicalDirectoryPlace(path);
  std::memcpy(name, last.data(), last.size());
  name[last.size()] = '\0';
  struct statx sx;
  if (::statx(parent_fd_.get(), name, AT_SYMLINK_NOFOLLOW, STATX_TYPE, &sx) ==
          0 &&
      (sx.stx_mask & STATX_TYPE) != 0 && S_ISDIR(sx.stx_mode)) {
    return DirectoryPlace{makedev(sx.stx_dev_major, sx.stx_dev_minor),
                          MountRootOf(sx)};
  }
  return CanonicalDirectoryPlace(path);
}

namespace {

// File systems on which every directory carries the file system's own
// device number, so that a directory that is not a mount point has its
// parent's (btrfs subvolumes, overlayfs and network file systems are not
// among them).
bool DirectoriesShareTheDevice(unsigned long f_type) {
  switch (f_type) {
    case 0xEF53:      // ext2, ext3, ext4
    case 0x58465342:  // xfs
    case 0x01021994:  // tmpfs
    case 0x2FC12FC1:  // zfs
      return true;
    default:
      return false;
  }
}

// The names directly in `dir` that something is mounted on, from
// /proc/self/mountinfo. False if it cannot be read whole within `cap`
// bytes (a server with thousands of mounts: the caller then checks each
// path itself).
bool MountedNamesIn(std::string_view dir, std::size_t cap,
                    absl::flat_hash_set<std::string>* out) {
  UniqueFd fd(::open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return false;
  absl::StatusOr<std::string> text = ReadFromStart(fd.get(), cap);
  if (!text.ok()) return false;
  const std::string_view all(*text);
  MountTableEntry entry;
  for (std::size_t at = 0, next; at < all.size(); at = next) {
    const std::size_t nl = all.find('\n', at);
    next = nl == std::string_view::npos ? all.size() : nl + 1;
    const std::string_view line =
        all.substr(at, next - at - (nl != std::string_view::npos));
    if (!ParseMountinfoLine(line, &entry)) continue;
    const std::string& point = entry.mount_point;
    const std::size_t slash = point.rfind('/');
    if (slash == std::string::npos || slash + 1 == point.size()) continue;
    const std::string_view in = slash == 0
                                    ? std::string_view("/")
                                    : std::string_view(point).substr(0, slash);
    if (in == dir) out->insert(point.substr(slash + 1));
  }
  return true;
}

struct Dirent64 {
  uint64_t d_ino;
  int64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[];
};

}  // namespace

void CanonicalDirectoryChecker::List(std::size_t siblings) {
  listed_ = false;
  names_->clear();
  dirs_.clear();
  if (siblings < kListSiblings) return;
  struct statfs fs;
  if (::fstatfs(parent_fd_.get(), &fs) != 0 ||
      !DirectoriesShareTheDevice(static_cast<unsigned long>(fs.f_type))) {
    return;
  }
  struct statx sx;
  if (::statx(parent_fd_.get(), "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW,
              STATX_TYPE | STATX_NLINK, &sx) != 0 ||
      (sx.stx_mask & STATX_NLINK) == 0) {
    return;
  }
  // More entries than this and a statx per sibling is cheaper: a statx
  // costs what listing about four to seven entries does, before hashing
  // them (15,000 siblings in a parent of 100,000: statx 1.5-1.9 us a path,
  // listing 0.27 us an entry on ext4 and 0.34-0.41 on tmpfs; listed with a
  // factor of 8 such a batch took 60 ms against 44 ms, and 20,000 in
  // 100,000 were even, 75 against 76 ms; bench/JOURNAL.md, 2026-12-06).
  // ext4 counts a directory of more than 65,000 subdirectories as 1 link,
  // hence the count below.
  const std::size_t most = kListFactor * siblings;
  if (sx.stx_nlink > 2 + most) return;
  absl::flat_hash_set<std::string> mounted;
  if (!MountedNamesIn(parent_, 256 << 10, &mounted)) return;
  UniqueFd dir(
      ::openat(parent_fd_.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir.valid()) return;
  std::size_t count = 0;  // names listed
  std::vector<char> buf(64 << 10);
  std::size_t entries = 0;
  for (;;) {
    const long n = ::syscall(SYS_getdents64, dir.get(), buf.data(), buf.size());
    if (n < 0) {
      names_->clear();
      return;
    }
    if (n == 0) break;
    for (long off = 0; off < n;) {
      const auto* d = reinterpret_cast<const Dirent64*>(buf.data() + off);
      off += d->d_reclen;
      if (++entries > most + 2) {
        names_->clear();
        return;
      }
      if (d->d_type != DT_DIR) continue;
      const std::string_view name(d->d_name);
      if (name == "." || name == ".." || name == ".zfs" ||
          mounted.contains(absl::string_view(name.data(), name.size()))) {
        continue;
      }
      names_->append(name);
      names_->push_back('\0');
      ++count;
    }
  }
  if (names_->size() > UINT32_MAX) {  // offsets are 4 bytes
    names_->clear();
    return;
  }
  // names_ is complete: the set's offsets point into it from now on.
  dirs_.reserve(count);
  for (std::size_t at = 0; at < names_->size();
       at = names_->find('\0', at) + 1) {
    dirs_.insert(static_cast<uint32_t>(at));
  }
  parent_dev_ = makedev(sx.stx_dev_major, sx.stx_dev_minor);
  listed_ = true;
}

}  // namespace libshare
