// The rules a share's stored fields obey, checked in one place: when a
// batch adds a share (Catalog::Apply) and when the loader reads a row
// back from the store (a row changed behind the daemon's back, e.g. with
// sqlite3, must not be served). Not part of the API.
//
// Pure functions; thread-safe.
#ifndef LIBSHARE_SRC_SHARE_RULES_H_
#define LIBSHARE_SRC_SHARE_RULES_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace libshare::internal {

// The path is canonical text (ValidatePath) and the resource and
// description hold no control character (sharetab(5) is tab-separated,
// one entry per line; terminals must not receive escape sequences; a NUL
// would cut the text short on the wire). Errors name the share and field:
//   /srv/a: description contains a control character (\001)
[[nodiscard]] absl::Status ValidateShareFields(std::string_view path,
                                               std::string_view resource,
                                               std::string_view description);

// share_nfs limits, checked when a share is added or modified (a store row
// that breaks them is loaded, with a warning: it was legal when written).
inline constexpr std::size_t kMaxResourceLength = 255;
inline constexpr std::size_t kMaxDescriptionLength = 1024;
//   /srv/a: resource longer than 255 bytes (300)
[[nodiscard]] absl::Status CheckShareLimits(std::string_view path,
                                            std::string_view resource,
                                            std::string_view description);

// The refusal of a resource name another share has:
//   /srv/b: resource name "proj" is already used by /srv/a
std::string ResourceTakenMessage(std::string_view path,
                                 std::string_view resource,
                                 std::string_view user);

}  // namespace libshare::internal

#endif  // LIBSHARE_SRC_SHARE_RULES_H_
