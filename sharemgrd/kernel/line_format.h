// The text of the kernel's cache channels (/proc/net/rpc/CACHE/channel):
// one request or reply per line, fields as "qwords" separated by spaces.
// A text qword escapes space, tab, newline and backslash as \ooo (octal);
// a binary one is "\x" followed by lower-case hex. An empty field cannot
// be written: a negative reply is the key and the expiry, content left off.
// Sources: Linux net/sunrpc/cache.c (qword_add, qword_get),
// fs/nfsd/export.c (expkey_parse, svc_export_parse),
// net/sunrpc/svcauth_unix.c (ip_map_parse, unix_gid_parse).
//
// Pure functions and plain values; thread-compatible.
#ifndef SHAREMGRD_KERNEL_LINE_FORMAT_H_
#define SHAREMGRD_KERNEL_LINE_FORMAT_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "libshare/options.h"

namespace sharemgrd::kernel {

// Builds one line. Every field is followed by a space; Finish() turns the
// last one into the newline.
class LineWriter {
 public:
  // A text field. `text` must not be empty (an empty field reads as
  // "absent"); callers never pass one, a debug check says so.
  void Text(std::string_view text);
  void Hex(std::string_view bytes);  // not empty, as Text
  void Int(int64_t v);
  void Uint(uint64_t v);
  // The line, ending in "\n". An empty writer gives "\n".
  std::string Finish() &&;

 private:
  std::string out_;
};

// Splits one line (which must end in "\n" and hold no other newline) into
// its decoded fields, as the kernel's qword_get reads them: runs of spaces
// separate fields; in text, a backslash followed by three octal digits
// (the first 0-3) is that byte, any other backslash is itself; "\x" opens
// a hex field, which must consist of whole hex pairs up to its end.
[[nodiscard]] absl::StatusOr<std::vector<std::string>> SplitLine(
    std::string_view line);

// Length of the fsid bytes of FSIDTYPE `type` (0-7), or 0 for another.
int FsidLength(int type);

// --- upcalls (the kernel's requests) ---

// auth.unix.ip: "CLASS ADDRESS" (class "nfsd"; address IPv4 dotted or
// IPv6 text). `address_text` is kept verbatim to echo in the reply.
struct IpUpcall {
  std::string cls;
  std::string address_text;
  libshare::IpAddress address;
};
// auth.unix.gid: "UID".
struct GidUpcall {
  uint32_t uid = 0;
};
// nfsd.fh: "DOMAIN FSIDTYPE \xFSID".
struct FhUpcall {
  std::string domain;
  int fsid_type = 0;
  std::string fsid;  // FsidLength(fsid_type) bytes
};
// nfsd.export: "DOMAIN PATH".
struct ExportUpcall {
  std::string domain;
  std::string path;
};

// Each fails (InvalidArgument naming the field) on a line the kernel would
// not send: wrong field count, bad number, address, type or fsid length.
[[nodiscard]] absl::StatusOr<IpUpcall> ParseIpUpcall(std::string_view line);
[[nodiscard]] absl::StatusOr<GidUpcall> ParseGidUpcall(std::string_view line);
[[nodiscard]] absl::StatusOr<FhUpcall> ParseFhUpcall(std::string_view line);
[[nodiscard]] absl::StatusOr<ExportUpcall> ParseExportUpcall(
    std::string_view line);

// --- downcalls (our replies) ---

// One flavor of an export's secinfo: the RPC flavor number (sys 1,
// none 0, krb5 390003, krb5i 390004, krb5p 390005) and the export flags
// that apply to it.
struct SecinfoEntry {
  uint32_t flavor = 1;
  uint32_t flags = 0;
  bool operator==(const SecinfoEntry& o) const {
    return flavor == o.flavor && flags == o.flags;
  }
};

// The content of a positive nfsd.export reply.
struct ExportEntry {
  uint32_t flags = 0;  // NFSEXP_*
  int64_t anonuid = 65534;
  int64_t anongid = 65534;
  int32_t fsid = 0;
  std::vector<SecinfoEntry> secinfo;  // in preference order; may be empty
  std::optional<std::array<uint8_t, 16>> uuid;
  bool operator==(const ExportEntry& o) const {
    return flags == o.flags && anonuid == o.anonuid && anongid == o.anongid &&
           fsid == o.fsid && secinfo == o.secinfo && uuid == o.uuid;
  }
};

// "nfsd ADDRESS EXPIRY [DOMAIN]"; no domain is a negative answer.
std::string IpDowncall(std::string_view cls, std::string_view address_text,
                       int64_t expiry,
                       const std::optional<std::string>& domain);
// "UID EXPIRY N GID..."; N = 0 is the negative answer.
std::string GidDowncall(uint32_t uid, int64_t expiry,
                        const std::vector<uint32_t>& gids);
// "DOMAIN FSIDTYPE \xFSID EXPIRY [PATH]".
std::string FhDowncall(std::string_view domain, int fsid_type,
                       std::string_view fsid, int64_t expiry,
                       const std::optional<std::string>& path);
// "DOMAIN PATH EXPIRY [FLAGS ANONUID ANONGID FSID [secinfo N F FL..]
// [uuid \xUUID]]".
std::string ExportDowncall(std::string_view domain, std::string_view path,
                           int64_t expiry,
                           const std::optional<ExportEntry>& entry);

}  // namespace sharemgrd::kernel

#endif  // SHAREMGRD_KERNEL_LINE_FORMAT_H_
