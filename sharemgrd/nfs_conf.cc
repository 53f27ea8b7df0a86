#include "nfs_conf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "libshare/file_read.h"

namespace sharemgrd {
namespace {

// conffile.c has no bound (a file including itself recurses until the
// stack runs out); 16 is far beyond any real layout.
constexpr int kMaxIncludeDepth = 16;
// Hops of "$NAME" through [environment] before giving up (a loop).
constexpr int kMaxExpansions = 16;
// A configuration file is a few KiB; this refuses reading a device or a
// huge file named by mistake.
constexpr std::size_t kMaxFileBytes = 16 << 20;

bool IsBlank(char c) { return c == ' ' || c == '\t'; }
bool IsSpace(char c) {
  return absl::ascii_isspace(static_cast<unsigned char>(c));
}

absl::string_view TrimTrailing(absl::string_view s, bool (*is)(char)) {
  while (!s.empty() && is(s.back())) s.remove_suffix(1);
  return s;
}
absl::string_view TrimLeading(absl::string_view s, bool (*is)(char)) {
  while (!s.empty() && is(s.front())) s.remove_prefix(1);
  return s;
}

// The file's text; nullopt if it does not exist (ENOENT). A FIFO planted
// at the name does not hang the start (refused as not a regular file).
absl::StatusOr<std::optional<std::string>> ReadConfFile(
    const std::string& path) {
  return libshare::ReadRegularFile(path, kMaxFileBytes);
}

std::string Folder(const std::string& file) {
  const std::size_t slash = file.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return file.substr(0, slash);
}

}  // namespace

std::string NfsConfEntry::Where() const {
  return absl::StrCat(file, ":", line);
}

// Parses files into a NfsConf, following includes.
class NfsConf::Reader {
 public:
  explicit Reader(NfsConf* out) : out_(out) {}

  // Reads `path` if it exists; `missing` is set when it does not.
  absl::Status ReadFile(const std::string& path, int depth, bool* missing,
                        std::string section, std::string subsection) {
    absl::StatusOr<std::optional<std::string>> text = ReadConfFile(path);
    if (!text.ok()) return text.status();
    *missing = !text->has_value();
    if (*missing) return absl::OkStatus();
    out_->files_.push_back(path);
    reading_.push_back(path);
    absl::Status s = Parse(**text, path, depth, &section, &subsection);
    reading_.pop_back();
    return s;
  }

 private:
  absl::Status Parse(const std::string& text, const std::string& file,
                     int depth, std::string* section, std::string* subsection) {
    if (text.find('\0') != std::string::npos) {
      int line = 1 + static_cast<int>(std::count(
                         text.begin(), text.begin() + text.find('\0'), '\n'));
      return absl::InvalidArgumentError(
          absl::StrCat(file, ":", line, ": NUL byte: not a text file"));
    }
    int physical = 0;  // lines ended so far
    std::size_t pos = 0;
    while (pos < text.size()) {
      const int first_line = physical + 1;
      std::string logical;
      bool terminated = false;
      // A backslash before the newline joins the next line (conffile.c
      // turns both into blanks).
      for (;;) {
        const std::size_t nl = text.find('\n', pos);
        if (nl == std::string::npos) {
          logical.append(text, pos, std::string::npos);
          pos = text.size();
          break;
        }
        ++physical;
        if (nl > pos && text[nl - 1] == '\\') {
          logical.append(text, pos, nl - 1 - pos);
          logical.append("  ");
          pos = nl + 1;
          continue;
        }
        logical.append(text, pos, nl - pos);
        pos = nl + 1;
        terminated = true;
        break;
      }
      if (!terminated) {
        if (!TrimLeading(logical, IsSpace).empty()) {
          out_->warnings_.push_back(absl::StrCat(
              file, ":", first_line,
              ": last line has no newline: ignored, as nfs-utils ignores it"));
        }
        break;
      }
      if (absl::Status s =
              ParseLine(logical, file, first_line, depth, section, subsection);
          !s.ok()) {
        return s;
      }
    }
    return absl::OkStatus();
  }

  absl::Status ParseLine(absl::string_view line, const std::string& file,
                         int line_no, int depth, std::string* section,
                         std::string* subsection) {
    auto error = [&](absl::string_view why) {
      return absl::InvalidArgumentError(
          absl::StrCat(file, ":", line_no, ": ", why));
    };
    line = TrimLeading(line, IsSpace);
    if (line.empty() || line[0] == '#' || line[0] == ';') {
      return absl::OkStatus();
    }
    if (line[0] == '[') {
      section->clear();
      subsection->clear();
      absl::string_view head = TrimLeading(line.substr(1), IsBlank);
      const std::size_t close = head.find(']');
      if (close == absl::string_view::npos) {
        return error("section header without a closing ']'");
      }
      head = TrimTrailing(head.substr(0, close), IsBlank);
      absl::string_view name = head;
      std::optional<absl::string_view> sub;
      if (const std::size_t q = head.find('"'); q != absl::string_view::npos) {
        name = TrimTrailing(head.substr(0, q), IsBlank);
        absl::string_view rest = head.substr(q + 1);
        const std::size_t q2 = rest.find('"');
        if (q2 == absl::string_view::npos) {
          return error("subsection name without a closing '\"'");
        }
        sub = rest.substr(0, q2);
      }
      if (name.empty()) return error("section header without a name");
      *section = absl::AsciiStrToLower(name);
      if (sub.has_value()) *subsection = std::string(*sub);
      return absl::OkStatus();
    }
    const std::size_t eq = line.find('=');
    if (eq == absl::string_view::npos) {
      return error(
          "not a [section] header, a KEY = VALUE assignment or a comment");
    }
    if (section->empty()) {
      return error("assignment before the first [section] header");
    }
    const absl::string_view key = TrimTrailing(line.substr(0, eq), IsBlank);
    absl::string_view value = TrimLeading(line.substr(eq + 1), IsBlank);
    if (!value.empty() && (value[0] == '"' || value[0] == '\'')) {
      const char quote = value[0];
      value.remove_prefix(1);
      const std::size_t end = value.find(quote);
      if (end == absl::string_view::npos) {
        return error(absl::StrCat("value without its closing ",
                                  quote == '"' ? "'\"'" : "\"'\""));
      }
      value = value.substr(0, end);
    } else {
      value = value.substr(0, std::min(value.find('#'), value.find(';')));
      value = TrimTrailing(value, IsSpace);
    }
    if (key.empty()) return error("assignment without a key before '='");
    if (absl::EqualsIgnoreCase(key, "include")) {
      return Include(value, file, line_no, depth, *section, *subsection);
    }
    // conffile.c sets nothing for an empty value (an earlier one stays).
    if (value.empty()) return absl::OkStatus();
    NfsConfEntry e;
    e.section = *section;
    e.subsection = *subsection;
    e.key = std::string(key);
    e.value = std::string(value);
    e.file = file;
    e.line = line_no;
    out_->entries_[Key(e.section, absl::AsciiStrToLower(e.subsection),
                       absl::AsciiStrToLower(e.key))] = std::move(e);
    return absl::OkStatus();
  }

