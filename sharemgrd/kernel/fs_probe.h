// FsProbe: what the kernel's fsids of an export root are made of (device,
// inode, whether it is a file system's root) and the uuid to send with its
// export line. An interface so tests can give any identity.
//
// The uuid rule is rpc.mountd's for file systems it does not ask libblkid
// about (ZFS, btrfs, tmpfs and other file systems without a block
// device): statfs(2) f_fsid printed "%08x%08x", 8 bytes + 8 zeros. Block
// device file systems get no uuid: the kernel then identifies them by
// device number. Thread-safe.
#ifndef SHAREMGRD_KERNEL_FS_PROBE_H_
#define SHAREMGRD_KERNEL_FS_PROBE_H_

#include <cstdint>
#include <memory>
#include <string>

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

std::unique_ptr<FsProbe> MakeSystemFsProbe();

// Whether rpc.mountd takes the uuid of a file system of statfs type
// `f_type` on device major `dev_major` from statfs rather than libblkid.
bool UuidFromStatfs(uint64_t f_type, uint32_t dev_major);

}  // namespace sharemgrd::kernel

#endif  // SHAREMGRD_KERNEL_FS_PROBE_H_
