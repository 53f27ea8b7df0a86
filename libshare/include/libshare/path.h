// Share paths and group names: validation and normalization.
//
// Pure functions; thread-safe.
//
//   absl::StatusOr<std::string> p = libshare::NormalizePath("/export//home/");
//   // *p == "/export/home"
#ifndef LIBSHARE_PATH_H_
#define LIBSHARE_PATH_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace libshare {

inline constexpr std::size_t kMaxPathLength = 1024;
inline constexpr std::size_t kMaxGroupNameLength = 100;

// Accepts only canonical share paths: absolute, at most kMaxPathLength
// bytes, no empty, "." or ".." component, no trailing "/" (except "/"
// itself), no NUL, newline, tab or other control character. The error
// names the path and the rule:
//   path "/a/../b": ".." component not allowed
[[nodiscard]] absl::Status ValidatePath(std::string_view path);

// Lenient form for user input: collapses repeated "/" and drops a trailing
// "/", then applies ValidatePath. "." and ".." are still refused (they are
// never silently resolved: a share path names a dataset, not a walk).
[[nodiscard]] absl::StatusOr<std::string> NormalizePath(std::string_view path);

// Group names: [A-Za-z][A-Za-z0-9_-]{0,99}.
[[nodiscard]] absl::Status ValidateGroupName(std::string_view name);

// The parent of a valid path: "/a/b" -> "/a", "/a" -> "/", "/" -> "".
std::string_view ParentPath(std::string_view path);

}  // namespace libshare

#endif  // LIBSHARE_PATH_H_
