// Share path and group name rules (see path.h and DESIGN.md "Data model").
#include "libshare/path.h"

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "internal_text.h"

namespace libshare {
namespace {

using internal::Quote;
using internal::ToAbsl;

absl::Status PathError(std::string_view shown, std::string_view rule) {
  return absl::InvalidArgumentError(
      absl::StrCat("path ", Quote(shown), ": ", ToAbsl(rule)));
}

// True if `path` obeys every rule CheckPath checks, in one pass: absolute,
// not too long, no control character, no empty, "." or ".." component, no
// trailing "/" (but "/" itself). Only says yes or no; CheckPath says why.
bool PlainValidPath(std::string_view path) {
  const std::size_t n = path.size();
  if (n == 0 || path[0] != '/' || n > kMaxPathLength) return false;
  if (n == 1) return true;
  std::size_t start = 1;  // the current component's first byte
  for (std::size_t i = 1; i <= n; ++i) {
    const unsigned char c = i < n ? static_cast<unsigned char>(path[i]) : '/';
    if (c < 0x20 || c == 0x7f) return false;
    if (c != '/') continue;
    const std::size_t len = i - start;
    if (len == 0 || (path[start] == '.' &&
                     (len == 1 || (len == 2 && path[i - 1] == '.')))) {
      return false;
    }
    start = i + 1;
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
