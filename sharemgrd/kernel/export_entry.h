// From a share's compiled options and the access decision for one client
// to the nfsd.export entry the kernel holds for (client domain, path):
// export flags (include/uapi/linux/nfsd/export.h), anonymous ids, the
// secinfo list and the uuid. Also the pseudo-root's entries (V4ROOT).
// Pure functions.
#ifndef SHAREMGRD_KERNEL_EXPORT_ENTRY_H_
#define SHAREMGRD_KERNEL_EXPORT_ENTRY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "authcache/evaluate.h"
#include "fsid.h"
#include "line_format.h"
#include "libshare/options.h"

namespace sharemgrd::kernel {

namespace nfsexp {
inline constexpr uint32_t kReadonly = 0x1;
inline constexpr uint32_t kInsecurePort = 0x2;
inline constexpr uint32_t kRootSquash = 0x4;
inline constexpr uint32_t kAllSquash = 0x8;
inline constexpr uint32_t kAsync = 0x10;
inline constexpr uint32_t kGatheredWrites = 0x20;
inline constexpr uint32_t kNoReaddirPlus = 0x40;
inline constexpr uint32_t kSecurityLabel = 0x80;
inline constexpr uint32_t kNoHide = 0x200;
inline constexpr uint32_t kNoSubtreeCheck = 0x400;
inline constexpr uint32_t kNoAuthNlm = 0x800;
inline constexpr uint32_t kFsid = 0x2000;
inline constexpr uint32_t kCrossMount = 0x4000;
inline constexpr uint32_t kNoAcl = 0x8000;
inline constexpr uint32_t kV4Root = 0x10000;
inline constexpr uint32_t kPnfs = 0x20000;
// The flags that may differ between the flavors of one export
// (NFSEXP_SECINFO_FLAGS; the kernel refuses other differences).
inline constexpr uint32_t kSecinfoFlags =
    kReadonly | kRootSquash | kAllSquash | kInsecurePort;
}  // namespace nfsexp

inline constexpr int64_t kNobody = 65534;

// /proc/fs/nfsd/export_features: "0xALLFLAGS 0xSECINFO_FLAGS". The
// default (no such file, kernels before 3.x) is the flags this code knows.
struct ExportFeatures {
  uint32_t all_flags = 0x3feff;
  uint32_t secinfo_flags = nfsexp::kSecinfoFlags;
};
[[nodiscard]] absl::StatusOr<ExportFeatures> ParseExportFeatures(
    std::string_view text);

// The decision for one security flavor of a share.
struct FlavorGrant {
  libshare::SecFlavor flavor = libshare::SecFlavor::kSys;
  authcache::Access access = authcache::Access::kNone;
  bool root = false;  // root keeps uid 0 (root= lists the client)
};

struct ShareExportInput {
  const libshare::ShareOptions* options = nullptr;
  std::vector<FlavorGrant> grants;  // in the share's flavor order
  std::optional<Uuid> uuid;         // from the file system, if it needs one
  bool insecure = false;            // accept NFS calls from ports >= 1024
  bool root_path = false;           // the path is "/": fsid 0 (v4 root)
};

// The entry for a client that may use the share with at least one flavor
// the kernel knows, or nullopt (answer negative). Each granted flavor is a
// secinfo entry, in order, with READONLY unless rw and ROOTSQUASH unless
// root; the export's own flags are its first flavor's. Always
// NOSUBTREECHECK and wdelay; nohide gives NOHIDE; anon=UID sets anonuid
// and anongid (anon=-1 cannot be said to the kernel: 65534). Masked with
// `features`.
std::optional<ExportEntry> ShareExport(const ShareExportInput& in,
                                       const ExportFeatures& features);

// A pseudo-root directory, as rpc.mountd answers it (nfs-utils 2.6
// support/export/v4root.c pseudo_root and v4root_create, written by
// cache.c dump_to_cache): READONLY, NOSUBTREECHECK, V4ROOT, INSECURE_PORT,
// fsid 0, anonuid and anongid 65534; "/" also FSID and no uuid, any other
// directory `uuid`: rpc.mountd's is PseudoRootUuid(path) (fs_probe.h),
// made from the path, not the file system's uuid. secinfo lists every flavor of
// nfs-utils' flav_map that has a number, in its order: krb5, krb5i,
// krb5p, sys (set_pseudofs_security; AUTH_NULL is left out), each with
// the export's flags, so any client may walk it. (nfs-utils 2.6.3 and
// later leave the krb5 flavors out when /etc/krb5.keytab does not exist.)
ExportEntry PseudoExport(bool root_path, const std::optional<Uuid>& uuid,
                         const ExportFeatures& features);

}  // namespace sharemgrd::kernel

#endif  // SHAREMGRD_KERNEL_EXPORT_ENTRY_H_
