// Share path and group name rules (see path.h and DESIGN.md "Data model").
#include "libshare/path.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "internal_text.h"

namespace libshare {
namespace {

using internal::Quote;
using internal::ToAbsl;

absl::Status PathError(std::string_view shown, std::string_view rule) {
  return absl::InvalidArgumentError(
      absl::StrCat("path ", Quote(shown), ": ", ToAbsl(rule)));
}

// Per byte of an 8-byte word, the high bit set where the byte is zero
// (exact for every byte, unlike the shorter "has a zero byte" test).
inline uint64_t ZeroBytes(uint64_t x) {
  constexpr uint64_t kLow7 = 0x7f7f7f7f7f7f7f7full;
  return ~(((x & kLow7) + kLow7) | x | kLow7);
}

// True if `path` obeys every rule CheckPath checks: absolute, not too
// long, no control character, no empty, "." or ".." component, no
// trailing "/" (but "/" itself). Only says yes or no; CheckPath says why.
// Eight bytes at a time (every share path of a batch is checked by the
// client and again by the daemon): per word, whether a byte is below
// 0x20 or DEL, and where its slashes are; the bytes after each slash are
// then looked at. A 22-byte path costs about 240 instructions with the
// call, against 370 byte by byte (callgrind, sharectl batch).
bool PlainValidPath(std::string_view path) {
  const std::size_t n = path.size();
  if (n == 0 || path[0] != '/' || n > kMaxPathLength) return false;
  if (n == 1) return true;
  const char* p = path.data();
  if (p[n - 1] == '/') return false;
  // The lead byte of UTF-8's C1 controls (U+0080-U+009F): the slow path
  // looks at what follows it.
  if (std::memchr(p, 0xc2, n) != nullptr) return false;
  constexpr uint64_t kOnes = 0x0101010101010101ull;
  constexpr uint64_t kHigh = 0x8080808080808080ull;
  // The byte at position i, as if the path went on with a '/' (so that
  // a path ending in "/." or "/.." is caught as "/./" and "/../" are).
  auto at = [&](std::size_t i) { return i < n ? p[i] : '/'; };
  // The word of bytes [i, i + 8): no byte below 0x20 (exact as a yes/no
  // for any word: bytes from 0x80 up never count), no DEL, and after
  // each '/' neither a '/' nor a "." or ".." component.
  auto word_ok = [&](uint64_t w, std::size_t i) {
    if ((((w - kOnes * 0x20) & ~w & kHigh) | ZeroBytes(w ^ (kOnes * 0x7f))) !=
        0) {
      return false;
    }
    for (uint64_t slashes = ZeroBytes(w ^ (kOnes * '/')); slashes != 0;) {
      // The first byte in memory: the lowest bits on a little-endian
      // machine, the highest on a big-endian one.
      int bit;
      if constexpr (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__) {
        bit = __builtin_ctzll(slashes);
        slashes &= slashes - 1;
      } else {
        bit = __builtin_clzll(slashes);
        slashes &= ~(uint64_t{1} << (63 - bit));
      }
      const std::size_t j = i + static_cast<std::size_t>(bit) / 8;
      const char c1 = at(j + 1);
      if (c1 == '/') return false;  // "//" (a trailing "/" is checked)
      if (c1 != '.') continue;
      const char c2 = at(j + 2);
      if (c2 == '/' || (c2 == '.' && at(j + 3) == '/')) return false;
    }
    return true;
  };
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    if (!word_ok(w, i)) return false;
  }
  if (i < n) {
    // The last bytes, padded with 'a': neither a control byte nor a '/'.
    uint64_t w = kOnes * 'a';
    std::memcpy(&w, p + i, n - i);
    if (!word_ok(w, i)) return false;
  }
  return true;
}

// Checks `path` and names `shown` (the text the caller was given) in errors.
absl::Status CheckPath(std::string_view path, std::string_view shown) {
  if (PlainValidPath(path)) return absl::OkStatus();
  if (path.empty() || path[0] != '/') {
    return PathError(shown, "must be absolute");
  }
  if (path.size() > kMaxPathLength) {
    return PathError(shown, absl::StrCat("longer than ", kMaxPathLength,
                                         " bytes (", path.size(), ")"));
  }
  for (char c : path) {
    if (c == '\0') return PathError(shown, "contains a NUL byte");
    if (c == '\n') return PathError(shown, "contains a newline");
    if (c == '\t') return PathError(shown, "contains a tab");
    // Paths are printed (show, sharetab, logs): no terminal escapes.
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return PathError(shown, "contains a control character");
    }
  }
  if (std::optional<unsigned> c1 = internal::FirstC1Control(path)) {
    return PathError(shown, absl::StrFormat("contains the C1 control character "
                                            "U+%04X",
                                            *c1));
  }
  if (path.size() == 1) return absl::OkStatus();  // "/"
  if (path.back() == '/') return PathError(shown, "trailing \"/\"");
  // Components lie between one '/' and the next; the leading '/' has been
  // checked, so start after it.
  std::size_t start = 1;
  while (start <= path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    std::string_view comp = path.substr(start, end - start);
    if (comp.empty()) return PathError(shown, "empty component (\"//\")");
    if (comp == ".") return PathError(shown, "\".\" component not allowed");
    if (comp == "..") return PathError(shown, "\"..\" component not allowed");
    start = end + 1;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidatePath(std::string_view path) {
  return CheckPath(path, path);
}

absl::StatusOr<std::string> NormalizePath(std::string_view path) {
  std::string out;
  if (path.find("//") == std::string_view::npos) {
    // The usual case, already without repeated slashes: one copy, not a
    // byte at a time (a tenth of sharectl batch's parsing).
    out.assign(path.data(), path.size());
  } else {
    out.reserve(path.size());
    for (char c : path) {
      if (c == '/' && !out.empty() && out.back() == '/') continue;
      out.push_back(c);
    }
  }
  if (out.size() > 1 && out.back() == '/') out.pop_back();
  absl::Status st = CheckPath(out, path);
  if (!st.ok()) return st;
  return out;
}

absl::Status ValidateGroupName(std::string_view name) {
  auto error = [name](std::string_view rule) {
    return absl::InvalidArgumentError(
        absl::StrCat("group name ", Quote(name), ": ", ToAbsl(rule)));
  };
  if (name.empty()) return error("empty");
  if (name.size() > kMaxGroupNameLength) {
    return error(absl::StrCat("longer than ", kMaxGroupNameLength,
                              " characters (", name.size(), ")"));
  }
  auto is_alpha = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  };
  if (!is_alpha(name[0])) return error("must start with a letter");
  for (char c : name) {
    if (!is_alpha(c) && !(c >= '0' && c <= '9') && c != '_' && c != '-') {
      return error(absl::StrCat("character ", Quote(std::string_view(&c, 1)),
                                " not allowed (use A-Z a-z 0-9 _ -)"));
    }
  }
  return absl::OkStatus();
}

std::string_view ParentPath(std::string_view path) {
  if (path.empty() || path == "/") return {};
  std::size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return {};
  if (slash == 0) return path.substr(0, 1);
  return path.substr(0, slash);
}

}  // namespace libshare
