#include "line_format.h"

#include <cassert>
#include <charconv>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace sharemgrd::kernel {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool IsOctal(char c) { return c >= '0' && c <= '7'; }

absl::Status Bad(std::string_view what, std::string_view line) {
  std::string shown(line.substr(0, 200));
  if (!shown.empty() && shown.back() == '\n') shown.pop_back();
  std::string msg = "upcall \"";
  msg += absl::CEscape(shown);
  msg += "\": ";
  msg += what;
  return absl::InvalidArgumentError(msg);
}

// A decimal number that fits T, nothing else.
template <typename T>
bool ParseNumber(std::string_view s, T* out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

}  // namespace

void LineWriter::Text(std::string_view text) {
  assert(!text.empty());
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\\') {
      const unsigned char u = static_cast<unsigned char>(c);
      out_.push_back('\\');
      out_.push_back(static_cast<char>('0' + ((u >> 6) & 7)));
      out_.push_back(static_cast<char>('0' + ((u >> 3) & 7)));
      out_.push_back(static_cast<char>('0' + (u & 7)));
    } else {
      out_.push_back(c);
    }
  }
  out_.push_back(' ');
}

void LineWriter::Hex(std::string_view bytes) {
  assert(!bytes.empty());
  static constexpr char kDigits[] = "0123456789abcdef";
  out_ += "\\x";
  for (char c : bytes) {
    const unsigned char u = static_cast<unsigned char>(c);
    out_.push_back(kDigits[u >> 4]);
    out_.push_back(kDigits[u & 15]);
  }
  out_.push_back(' ');
}

void LineWriter::Int(int64_t v) { absl::StrAppend(&out_, v, " "); }
void LineWriter::Uint(uint64_t v) { absl::StrAppend(&out_, v, " "); }

std::string LineWriter::Finish() && {
  if (out_.empty()) return "\n";
  out_.back() = '\n';
  return std::move(out_);
}

absl::StatusOr<std::vector<std::string>> SplitLine(std::string_view line) {
  if (line.empty() || line.back() != '\n') {
    return Bad("does not end in a newline", line);
  }
  line.remove_suffix(1);
  if (line.find('\n') != std::string_view::npos) {
    return Bad("holds more than one line", line);
  }
  std::vector<std::string> fields;
  size_t i = 0;
  const size_t n = line.size();
  while (true) {
    while (i < n && line[i] == ' ') ++i;
    if (i == n) break;
    std::string field;
    if (i + 1 < n && line[i] == '\\' && line[i + 1] == 'x') {
      i += 2;
      while (i + 1 < n && HexValue(line[i]) >= 0 &&
             HexValue(line[i + 1]) >= 0) {
        field.push_back(
            static_cast<char>(HexValue(line[i]) * 16 + HexValue(line[i + 1])));
        i += 2;
      }
      if (i < n && line[i] != ' ') {
        return Bad(absl::StrCat("bad hex field ", fields.size() + 1), line);
      }
      if (field.empty()) {
        return Bad(absl::StrCat("empty hex field ", fields.size() + 1), line);
      }
    } else {
      while (i < n && line[i] != ' ') {
        if (line[i] == '\\' && i + 3 < n && line[i + 1] >= '0' &&
            line[i + 1] <= '3' && IsOctal(line[i + 2]) &&
            IsOctal(line[i + 3])) {
          field.push_back(static_cast<char>(((line[i + 1] - '0') << 6) |
                                            ((line[i + 2] - '0') << 3) |
                                            (line[i + 3] - '0')));
          i += 4;
        } else {
          field.push_back(line[i]);
          ++i;
        }
      }
    }
    fields.push_back(std::move(field));
  }
  return fields;
}

int FsidLength(int type) {
  switch (type) {
    case 0:
      return 8;
    case 1:
      return 4;
    case 2:
      return 12;
    case 3:
    case 4:
    case 5:
      return 8;
    case 6:
      return 16;
    case 7:
      return 24;
    default:
      return 0;
  }
}

