#include "libshare/fs_identity.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace libshare {
namespace {

constexpr std::string_view kUuidPrefix = "uuid:";

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string FormatFsIdentity(const FsUuid& u) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(kUuidPrefix);
  for (uint8_t b : u) {
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 15]);
  }
  return out;
}

absl::StatusOr<std::optional<FsUuid>> ParseFsIdentity(std::string_view text) {
  if (text.empty()) return std::optional<FsUuid>();
  auto bad = [text] {
    return absl::InvalidArgumentError(absl::StrCat(
        "file-system identity \"", std::string(text.substr(0, 80)),
        "\": expected \"uuid:\" and 32 hex digits"));
  };
  if (text.substr(0, kUuidPrefix.size()) != kUuidPrefix ||
      text.size() != kUuidPrefix.size() + 32) {
    return bad();
  }
  FsUuid u{};
  for (std::size_t i = 0; i < 32; ++i) {
    const int v = HexValue(text[kUuidPrefix.size() + i]);
    if (v < 0) return bad();
    u[i / 2] |= static_cast<uint8_t>((i & 1) == 0 ? v << 4 : v);
  }
  return std::optional<FsUuid>(u);
}

FsUuid FoldUuidText(std::string_view text) {
  FsUuid u{};
  std::size_t i = 0;
  for (char c : text) {
    const int v = HexValue(c);
    if (v < 0) continue;
    u[i / 2] ^= static_cast<uint8_t>((i & 1) == 0 ? v << 4 : v);
    if (++i == 2 * u.size()) i = 0;
  }
  return u;
}

}  // namespace libshare
