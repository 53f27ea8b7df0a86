// FsProbe: what the kernel's fsids of an export root are made of (device,
// inode, whether it is a file system's root) and the uuid to send with its
// export line. An interface so tests can give any identity.
//
// The uuid is rpc.mountd's (nfs-utils 2.6 support/export/cache.c,
// uuid_by_path with type 0), so handles stay valid when a server switches
// between rpc.mountd and sharemgrd:
// - a file system rpc.mountd asks libblkid about (not one of
//   nonblkid_filesystems: ZFS, btrfs, tmpfs, NFS, CIFS and other pseudo or
//   network file systems): the UUID tag libblkid reports for its device
//   (get_uuid_blkdev; none for btrfs), folded by get_uuid;
// - otherwise, or when libblkid has no UUID: statfs(2) f_fsid printed
//   "%08x%08x" and folded (8 bytes + 8 zeros), unless it is zero;
// - otherwise no uuid, and the kernel identifies the file system by its
//   device number. One difference: a file system libblkid is not asked
//   about whose f_fsid is zero (the kernel refuses to export it without a
//   uuid, so rpc.mountd cannot share it) gets PseudoRootUuid(path).
// Thread-safe.
#ifndef SHAREMGRD_KERNEL_FS_PROBE_H_
#define SHAREMGRD_KERNEL_FS_PROBE_H_

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "fsid.h"

namespace sharemgrd::kernel {

class FsProbe {
 public:
  virtual ~FsProbe() = default;
  // Fails (naming the path) if the path cannot be examined or is not a
  // directory.
  [[nodiscard]] virtual absl::StatusOr<FsIdentity> Probe(
      const std::string& path) = 0;
};

// stat(2), statfs(2) and libblkid (BlkidUuids). Thread-safe.
std::unique_ptr<FsProbe> MakeSystemFsProbe();
// `probe`, also held elsewhere (the daemon's probe, shared with the kernel
// mode: one libblkid cache). `probe` must be thread-safe.
std::unique_ptr<FsProbe> MakeSharedFsProbe(std::shared_ptr<FsProbe> probe);

// The identity a share recorded when it was added (libshare/fs_identity.h:
// every head answers the kernel with it), or nullopt for a path that is no
// share or recorded none.
using RecordedUuid = std::function<std::optional<Uuid>(const std::string&)>;
// `live`, with the uuid of a share's path replaced by the one it recorded
// (device and inode stay the live ones: a replica copied block for block
// has the same inodes). A difference is logged once per path and live
// uuid (`log`, may be null): "PATH: its file system's identity is now
// uuid:..., recorded uuid:...: answered with the recorded one". Except
// for a share now at the root of its own file system whose recorded
// identity is the live one of the file system above it (added before its
// own was mounted): answering it would give two exports one identity, so
// its own is answered, and that is logged once.
std::unique_ptr<FsProbe> MakeRecordedIdentityProbe(
    std::unique_ptr<FsProbe> live, RecordedUuid recorded,
    std::function<void(const std::string&)> log);

// rpc.mountd's get_uuid_blkdev in two steps, each usable alone: the device
// node of a device number, then the UUID tag of the file system on a
// device node or image file. Reads go through one libblkid cache (libblkid
// caches each device and probes it again when its cached tags are older
// than libblkid's interval, as in rpc.mountd's long-lived cache), kept in
// memory only: the system's blkid.tab is neither read nor written.
// Thread-safe (libblkid's cache is not: one mutex around it).
class BlkidUuids {
 public:
  BlkidUuids();
  ~BlkidUuids();
  BlkidUuids(const BlkidUuids&) = delete;
  BlkidUuids& operator=(const BlkidUuids&) = delete;

  // The device node libblkid finds for device number `dev`
  // (blkid_devno_to_devname), or nullopt (no such block device, or a
  // file system without one: major 0).
  static std::optional<std::string> DeviceName(dev_t dev);

  // The UUID tag of the file system on `device`, a block device node or a
  // regular file holding an image: nullopt if libblkid finds no UUID (or
  // no single file system), cannot read it, or finds btrfs (whose subvolumes
  // share one UUID: rpc.mountd takes f_fsid instead).
  std::optional<std::string> UuidText(const std::string& device);

  // DeviceName then UuidText: get_uuid_blkdev for a path on device `dev`.
  std::optional<std::string> UuidTextOfDevice(dev_t dev);

 private:
  struct Cache;
  absl::Mutex mu_;
  std::unique_ptr<Cache> cache_ ABSL_GUARDED_BY(mu_);
};

// A UUID text as rpc.mountd's get_uuid folds it into 16 bytes: its hex
// digits in order, two to a byte, xor-folded over the start past 32
// digits; zeros after the last digit (all zeros without any).
// "1b4e28ba-2fa1-11d2-883f-0016d3cca427" gives those 16 bytes, vfat's
// "ABCD-1234" 0xab 0xcd 0x12 0x34 and 12 zeros.
Uuid UuidFromText(std::string_view text);

// Whether rpc.mountd takes the uuid of a file system of statfs type
// `f_type` on device major `dev_major` from statfs alone, never asking
// libblkid: the types of nonblkid_filesystems, and any file system
// without a block device (major 0), for which libblkid finds no device
// and rpc.mountd falls back to f_fsid all the same.
bool UuidFromStatfs(uint64_t f_type, uint32_t dev_major);

// The uuid Probe gives a path: `blkid_uuid` (the UUID text libblkid
// reported; nullopt when it was not asked or had none) folded, else
// f_fsid (`fsid_word0`, `fsid_word1` as statfs returns them) unless both
// words are zero; else, when `statfs_only` (UuidFromStatfs), the
// PseudoRootUuid of `path`, else nullopt.
std::optional<Uuid> UuidByPath(const std::string& path, bool statfs_only,
                               const std::optional<std::string>& blkid_uuid,
                               uint32_t fsid_word0, uint32_t fsid_word1);

// The uuid rpc.mountd gives an NFSv4 pseudo-root directory other than "/"
// (nfs-utils 2.5.4 and later, support/export/v4root.c, v4root_create):
// when the kernel refuses the directory as an export without a uuid
// (export_test), an RFC 4122 version 5 UUID of the path with the fixed
// seed 39c6b5c1-3f24-4f4e-977c-7fe6546b8a25 (libuuid's
// uuid_generate_sha1). export_test always fails on a file system without
// a block device (tmpfs, ZFS, overlay), and on any other as well unless
// the kernel holds the auth domain "-test-client-", which only exportfs
// creates and its own cache flush removes again: measured with rpc.mountd
// 2.6.2 on Linux 6.1 after exportfs -ra, after a re-export and after a
// restart of rpc.mountd, a directory on ext4 got this uuid every time.
// rpc.mountd turns the UUID into text and removes the hyphens without
// ending the string where the digits end (36 digits: the last 4 twice),
// then folds it with get_uuid, so bytes 0 and 1 are xored with bytes 14
// and 15. This is that result, bit for bit.
Uuid PseudoRootUuid(std::string_view path);

}  // namespace sharemgrd::kernel

#endif  // SHAREMGRD_KERNEL_FS_PROBE_H_
