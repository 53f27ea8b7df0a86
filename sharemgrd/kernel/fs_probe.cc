#include "fs_probe.h"

#include <blkid/blkid.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <uuid/uuid.h>

#include <fcntl.h>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "libshare/fs_identity.h"

namespace sharemgrd::kernel {
namespace {

absl::Status Errno(const std::string& what, const std::string& path) {
  return absl::FailedPreconditionError(
      absl::StrCat(path, ": ", what, ": ", strerror(errno)));
}

#ifndef STATX_ATTR_MOUNT_ROOT
#define STATX_ATTR_MOUNT_ROOT 0x00002000  // Linux 5.8
#endif

// How long a device's libblkid answer is reused for paths on it whose
// statfs f_fsid is the same: a batch of 15,000 shares on one file system
// asks libblkid once, not 15,000 times (each a sysfs look-up and a stat
// of the device node under libblkid's lock: 80% of a probe's time).
constexpr absl::Duration kDeviceUuidReuse = absl::Seconds(2);

class SystemFsProbe : public FsProbe {
 public:
  absl::StatusOr<FsIdentity> Probe(const std::string& path) override {
    // One statx: the identity, and whether the path is a mount's root
    // (only then can it be its file system's root: the parent is looked
    // at only for those).
    struct statx sx;
    if (statx(AT_FDCWD, path.c_str(), 0, STATX_TYPE | STATX_INO, &sx) != 0) {
      return Errno("stat", path);
    }
    if (!S_ISDIR(sx.stx_mode)) {
      return absl::FailedPreconditionError(
          absl::StrCat(path, ": not a directory"));
    }
    const dev_t dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
    struct statfs sf;
    if (statfs(path.c_str(), &sf) != 0) return Errno("statfs", path);
    FsIdentity id;
    id.major = sx.stx_dev_major;
    id.minor = sx.stx_dev_minor;
    id.inode = sx.stx_ino;
    const bool known = sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT;
    if (path == "/") {
      id.fs_root = true;
    } else if (known && !(sx.stx_attributes & STATX_ATTR_MOUNT_ROOT)) {
      id.fs_root = false;
    } else {
      struct stat parent;
      const std::string up = path + "/..";
      if (stat(up.c_str(), &parent) != 0) return Errno("stat", up);
      id.fs_root = parent.st_dev != dev || parent.st_ino == sx.stx_ino;
    }
    uint32_t w0, w1;
    static_assert(sizeof(sf.f_fsid) == 8);
    memcpy(&w0, &sf.f_fsid, 4);
    memcpy(&w1, reinterpret_cast<const char*>(&sf.f_fsid) + 4, 4);
    const bool statfs_only =
        UuidFromStatfs(static_cast<uint64_t>(sf.f_type), id.major);
    std::optional<std::string> text;
    if (!statfs_only) text = DeviceUuidText(dev, w0, w1);
    id.uuid = UuidByPath(path, statfs_only, text, w0, w1);
    return id;
  }

 private:
  // libblkid's UUID text of the file system on `dev`, reused for
  // kDeviceUuidReuse while statfs says the same f_fsid (a device number
  // given to another file system meanwhile is asked again).
  std::optional<std::string> DeviceUuidText(dev_t dev, uint32_t w0,
                                            uint32_t w1) {
    const absl::Time now = absl::Now();
    {
      absl::MutexLock lock(&mu_);
      auto it = recent_.find(dev);
      if (it != recent_.end() && it->second.w0 == w0 && it->second.w1 == w1 &&
          now - it->second.at < kDeviceUuidReuse) {
        return it->second.text;
      }
    }
    std::optional<std::string> text = blkid_.UuidTextOfDevice(dev);
    absl::MutexLock lock(&mu_);
    recent_[dev] = {w0, w1, text, now};
    return text;
  }

  struct Recent {
    uint32_t w0 = 0, w1 = 0;
    std::optional<std::string> text;
    absl::Time at;
  };
  BlkidUuids blkid_;
  absl::Mutex mu_;
  absl::flat_hash_map<dev_t, Recent> recent_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

std::unique_ptr<FsProbe> MakeSystemFsProbe() {
  return std::make_unique<SystemFsProbe>();
}

namespace {

class RecordedIdentityProbe final : public FsProbe {
 public:
  RecordedIdentityProbe(std::unique_ptr<FsProbe> live, RecordedUuid recorded,
                        std::function<void(const std::string&)> log)
      : live_(std::move(live)),
        recorded_(std::move(recorded)),
        log_(std::move(log)) {}

  absl::StatusOr<FsIdentity> Probe(const std::string& path) override {
    absl::StatusOr<FsIdentity> id = live_->Probe(path);
    if (!id.ok()) return id;
    std::optional<Uuid> want = recorded_(path);
    if (!want || id->uuid == want) return id;
    if (id->fs_root && IsParentsIdentity(path, *id, *want)) {
      // Added before its own file system was mounted, the share recorded
      // the one above it: answered, that identity would be two exports'.
      if (log_ && Differs(path, id->uuid)) {
        log_(absl::StrCat(
            path, ": recorded ", libshare::FormatFsIdentity(*want),
            " is the identity of the file system above it (the share was "
            "added before its own was mounted): its own, ",
            Describe(*id), ", is answered; remove the share and add it "
            "again to record its own"));
      }
      return id;
    }
    if (log_ && Differs(path, id->uuid)) {
      log_(absl::StrCat(path, ": its file system's identity is now ",
                        Describe(*id),
                        ", recorded ", libshare::FormatFsIdentity(*want),
                        " when it was added: the recorded identity is answered"));
    }
    id->uuid = want;
    return id;
  }

