// Fuzz target: share path and group name validation (libshare/path.h).
//
// Properties:
//  - NormalizePath's output passes ValidatePath and normalizes to itself;
//  - a path ValidatePath accepts normalizes to itself;
//  - ParentPath of a valid path other than "/" is "/" or a valid path that
//    is a prefix of it; ParentPath("/") is "";
//  - every refusal carries a message.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fuzz_check.h"
#include "libshare/path.h"

namespace {

using fuzz::Escape;

std::string Q(std::string_view s) { return "\"" + Escape(s) + "\""; }

void CheckParents(std::string_view path) {
  // Walks up to "/"; each step is strictly shorter, so this ends.
  std::string_view p = path;
  while (p != "/") {
    std::string_view parent = libshare::ParentPath(p);
    FUZZ_CHECK(!parent.empty() && parent.size() < p.size(),
               "ParentPath(" + Q(p) + ") = " + Q(parent));
    FUZZ_CHECK(p.substr(0, parent.size()) == parent,
               "ParentPath(" + Q(p) + ") = " + Q(parent) + " is no prefix");
    absl::Status st = libshare::ValidatePath(parent);
    FUZZ_CHECK(st.ok(), "ParentPath(" + Q(p) + ") = " + Q(parent) +
                            " is not valid: " + std::string(st.message()));
    p = parent;
  }
  FUZZ_CHECK(libshare::ParentPath("/").empty(), "ParentPath(\"/\") not empty");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);

  absl::Status valid = libshare::ValidatePath(text);
  absl::StatusOr<std::string> normal = libshare::NormalizePath(text);
  if (!valid.ok()) {
    FUZZ_CHECK(!valid.message().empty(),
               "ValidatePath refusal without message");
  }
  if (!normal.ok()) {
    FUZZ_CHECK(!normal.status().message().empty(),
               "NormalizePath refusal without message");
  }

  if (valid.ok()) {
    FUZZ_CHECK(normal.ok(), "valid path " + Q(text) +
                                " refused by NormalizePath: " +
                                std::string(normal.status().message()));
    FUZZ_CHECK(*normal == text,
               "valid path " + Q(text) + " normalizes to " + Q(*normal));
    FUZZ_CHECK(text.size() <= libshare::kMaxPathLength,
               "valid path longer than kMaxPathLength: " + Q(text));
    CheckParents(text);
  }
  if (normal.ok()) {
    absl::Status st = libshare::ValidatePath(*normal);
    FUZZ_CHECK(st.ok(),
               Q(text) + " normalizes to " + Q(*normal) +
                   " which ValidatePath refuses: " + std::string(st.message()));
    absl::StatusOr<std::string> twice = libshare::NormalizePath(*normal);
    FUZZ_CHECK(twice.ok() && *twice == *normal,
               "NormalizePath not idempotent on " + Q(*normal));
  }

  absl::Status group = libshare::ValidateGroupName(text);
  if (group.ok()) {
    FUZZ_CHECK(!text.empty() && text.size() <= libshare::kMaxGroupNameLength,
               "group name of bad length accepted: " + Q(text));
    const char c = text[0];
    FUZZ_CHECK((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'),
               "group name not starting with a letter accepted: " + Q(text));
  } else {
    FUZZ_CHECK(!group.message().empty(), "group refusal without message");
  }
  return 0;
}
