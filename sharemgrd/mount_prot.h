// MOUNT protocol constants (RFC 1813 appendix I for version 3, RFC 1094
// appendix A for version 1). The replies are encoded by hand with
// XdrWriter (see mount_service.cc); these are the numbers on the wire.
#ifndef SHAREMGRD_MOUNT_PROT_H_
#define SHAREMGRD_MOUNT_PROT_H_

#include <cstdint>

namespace sharemgrd {

inline constexpr uint32_t kMountProgram = 100005;
inline constexpr uint32_t kMountV1 = 1;
inline constexpr uint32_t kMountV3 = 3;

inline constexpr uint32_t kMntPathLen = 1024;  // MNTPATHLEN
inline constexpr uint32_t kMntNameLen = 255;   // MNTNAMLEN
inline constexpr uint32_t kFhSize3 = 64;       // FHSIZE3
inline constexpr uint32_t kFhSize = 32;        // FHSIZE (version 1)

enum MountProc : uint32_t {
  kMountProcNull = 0,
  kMountProcMnt = 1,
  kMountProcDump = 2,
  kMountProcUmnt = 3,
  kMountProcUmntAll = 4,
  kMountProcExport = 5,
  kMountProcExportAll = 6,  // versions 1 and 2 only
};

// mountstat3; version 1 uses the same errno values in fhstatus.
enum MountStat : uint32_t {
  kMnt3Ok = 0,
  kMnt3ErrPerm = 1,
  kMnt3ErrNoent = 2,
  kMnt3ErrIo = 5,
  kMnt3ErrAcces = 13,
  kMnt3ErrNotdir = 20,
  kMnt3ErrInval = 22,
  kMnt3ErrNametoolong = 63,
  kMnt3ErrNotsupp = 10004,
  kMnt3ErrServerfault = 10006,
};

}  // namespace sharemgrd

#endif  // SHAREMGRD_MOUNT_PROT_H_
