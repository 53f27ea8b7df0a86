// Reading a batch or an exports file whole (input_file.h): in blocks, up
// to a limit.
#include "input_file.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <istream>
#include <system_error>

#include "absl/strings/str_cat.h"

namespace sharectl {

// In blocks: an istreambuf_iterator copy costs a call per byte (12% of
// sharectl's CPU for a 15,000-line batch).
bool ReadAll(std::istream& in, std::string* text, std::size_t limit) {
  char block[1 << 16];
  while (in.read(block, sizeof block) || in.gcount() > 0) {
    text->append(block, static_cast<size_t>(in.gcount()));
    if (text->size() > limit) return false;
  }
  return true;
}

std::string TooLong(absl::string_view name, std::size_t limit) {
  return absl::StrCat(name, ": longer than ",
                      limit >= (std::size_t{1} << 20)
                          ? absl::StrCat(limit >> 20, " MiB")
                          : absl::StrCat(limit, " bytes"),
                      ", the most sharemgrd accepts in one call; "
                      "nothing was sent or changed: split it into smaller "
                      "files (each batch is its own transaction)");
}

bool ReadWholeFile(const std::string& path, std::string* text,
                   std::string* error, std::size_t limit) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    *error = absl::StrCat(path, ": ", std::strerror(errno));
    return false;
  }
  text->clear();
  // Room for a regular file's size: a 15,000-line batch file was copied
  // through four regrowths, each into fresh pages.
  struct stat st;
  const bool known = ::stat(path.c_str(), &st) == 0;
  if (known && S_ISDIR(st.st_mode)) {
    *error = absl::StrCat(path, ": ", std::strerror(EISDIR));
    return false;
  }
  if (known && S_ISREG(st.st_mode)) {
    if (static_cast<std::size_t>(st.st_size) > limit) {
      *error = TooLong(path, limit);
      return false;
    }
    text->reserve(static_cast<std::size_t>(st.st_size));
  }
  if (!ReadAll(f, text, limit)) {
    *error = TooLong(path, limit);
    return false;
  }
  if (f.bad()) {
    *error = absl::StrCat(path, ": read error");
    return false;
  }
  return true;
}

std::string AbsoluteName(const std::string& path) {
  if (path.empty()) return path;
  std::filesystem::path p(path);
  if (p.is_relative()) {
    std::error_code ec;
    std::filesystem::path cwd = std::filesystem::current_path(ec);
    if (ec) return path;
    p = cwd / p;
  }
  std::string out = p.lexically_normal().string();
  // "a/b/" names the same file as "a/b".
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

}  // namespace sharectl
