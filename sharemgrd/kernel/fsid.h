// File-system ids as nfsd puts them in file handles (fs/nfsd/nfsfh.h,
// mk_fsid) and asks for them on the nfsd.fh channel: one byte string per
// FSIDTYPE, built from the device, the export root's inode and the
// export's uuid. Pure functions; thread-compatible.
//
// Byte order is the kernel's: FSID_DEV and FSID_MAJOR_MINOR hold the
// device in network order, everything else (inode, encoded device, uuid
// words) in host order, since only this host reads them back.
#ifndef SHAREMGRD_KERNEL_FSID_H_
#define SHAREMGRD_KERNEL_FSID_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace sharemgrd::kernel {

enum FsidType : int {
  kFsidDev = 0,         // 4: htonl(major << 16 | minor), 4: inode
  kFsidNum = 1,         // 4: the export's fsid= number
  kFsidMajorMinor = 2,  // 4: htonl(major), 4: htonl(minor), 4: inode
  kFsidEncodeDev = 3,   // 4: new_encode_dev(dev), 4: inode
  kFsidUuid4Inum = 4,   // 4: inode, 4: xor of the uuid's four words
  kFsidUuid8 = 5,       // 8: uuid words 0^2, 1^3 (export at a fs root)
  kFsidUuid16 = 6,      // 16: uuid (export at a fs root)
  kFsidUuid16Inum = 7,  // 8: inode, 16: uuid
};

using Uuid = std::array<uint8_t, 16>;

// What an export root's fsids are made of.
struct FsIdentity {
  uint32_t major = 0;
  uint32_t minor = 0;
  uint64_t inode = 0;
  // The uuid the export line carries (file systems without a block
  // device); the uuid fsid types exist only with one.
  std::optional<Uuid> uuid;
  bool fs_root = false;  // the path is the root of its file system
  // For a directory above a share (other than "/"): the uuid of its
  // NFSv4 pseudo-root entry, which rpc.mountd makes from the path
  // (PseudoRootUuid), not the file system's. A path may be a share for
  // one client and a pseudo directory for another: handles of both kinds
  // lead to it.
  std::optional<Uuid> pseudo_uuid;
  bool operator==(const FsIdentity& o) const {
    return major == o.major && minor == o.minor && inode == o.inode &&
           uuid == o.uuid && fs_root == o.fs_root &&
           pseudo_uuid == o.pseudo_uuid;
  }
};

// The fsid bytes of `type` for `id`, or nullopt if the kernel never makes
// that type for it: FSID_NUM (a number, not an identity), FSID_DEV for a
// device number over 255, uuid types without a uuid.
std::optional<std::string> EncodeFsid(int type, const FsIdentity& id);

// The bytes of FSID_NUM `n`.
std::string FsidNumBytes(uint32_t n);

struct FsidKey {
  int type = 0;
  std::string bytes;
  bool operator==(const FsidKey& o) const {
    return type == o.type && bytes == o.bytes;
  }
};
// Every (type, bytes) a handle for an export rooted at `id` may carry:
// the device types always, the uuid types with a uuid (and again with the
// pseudo-root uuid), the types without an inode (UUID8, UUID16) only at a
// file system's root, as the kernel makes them (set_version_and_fsid_type).
std::vector<FsidKey> FsidKeys(const FsIdentity& id);

// One map key for an fsid: its type as one byte, then its bytes (the
// fsid index, the mirror and the pusher all key by it).
std::string FsidMapKey(int type, std::string_view bytes);

// rpc.mountd's uuid from statfs(2) f_fsid (support/export/cache.c,
// uuid_by_path): the words printed "%08x%08x" read back as 8 bytes,
// followed by 8 zero bytes.
Uuid UuidFromStatfsFsid(uint32_t word0, uint32_t word1);

// What a handle's fsid says, for logs and tests.
struct DecodedFsid {
  int type = 0;
  uint32_t major = 0, minor = 0;  // device types
  uint64_t inode = 0;             // types with an inode
  uint32_t number = 0;            // FSID_NUM
  std::string uuid_part;          // uuid types: the (folded) uuid bytes
};
// Fails on an unknown type or a length that does not match it.
[[nodiscard]] absl::StatusOr<DecodedFsid> DecodeFsid(int type,
                                                     std::string_view bytes);

}  // namespace sharemgrd::kernel

#endif  // SHAREMGRD_KERNEL_FSID_H_
