// FsProbe: what the kernel's fsids of an export root are made of (device,
// inode, whether it is a file system's root) and the uuid to send with its
// export line. An interface so tests can give any identity.
//
// The uuid is rpc.mountd's (support/export/cache.c, uuid_by_path), so
// handles stay valid when a server switches between rpc.mountd and
// sharemgrd: for file systems it does not ask libblkid about (ZFS, btrfs,
// tmpfs and others without a block device), statfs(2) f_fsid printed
// "%08x%08x", 8 bytes + 8 zeros; for a block device, the UUID libblkid
// reports, found here through udev's /dev/disk/by-uuid links; without one
// (no udev), no uuid, and the kernel identifies the file system by device
// number. A file system with neither a device nor an f_fsid gets a uuid
// made from the path (rpc.mountd does that for pseudo-root directories
// only, and refuses such shares). Thread-safe.
#ifndef SHAREMGRD_KERNEL_FS_PROBE_H_
#define SHAREMGRD_KERNEL_FS_PROBE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "kernel/fsid.h"

namespace sharemgrd::kernel {

class FsProbe {
 public:
  virtual ~FsProbe() = default;
  // Fails (naming the path) if the path cannot be examined or is not a
  // directory.
  [[nodiscard]] virtual absl::StatusOr<FsIdentity> Probe(
      const std::string& path) = 0;
};

// by_uuid_dir: udev's links named by file-system UUID to block devices.
std::unique_ptr<FsProbe> MakeSystemFsProbe(
    std::string by_uuid_dir = "/dev/disk/by-uuid");

// A UUID text ("1b4e28ba-2fa1-11d2-883f-0016d3cca427", "ABCD-1234") as
// rpc.mountd's get_uuid folds it into 16 bytes: its hex digits in order,
// xor-folded past 16 bytes, zeros after the last; nullopt without digits.
std::optional<Uuid> UuidFromText(std::string_view text);

// Whether rpc.mountd takes the uuid of a file system of statfs type
// `f_type` on device major `dev_major` from statfs rather than libblkid.
bool UuidFromStatfs(uint64_t f_type, uint32_t dev_major);

}  // namespace sharemgrd::kernel

#endif  // SHAREMGRD_KERNEL_FS_PROBE_H_