  absl::Status Include(absl::string_view value, const std::string& file,
                       int line_no, int depth, const std::string& section,
                       const std::string& subsection) {
    const std::string where = absl::StrCat(file, ":", line_no);
    const bool optional = absl::ConsumePrefix(&value, "-");
    if (value.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": include without a file name"));
    }
    if (depth >= kMaxIncludeDepth) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": include nested more than ", kMaxIncludeDepth,
                       " deep (does a file include itself?)"));
    }
    const std::string path = value[0] == '/'
                                 ? std::string(value)
                                 : absl::StrCat(Folder(file), "/", value);
    if (std::find(reading_.begin(), reading_.end(), path) != reading_.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": include ", path, ": already being read (an include loop)"));
    }
    bool missing = false;
    // The included file starts in the including line's section; a header
    // it opens does not carry back.
    absl::Status s = ReadFile(path, depth + 1, &missing, section, subsection);
    if (!s.ok()) {
      return absl::Status(s.code(),
                          absl::StrCat(where, ": include: ", s.message()));
    }
    if (missing && !optional) {
      out_->warnings_.push_back(
          absl::StrCat(where, ": include ", path,
                       ": no such file; skipped, as nfs-utils skips it"));
    }
    return absl::OkStatus();
  }

  NfsConf* out_;
  std::vector<std::string> reading_;  // the include chain, outermost first
};

absl::StatusOr<NfsConf> NfsConf::Load(const std::string& path) {
  NfsConf conf;
  Reader reader(&conf);
  bool missing = false;
  if (absl::Status s = reader.ReadFile(path, 0, &missing, "", ""); !s.ok()) {
    return s;
  }
  const std::string folder = path + ".d";
  struct dirent** names = nullptr;
  const int n = ::scandir(folder.c_str(), &names, nullptr, ::versionsort);
  if (n < 0) {
    if (errno == ENOENT || errno == ENOTDIR) return conf;
    return absl::FailedPreconditionError(
        absl::StrCat(folder, ": cannot list: ", ::strerror(errno)));
  }
  std::vector<std::string> files;
  for (int i = 0; i < n; ++i) {
    const std::string name = names[i]->d_name;
    ::free(names[i]);
    // conffile.c: not hidden, and NAME.conf with a NAME.
    if (name.empty() || name[0] == '.' || name.size() <= 5 ||
        !absl::EndsWith(name, ".conf")) {
      continue;
    }
    files.push_back(absl::StrCat(folder, "/", name));
  }
  ::free(names);
  for (const std::string& file : files) {
    struct stat st;
    // A folder, or a link leading nowhere, named *.conf is passed over as
    // conffile.c passes it over.
    if (::stat(file.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (absl::Status s = reader.ReadFile(file, 0, &missing, "", ""); !s.ok()) {
      return s;
    }
  }
  return conf;
}

const NfsConfEntry* NfsConf::Find(absl::string_view section,
                                  absl::string_view key,
                                  absl::string_view subsection) const {
  auto it = entries_.find(Key(absl::AsciiStrToLower(section),
                              absl::AsciiStrToLower(subsection),
                              absl::AsciiStrToLower(key)));
  return it == entries_.end() ? nullptr : &it->second;
}

std::vector<const NfsConfEntry*> NfsConf::Section(
    absl::string_view section) const {
  const std::string s = absl::AsciiStrToLower(section);
  std::vector<const NfsConfEntry*> out;
  for (auto it = entries_.lower_bound(Key(s, "", ""));
       it != entries_.end() && std::get<0>(it->first) == s; ++it) {
    out.push_back(&it->second);
  }
  return out;
}

std::optional<std::string> NfsConf::Expand(
    const NfsConfEntry& entry,
    const std::function<const char*(const char*)>& getenv) const {
  std::string value = entry.value;
  for (int i = 0; i < kMaxExpansions; ++i) {
    if (value.empty() || value[0] != '$') return value;
    const std::string name = value.substr(1);
    const char* env = getenv ? getenv(name.c_str()) : ::getenv(name.c_str());
    if (env != nullptr && *env != '\0') return std::string(env);
    const NfsConfEntry* e = Find("environment", name);
    if (e == nullptr) return std::nullopt;
    value = e->value;
  }
  return std::nullopt;
}

}  // namespace sharemgrd