 private:
  static std::string Describe(const FsIdentity& id) {
    return id.uuid ? libshare::FormatFsIdentity(*id.uuid)
                   : absl::StrCat("none (device ", id.major, ":", id.minor,
                                  ")");
  }
  // Whether `want` is the live identity of the file system that holds the
  // directory above `path`, another than `id`'s.
  bool IsParentsIdentity(const std::string& path, const FsIdentity& id,
                         const Uuid& want) {
    const std::size_t slash = path.rfind('/');
    if (slash == std::string::npos || path.size() <= 1) return false;
    absl::StatusOr<FsIdentity> parent =
        live_->Probe(slash == 0 ? std::string("/") : path.substr(0, slash));
    return parent.ok() && parent->uuid == want &&
           (parent->major != id.major || parent->minor != id.minor);
  }
  // True the first time `live` is seen for `path` (a bounded memory: past
  // kRemembered paths, each difference is logged).
  bool Differs(const std::string& path, const std::optional<Uuid>& live) {
    absl::MutexLock l(&mu_);
    auto [it, added] = logged_.try_emplace(path, live);
    if (!added && it->second == live) return false;
    it->second = live;
    if (logged_.size() > kRemembered) logged_.clear();
    return true;
  }
  static constexpr size_t kRemembered = 100000;

  const std::unique_ptr<FsProbe> live_;
  const RecordedUuid recorded_;
  const std::function<void(const std::string&)> log_;
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::optional<Uuid>> logged_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace

namespace {

class SharedFsProbe : public FsProbe {
 public:
  explicit SharedFsProbe(std::shared_ptr<FsProbe> probe)
      : probe_(std::move(probe)) {}
  absl::StatusOr<FsIdentity> Probe(const std::string& path) override {
    return probe_->Probe(path);
  }

 private:
  std::shared_ptr<FsProbe> probe_;
};

}  // namespace

std::unique_ptr<FsProbe> MakeSharedFsProbe(std::shared_ptr<FsProbe> probe) {
  return std::make_unique<SharedFsProbe>(std::move(probe));
}

std::unique_ptr<FsProbe> MakeRecordedIdentityProbe(
    std::unique_ptr<FsProbe> live, RecordedUuid recorded,
    std::function<void(const std::string&)> log) {
  return std::make_unique<RecordedIdentityProbe>(
      std::move(live), std::move(recorded), std::move(log));
}

struct BlkidUuids::Cache {
  blkid_cache cache = nullptr;
};

BlkidUuids::BlkidUuids() : cache_(std::make_unique<Cache>()) {
  // "/dev/null": an empty cache that is never saved (libblkid writes its
  // cache file when it is freed).
  if (blkid_get_cache(&cache_->cache, "/dev/null") != 0) {
    cache_->cache = nullptr;
  }
}

BlkidUuids::~BlkidUuids() {
  absl::MutexLock lock(&mu_);
  if (cache_->cache != nullptr) blkid_put_cache(cache_->cache);
}

std::optional<std::string> BlkidUuids::DeviceName(dev_t dev) {
  if (major(dev) == 0) return std::nullopt;
  char* name = blkid_devno_to_devname(dev);
  if (name == nullptr) return std::nullopt;
  std::string out(name);
  free(name);
  return out;
}

std::optional<std::string> BlkidUuids::UuidText(const std::string& device) {
  absl::MutexLock lock(&mu_);
  if (cache_->cache == nullptr) return std::nullopt;
  // BLKID_DEV_NORMAL: add the device if new, probe it again if its tags
  // are stale, as rpc.mountd asks.
  blkid_dev dev =
      blkid_get_dev(cache_->cache, device.c_str(), BLKID_DEV_NORMAL);
  if (dev == nullptr) return std::nullopt;
  blkid_tag_iterate iter = blkid_tag_iterate_begin(dev);
  if (iter == nullptr) return std::nullopt;
  std::optional<std::string> uuid;
  const char* type;
  const char* value;
  while (blkid_tag_next(iter, &type, &value) == 0) {
    if (strcmp(type, "UUID") == 0) uuid = value;
    if (strcmp(type, "TYPE") == 0 && strcmp(value, "btrfs") == 0) {
      uuid.reset();
      break;
    }
  }
  blkid_tag_iterate_end(iter);
  return uuid;
}

std::optional<std::string> BlkidUuids::UuidTextOfDevice(dev_t dev) {
  std::optional<std::string> name = DeviceName(dev);
  if (!name.has_value()) return std::nullopt;
  return UuidText(*name);
}

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
  return dev_major == 0;
}

std::optional<Uuid> UuidByPath(const std::string& path, bool statfs_only,
                               const std::optional<std::string>& blkid_uuid,
                               uint32_t fsid_word0, uint32_t fsid_word1) {
  if (blkid_uuid.has_value()) return UuidFromText(*blkid_uuid);
  if (fsid_word0 != 0 || fsid_word1 != 0) {
    return UuidFromStatfsFsid(fsid_word0, fsid_word1);
  }
  if (statfs_only) return PseudoRootUuid(path);
  return std::nullopt;
}

Uuid UuidFromText(std::string_view text) {
  return libshare::FoldUuidText(text);
}

Uuid PseudoRootUuid(std::string_view path) {
  uuid_t seed, made;
  uuid_parse("39c6b5c1-3f24-4f4e-977c-7fe6546b8a25", seed);
  uuid_generate_sha1(made, seed, path.data(), path.size());
  char text[UUID_STR_LEN];
  uuid_unparse_upper(made, text);
  // v4root_create's hyphen removal, which leaves the string's last 4
  // characters after the 32 digits it moved up.
  size_t j = 0;
  for (size_t i = 0; text[i] != '\0'; ++i) {
    if (text[i] != '-') text[j++] = text[i];
  }
  return UuidFromText(text);
}

}  // namespace sharemgrd::kernel
