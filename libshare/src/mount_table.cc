#include "libshare/mount_table.h"

#include <algorithm>
#include <utility>

#include "absl/strings/string_view.h"
#include "libshare/path.h"

namespace libshare {

bool ParseMountinfoLine(std::string_view line, MountTableEntry* out) {
  // Split by hand: a 15,000-dataset server has a 2 MB mountinfo, parsed at
  // every mount change. Fields 0-5 are fixed, then optional fields up to
  // a lone "-", then the type and the source.
  std::string_view f[16];
  std::size_t n = 0, dash = 0;
  for (std::size_t i = 0; i < line.size() && n < 16;) {
    std::size_t j = line.find(' ', i);
    if (j == std::string_view::npos) j = line.size();
    if (j > i) {
      f[n] = line.substr(i, j - i);
      if (dash == 0 && n >= 6 && f[n] == "-") dash = n;
      ++n;
    }
    i = j + 1;
  }
  if (dash == 0 || dash + 2 >= n || f[4].empty() || f[4][0] != '/') {
    return false;
  }
  out->mount_point = UnescapeMountinfo(f[4]);
  out->fstype = UnescapeMountinfo(f[dash + 1]);
  out->source = UnescapeMountinfo(f[dash + 2]);
  return true;
}

std::string UnescapeMountinfo(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() && s[i + 1] >= '0' &&
        s[i + 1] <= '3' && s[i + 2] >= '0' && s[i + 2] <= '7' &&
        s[i + 3] >= '0' && s[i + 3] <= '7') {
      out.push_back(static_cast<char>((s[i + 1] - '0') * 64 +
                                      (s[i + 2] - '0') * 8 + (s[i + 3] - '0')));
      i += 3;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

MountTable MountTable::Parse(std::string_view text) {
  MountTable t;
  t.by_point_.reserve(
      static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')));
  MountTableEntry e;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    if (!ParseMountinfoLine(line, &e)) continue;
    std::string key = e.mount_point;
    t.by_point_.insert_or_assign(std::move(key), std::move(e));  // on top
  }
  return t;
}

const MountTableEntry* MountTable::MountedAt(std::string_view path) const {
  auto it = by_point_.find(absl::string_view(path.data(), path.size()));
  return it == by_point_.end() ? nullptr : &it->second;
}

const MountTableEntry* MountTable::Containing(std::string_view path) const {
  for (std::string_view p = path; !p.empty(); p = ParentPath(p)) {
    auto it = by_point_.find(absl::string_view(p.data(), p.size()));
    if (it != by_point_.end()) return &it->second;
  }
  return nullptr;
}

}  // namespace libshare
