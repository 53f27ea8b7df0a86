// The sharetab(5) view (DESIGN.md "Persistence").
//
// A field cannot hold a tab or a newline (they delimit fields and lines),
// so WriteSharetab() refuses such an entry rather than write a file that
// reads back differently. A resource of exactly "-" reads back as "" (that
// is sharetab(5)'s spelling of "no resource"); it is written as is.
#include "libshare/sharetab.h"

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "internal_text.h"
#include "libshare/files.h"

namespace libshare {
namespace {

using internal::Quote;
using internal::ToAbsl;

constexpr int kFields = 5;

absl::Status CheckEntry(const SharetabEntry& e) {
  if (e.path.empty()) {
    return absl::InvalidArgumentError("sharetab entry with an empty path");
  }
  if (e.fstype.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("sharetab entry ", Quote(e.path), ": empty fstype"));
  }
  const std::pair<const char*, const std::string*> fields[] = {
      {"path", &e.path},
      {"resource", &e.resource},
      {"fstype", &e.fstype},
      {"options", &e.options},
      {"description", &e.description}};
  for (const auto& [name, value] : fields) {
    for (char c : *value) {
      if (c == '\t' || c == '\n' || c == '\0') {
        return absl::InvalidArgumentError(absl::StrCat(
            "sharetab entry ", Quote(e.path), ": ", name, " contains ",
            c == '\t'   ? "a tab"
            : c == '\n' ? "a newline"
                        : "a NUL byte",
            " (sharetab(5) cannot hold it)"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::string FormatSharetabLine(const SharetabEntry& e) {
  std::string line;
  line.reserve(e.path.size() + e.resource.size() + e.fstype.size() +
               e.options.size() + e.description.size() + 8);
  line.append(e.path);
  line.push_back('\t');
  line.append(e.resource.empty() ? std::string_view("-")
                                 : std::string_view(e.resource));
  line.push_back('\t');
  line.append(e.fstype);
  line.push_back('\t');
  line.append(e.options);
  line.push_back('\t');
  line.append(e.description);
  line.push_back('\n');
  return line;
}

absl::StatusOr<SharetabEntry> ParseSharetabLine(std::string_view line) {
  const std::string_view original = line;
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  if (line.find('\n') != std::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "sharetab line ", Quote(original), ": more than one line"));
  }
  std::string_view f[kFields];
  int count = 0;
  std::size_t pos = 0;
  while (true) {
    std::size_t tab = line.find('\t', pos);
    std::string_view field =
        line.substr(pos, tab == std::string_view::npos ? std::string_view::npos
                                                       : tab - pos);
    if (count < kFields) f[count] = field;
    ++count;
    if (tab == std::string_view::npos) break;
    pos = tab + 1;
  }
  if (count != kFields) {
    return absl::InvalidArgumentError(
        absl::StrCat("sharetab line ", Quote(original), ": ", count,
                     " tab-separated fields, want ", kFields));
  }
  if (f[0].empty() || f[0][0] != '/') {
    return absl::InvalidArgumentError(absl::StrCat(
        "sharetab line ", Quote(original), ": path must be absolute"));
  }
  if (f[2].empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("sharetab line ", Quote(original), ": empty fstype"));
  }
  SharetabEntry e;
  e.path.assign(f[0]);
  if (f[1] != "-") e.resource.assign(f[1]);
  e.fstype.assign(f[2]);
  e.options.assign(f[3]);
  e.description.assign(f[4]);
  return e;
}

absl::StatusOr<std::vector<SharetabEntry>> ParseSharetab(
    std::string_view text) {
  std::vector<SharetabEntry> out;
  std::size_t pos = 0;
  for (int number = 1; pos < text.size(); ++number) {
    std::size_t nl = text.find('\n', pos);
    std::size_t end = nl == std::string_view::npos ? text.size() : nl;
    absl::StatusOr<SharetabEntry> e =
        ParseSharetabLine(text.substr(pos, end - pos));
    if (!e.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("line ", number, ": ", e.status().message()));
    }
    out.push_back(*std::move(e));
    pos = end + 1;
  }
  return out;
}

absl::Status WriteSharetab(const std::string& path,
                           const std::vector<SharetabEntry>& entries) {
  std::string text;
  for (const SharetabEntry& e : entries) {
    absl::Status st = CheckEntry(e);
    if (!st.ok()) return st;
    text.append(FormatSharetabLine(e));
  }

  if (absl::Status s = ReplaceFile(path, text, 0644); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat("sharetab ", s.message()));
  }
  return absl::OkStatus();
}

}  // namespace libshare
