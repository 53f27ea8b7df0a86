#include "export_entry.h"

#include <charconv>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace sharemgrd::kernel {
namespace {

bool ParseHex(std::string_view s, uint32_t* out) {
  if (s.size() < 3 || s.substr(0, 2) != "0x") return false;
  s.remove_prefix(2);
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out, 16);
  return ec == std::errc() && p == s.data() + s.size();
}

// RPC flavor numbers nfsd knows; AUTH_DH is not one of them.
std::optional<uint32_t> KernelFlavor(libshare::SecFlavor f) {
  if (f == libshare::SecFlavor::kDh) return std::nullopt;
  return libshare::SecFlavorRpcNumber(f);
}

}  // namespace

absl::StatusOr<ExportFeatures> ParseExportFeatures(std::string_view text) {
  const std::string trimmed(
      absl::StripAsciiWhitespace(absl::string_view(text.data(), text.size())));
  std::vector<std::string> words =
      absl::StrSplit(trimmed, ' ', absl::SkipEmpty());
  ExportFeatures f;
  if (words.size() != 2 || !ParseHex(words[0], &f.all_flags) ||
      !ParseHex(words[1], &f.secinfo_flags)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "export_features \"", trimmed, "\": want \"0xFLAGS 0xFLAGS\""));
  }
  return f;
}

std::optional<ExportEntry> ShareExport(const ShareExportInput& in,
                                       const ExportFeatures& features) {
  uint32_t base = nfsexp::kNoSubtreeCheck | nfsexp::kGatheredWrites;
  if (in.options != nullptr && in.options->nohide) base |= nfsexp::kNoHide;
  if (in.insecure) base |= nfsexp::kInsecurePort;
  if (in.root_path) base |= nfsexp::kFsid;
  ExportEntry e;
  for (const FlavorGrant& g : in.grants) {
    if (g.access == authcache::Access::kNone) continue;
    std::optional<uint32_t> number = KernelFlavor(g.flavor);
    if (!number.has_value()) continue;
    uint32_t flags = base;
    if (g.access != authcache::Access::kRw) flags |= nfsexp::kReadonly;
    if (!g.root) flags |= nfsexp::kRootSquash;
    flags &= features.all_flags;
    bool seen = false;
    for (const SecinfoEntry& s : e.secinfo) seen |= s.flavor == *number;
    if (seen) continue;
    if (e.secinfo.empty()) e.flags = flags;
    e.secinfo.push_back({*number, flags});
  }
  if (e.secinfo.empty()) return std::nullopt;
  if (in.options != nullptr && in.options->anon.has_value() &&
      *in.options->anon >= 0) {
    e.anonuid = e.anongid = *in.options->anon;
  }
  // With FSID the kernel takes the fsid from the number, never the uuid.
  if (!in.root_path) e.uuid = in.uuid;
  return e;
}

ExportEntry PseudoExport(bool root_path, const std::optional<Uuid>& uuid,
                         const ExportFeatures& features) {
  uint32_t flags = nfsexp::kReadonly | nfsexp::kNoSubtreeCheck |
                   nfsexp::kV4Root | nfsexp::kInsecurePort;
  if (root_path) flags |= nfsexp::kFsid;
  flags &= features.all_flags;
  ExportEntry e;
  e.flags = flags;
  for (libshare::SecFlavor f :
       {libshare::SecFlavor::kKrb5, libshare::SecFlavor::kKrb5i,
        libshare::SecFlavor::kKrb5p, libshare::SecFlavor::kSys}) {
    e.secinfo.push_back({libshare::SecFlavorRpcNumber(f), flags});
  }
  if (!root_path) e.uuid = uuid;
  return e;
}

}  // namespace sharemgrd::kernel
