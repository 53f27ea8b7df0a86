// A share's recorded file-system identity: the uuid its file system had
// when the share was added (the one rpc.mountd computes for the export:
// sharemgrd/kernel/fs_probe.h), or the uuid= an imported exports line gave.
// It is kept in the table (and the cluster's change log), so every head
// answers the kernel with the same identity and hands out the same file
// handles, also for a replica whose own uuid differs (sharemgrd.8,
// "File-system identity").
//
// Text form, in the stores and the management protocol: "uuid:" and 32
// lowercase hex digits; "" when nothing is recorded (a share stored before
// schema 6, or a file system without a uuid: the kernel then identifies
// it by its device number).
#ifndef LIBSHARE_FS_IDENTITY_H_
#define LIBSHARE_FS_IDENTITY_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace libshare {

using FsUuid = std::array<uint8_t, 16>;

// "uuid:" and the 32 lowercase hex digits of `u`.
std::string FormatFsIdentity(const FsUuid& u);
inline std::string FormatFsIdentity(const std::optional<FsUuid>& u) {
  return u ? FormatFsIdentity(*u) : std::string();
}

// The uuid of a text FormatFsIdentity made; nullopt for "". Fails,
// quoting the text, on anything else.
[[nodiscard]] absl::StatusOr<std::optional<FsUuid>> ParseFsIdentity(
    std::string_view text);

// A UUID text as rpc.mountd's get_uuid folds it into 16 bytes (exports(5)
// uuid=, libblkid's UUID tags): its hex digits in order, two to a byte,
// xor-folded over the start past 32 digits; zeros after the last digit.
// Other characters (dashes, colons) are skipped.
FsUuid FoldUuidText(std::string_view text);

}  // namespace libshare

#endif  // LIBSHARE_FS_IDENTITY_H_
