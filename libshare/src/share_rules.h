// The rules a share's stored fields obey, checked in one place: when a
// batch adds a share (Catalog::Apply) and when the loader reads a row
// back from the store (a row changed behind the daemon's back, e.g. with
// sqlite3, must not be served). Not part of the API.
//
// Pure functions; thread-safe.
#ifndef LIBSHARE_SRC_SHARE_RULES_H_
#define LIBSHARE_SRC_SHARE_RULES_H_

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

}  // namespace libshare::internal

#endif  // LIBSHARE_SRC_SHARE_RULES_H_
