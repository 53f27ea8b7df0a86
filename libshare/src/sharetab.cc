// The sharetab(5) view (DESIGN.md "Persistence").
//
// A field cannot hold a tab or a newline (they delimit fields and lines),
// so WriteSharetab() refuses such an entry rather than write a file that
// reads back differently. A resource of exactly "-" reads back as "" (that
// is sharetab(5)'s spelling of "no resource"); it is written as is.
#include "libshare/sharetab.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "internal_text.h"
#include "libshare/files.h"
#include "libshare/sharetab_lines.h"

namespace libshare {
namespace {

using internal::Quote;
using internal::ToAbsl;

constexpr int kFields = 5;

absl::Status CheckFields(std::string_view path, std::string_view resource,
                         std::string_view fstype, std::string_view options,
                         std::string_view description) {
  if (path.empty()) {
    return absl::InvalidArgumentError("sharetab entry with an empty path");
  }
  if (fstype.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("sharetab entry ", Quote(path), ": empty fstype"));
  }
  const std::pair<const char*, std::string_view> fields[] = {
      {"path", path},
      {"resource", resource},
      {"fstype", fstype},
      {"options", options},
      {"description", description}};
  for (const auto& [name, value] : fields) {
    for (char c : value) {
      if (c == '\t' || c == '\n' || c == '\0') {
        return absl::InvalidArgumentError(absl::StrCat(
            "sharetab entry ", Quote(path), ": ", name, " contains ",
            c == '\t'   ? "a tab"
            : c == '\n' ? "a newline"
                        : "a NUL byte",
            " (sharetab(5) cannot hold it)"));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status CheckEntry(const SharetabEntry& e) {
  return CheckFields(e.path, e.resource, e.fstype, e.options, e.description);
}

void AppendLine(std::string& line, std::string_view path,
                std::string_view resource, std::string_view fstype,
                std::string_view options, std::string_view description) {
  line.append(path);
  line.push_back('\t');
  line.append(resource.empty() ? std::string_view("-") : resource);
  line.push_back('\t');
  line.append(fstype);
  line.push_back('\t');
  line.append(options);
  line.push_back('\t');
  line.append(description);
  line.push_back('\n');
}

}  // namespace

std::string FormatSharetabLine(const SharetabEntry& e) {
  std::string line;
  line.reserve(e.path.size() + e.resource.size() + e.fstype.size() +
               e.options.size() + e.description.size() + 8);
  AppendLine(line, e.path, e.resource, e.fstype, e.options, e.description);
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

void SharetabLines::Add(std::string_view path, std::string_view resource,
                        std::string_view options, std::string_view description,
                        bool mountpoint) {
  if (error_.ok()) {
    error_ = CheckFields(path, resource, "nfs", options, description);
  }
  Line l;
  l.offset = text_.size();
  l.path_length = static_cast<uint32_t>(path.size());
  l.mountpoint = mountpoint;
  AppendLine(text_, path, resource, "nfs", options, description);
  l.length = static_cast<uint32_t>(text_.size() - l.offset);
  lines_.push_back(l);
}

void SharetabLines::Reserve(std::size_t lines) {
  lines_.reserve(lines);
  // About a path, a short options text and the separators a line.
  text_.reserve(lines * 64);
}

void SharetabLines::Clear() {
  text_.clear();
  lines_.clear();
  error_ = absl::OkStatus();
}

void SharetabLines::SortUnique() {
  auto path_of = [this](const Line& l) {
    return std::string_view(text_).substr(l.offset, l.path_length);
  };
  std::sort(lines_.begin(), lines_.end(), [&](const Line& a, const Line& b) {
    return path_of(a) < path_of(b);
  });
  // A path removed and added again to a group not walked yet while the
  // walk went on was seen twice: once is enough (either; the change asks
  // for the view again).
  lines_.erase(std::unique(lines_.begin(), lines_.end(),
                           [&](const Line& a, const Line& b) {
                             return path_of(a) == path_of(b);
                           }),
               lines_.end());
}

absl::Status SharetabLines::Write(
    const std::string& file,
    absl::FunctionRef<bool(std::string_view path, bool mountpoint)> keep)
    const {
  if (!error_.ok()) return error_;
  std::string text;
  text.reserve(text_.size());
  for (std::size_t i = 0; i < lines_.size(); ++i) {
    if (!keep(path(i), lines_[i].mountpoint)) continue;
    text.append(text_, lines_[i].offset, lines_[i].length);
  }
  if (absl::Status s = ReplaceFile(file, text, 0644); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat("sharetab ", s.message()));
  }
  return absl::OkStatus();
}

}  // namespace libshare