absl::StatusOr<IpUpcall> ParseIpUpcall(std::string_view line) {
  absl::StatusOr<std::vector<std::string>> f = SplitLine(line);
  if (!f.ok()) return f.status();
  if (f->size() != 2) return Bad("want CLASS ADDRESS", line);
  std::optional<libshare::IpAddress> a = libshare::IpAddress::Parse((*f)[1]);
  if (!a.has_value()) return Bad("not an IP address", line);
  return IpUpcall{std::move((*f)[0]), std::move((*f)[1]), *a};
}

absl::StatusOr<GidUpcall> ParseGidUpcall(std::string_view line) {
  absl::StatusOr<std::vector<std::string>> f = SplitLine(line);
  if (!f.ok()) return f.status();
  GidUpcall u;
  if (f->size() != 1 || !ParseNumber((*f)[0], &u.uid)) {
    return Bad("want UID", line);
  }
  return u;
}

absl::StatusOr<FhUpcall> ParseFhUpcall(std::string_view line) {
  absl::StatusOr<std::vector<std::string>> f = SplitLine(line);
  if (!f.ok()) return f.status();
  if (f->size() != 3) return Bad("want DOMAIN FSIDTYPE FSID", line);
  FhUpcall u;
  u.domain = std::move((*f)[0]);
  if (!ParseNumber((*f)[1], &u.fsid_type) || FsidLength(u.fsid_type) == 0) {
    return Bad("unknown fsid type", line);
  }
  if (static_cast<int>((*f)[2].size()) != FsidLength(u.fsid_type)) {
    return Bad(absl::StrCat("fsid of type ", u.fsid_type, " is not ",
                            FsidLength(u.fsid_type), " bytes"),
               line);
  }
  u.fsid = std::move((*f)[2]);
  return u;
}

absl::StatusOr<ExportUpcall> ParseExportUpcall(std::string_view line) {
  absl::StatusOr<std::vector<std::string>> f = SplitLine(line);
  if (!f.ok()) return f.status();
  if (f->size() != 2) return Bad("want DOMAIN PATH", line);
  if ((*f)[1].find('\0') != std::string::npos) return Bad("NUL in path", line);
  return ExportUpcall{std::move((*f)[0]), std::move((*f)[1])};
}

std::string IpDowncall(std::string_view cls, std::string_view address_text,
                       int64_t expiry,
                       const std::optional<std::string>& domain) {
  LineWriter w;
  w.Text(cls);
  w.Text(address_text);
  w.Int(expiry);
  if (domain.has_value()) w.Text(*domain);
  return std::move(w).Finish();
}

std::string GidDowncall(uint32_t uid, int64_t expiry,
                        const std::vector<uint32_t>& gids) {
  LineWriter w;
  w.Uint(uid);
  w.Int(expiry);
  w.Uint(gids.size());
  for (uint32_t g : gids) w.Uint(g);
  return std::move(w).Finish();
}

std::string FhDowncall(std::string_view domain, int fsid_type,
                       std::string_view fsid, int64_t expiry,
                       const std::optional<std::string>& path) {
  LineWriter w;
  w.Text(domain);
  w.Int(fsid_type);
  w.Hex(fsid);
  w.Int(expiry);
  if (path.has_value()) w.Text(*path);
  return std::move(w).Finish();
}

std::string ExportDowncall(std::string_view domain, std::string_view path,
                           int64_t expiry,
                           const std::optional<ExportEntry>& entry) {
  LineWriter w;
  w.Text(domain);
  w.Text(path);
  w.Int(expiry);
  if (entry.has_value()) {
    w.Uint(entry->flags);
    w.Int(entry->anonuid);
    w.Int(entry->anongid);
    w.Int(entry->fsid);
    if (!entry->secinfo.empty()) {
      w.Text("secinfo");
      w.Uint(entry->secinfo.size());
      for (const SecinfoEntry& s : entry->secinfo) {
        w.Uint(s.flavor);
        w.Uint(s.flags);
      }
    }
    if (entry->uuid.has_value()) {
      w.Text("uuid");
      w.Hex(std::string_view(reinterpret_cast<const char*>(entry->uuid->data()),
                             entry->uuid->size()));
    }
  }
  return std::move(w).Finish();
}

}  // namespace sharemgrd::kernel
