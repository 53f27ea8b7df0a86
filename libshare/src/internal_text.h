// Private helpers for libshare's error messages. Not part of the API.
#ifndef LIBSHARE_SRC_INTERNAL_TEXT_H_
#define LIBSHARE_SRC_INTERNAL_TEXT_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace libshare::internal {

// This Debian build of absl has its own string_view type
// (ABSL_OPTION_USE_STD_STRING_VIEW 0), so std::string_view must be
// converted for StrCat and Status constructors.
inline absl::string_view ToAbsl(std::string_view s) {
  return absl::string_view(s.data(), s.size());
}

// `s` in double quotes for an error message: control characters escaped
// (a message is one line on stderr) and cut after `max_shown` bytes so
// that a 64 KiB argument does not become a 64 KiB message.
inline std::string Quote(std::string_view s, std::size_t max_shown = 80) {
  if (s.size() <= max_shown) {
    return absl::StrCat("\"", absl::CEscape(ToAbsl(s)), "\"");
  }
  return absl::StrCat("\"", absl::CEscape(ToAbsl(s.substr(0, max_shown))),
                      "\"...");
}

// The first C1 control character (U+0080-U+009F, UTF-8 bytes C2 80-C2 9F)
// in `s`, if any: a terminal takes U+009B as CSI, as it takes ESC [, so
// paths and texts that are printed may not hold one. Bytes that are not
// UTF-8 (a Latin-1 file name) are not C1 controls here.
inline std::optional<unsigned> FirstC1Control(std::string_view s) {
  for (std::size_t i = 0; i + 1 < s.size(); ++i) {
    const auto b = static_cast<unsigned char>(s[i + 1]);
    if (static_cast<unsigned char>(s[i]) == 0xc2 && b >= 0x80 && b <= 0x9f) {
      return b;
    }
  }
  return std::nullopt;
}

}  // namespace libshare::internal

#endif  // LIBSHARE_SRC_INTERNAL_TEXT_H_
