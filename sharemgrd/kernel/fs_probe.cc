#include "kernel/fs_probe.h"

#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"

namespace sharemgrd::kernel {
namespace {

// Stable across runs (FNV-1a, two offsets), unlike std::hash.
Uuid UuidFromPath(const std::string& path) {
  Uuid u{};
  uint64_t h[2] = {0xcbf29ce484222325ull, 0x84222325cbf29ce4ull};
  for (uint64_t& x : h) {
    for (unsigned char c : path) x = (x ^ c) * 0x100000001b3ull;
  }
  memcpy(u.data(), h, 16);
  return u;
}

absl::Status Errno(const std::string& what, const std::string& path) {
  return absl::FailedPreconditionError(
      absl::StrCat(path, ": ", what, ": ", strerror(errno)));
}

class SystemFsProbe : public FsProbe {
 public:
  explicit SystemFsProbe(std::string by_uuid_dir)
      : by_uuid_dir_(std::move(by_uuid_dir)) {}

  absl::StatusOr<FsIdentity> Probe(const std::string& path) override {
    struct stat st;
    if (stat(path.c_str(), &st) != 0) return Errno("stat", path);
    if (!S_ISDIR(st.st_mode)) {
      return absl::FailedPreconditionError(
          absl::StrCat(path, ": not a directory"));
    }
    struct statfs sf;
    if (statfs(path.c_str(), &sf) != 0) return Errno("statfs", path);
    FsIdentity id;
    id.major = major(st.st_dev);
    id.minor = minor(st.st_dev);
    id.inode = st.st_ino;
    if (path == "/") {
      id.fs_root = true;
    } else {
      struct stat parent;
      const std::string up = path + "/..";
      if (stat(up.c_str(), &parent) != 0) return Errno("stat", up);
      id.fs_root = parent.st_dev != st.st_dev || parent.st_ino == st.st_ino;
    }
    uint32_t w0, w1;
    static_assert(sizeof(sf.f_fsid) == 8);
    memcpy(&w0, &sf.f_fsid, 4);
    memcpy(&w1, reinterpret_cast<const char*>(&sf.f_fsid) + 4, 4);
    if (UuidFromStatfs(static_cast<uint64_t>(sf.f_type), id.major)) {
      // A file system with neither a device nor an fsid (older tmpfs)
      // still needs a uuid, or the kernel refuses the export; like
      // rpc.mountd's pseudo-root directories, take one from the path.
      id.uuid = (w0 != 0 || w1 != 0) ? UuidFromStatfsFsid(w0, w1)
                                     : UuidFromPath(path);
    } else {
      id.uuid = BlockDeviceUuid(st.st_dev);
    }
    return id;
  }

 private:
  // The by-uuid link that leads to the device; cached per device.
  std::optional<Uuid> BlockDeviceUuid(dev_t dev) {
    absl::MutexLock lock(&mu_);
    auto it = by_device_.find(dev);
    if (it != by_device_.end()) return it->second;
    std::optional<Uuid> found;
    if (DIR* d = opendir(by_uuid_dir_.c_str())) {
      while (dirent* e = readdir(d)) {
        if (e->d_name[0] == '.') continue;
        struct stat b;
        const std::string link = by_uuid_dir_ + "/" + e->d_name;
        if (stat(link.c_str(), &b) == 0 && S_ISBLK(b.st_mode) &&
            b.st_rdev == dev) {
          found = UuidFromText(e->d_name);
          break;
        }
      }
      closedir(d);
    }
    by_device_[dev] = found;
    return found;
  }

  const std::string by_uuid_dir_;
  absl::Mutex mu_;
  absl::flat_hash_map<dev_t, std::optional<Uuid>> by_device_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace

bool UuidFromStatfs(uint64_t f_type, uint32_t dev_major) {
  // nonblkid_filesystems of nfs-utils' cache.c.
  static constexpr uint64_t kTypes[] = {
      0x2fc12fc1,  // ZFS
      0x9123683e,  // btrfs
      0xff534d42,  // CIFS
      0x1373,      // devfs
      0x73757245,  // coda
      0x564c,      // NCP
      0x6969,      // NFS
      0x9fa0,      // proc
      0x62656572,  // sysfs
      0x517b,      // SMB
      0x01021994,  // tmpfs
  };
  for (uint64_t t : kTypes) {
    if (t == (f_type & 0xffffffffu)) return true;
  }
  // No block device behind it (overlay, 9p, ...): the kernel needs a uuid.
  return dev_major == 0;
}

std::unique_ptr<FsProbe> MakeSystemFsProbe(std::string by_uuid_dir) {
  return std::make_unique<SystemFsProbe>(std::move(by_uuid_dir));
}

std::optional<Uuid> UuidFromText(std::string_view text) {
  Uuid u{};
  size_t i = 0;
  bool any = false;
  for (char c : text) {
    int v;
    if (c >= '0' && c <= '9') {
      v = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      v = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      v = c - 'A' + 10;
    } else {
      continue;
    }
    any = true;
    u[i / 2] ^= static_cast<uint8_t>((i & 1) == 0 ? v << 4 : v);
    if (++i == 2 * u.size()) i = 0;
  }
  if (!any) return std::nullopt;
  return u;
}

}  // namespace sharemgrd::kernel
