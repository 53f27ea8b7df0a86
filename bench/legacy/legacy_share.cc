// legacy_share: the per-share sharetab update that Solaris performed before
// sharemgr, kept as the baseline of the end-to-end benchmark (issue 6).
//
//   legacy_share share   SHARETAB PATH [OPTIONS [DESCRIPTION]]
//   legacy_share unshare SHARETAB PATH
//
// One process handles one share, as share(1M) did when zfs(1M) popen()ed it
// for every dataset: open the sharetab, take a write lock, read the whole
// file and scan it linearly for PATH, then overwrite the old entry, append a
// new one, or drop it, and close. The cost is a process start plus O(N) I/O
// per share, so loading N shares costs O(N^2); that is the point of the
// baseline, so it must not be optimized. Lines have the sharetab(5) form
// `path<TAB>resource<TAB>nfs<TAB>options<TAB>description`.
//
// Exit codes: 0 done; 1 I/O error or (unshare) PATH not in the sharetab;
// 2 usage.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

namespace {

int Fail(const char* what, const std::string& name) {
  std::fprintf(stderr, "legacy_share: %s %s: %s\n", what, name.c_str(),
               std::strerror(errno));
  return 1;
}

bool ReadAll(int fd, std::string* out) {
  struct stat st;
  if (fstat(fd, &st) != 0) return false;
  out->resize(static_cast<size_t>(st.st_size));
  size_t done = 0;
  while (done < out->size()) {
    ssize_t n = pread(fd, out->data() + done, out->size() - done,
                      static_cast<off_t>(done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  out->resize(done);
  return true;
}

bool WriteAll(int fd, std::string_view data, off_t offset) {
  while (!data.empty()) {
    ssize_t n = pwrite(fd, data.data(), data.size(), offset);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(static_cast<size_t>(n));
    offset += n;
  }
  return true;
}

// Byte range [begin, end) of the line for `path` (newline included), or
// begin == npos. A linear scan comparing the first field, as the original did.
std::pair<size_t, size_t> FindLine(const std::string& table,
                                   std::string_view path) {
  size_t pos = 0;
  while (pos < table.size()) {
    size_t eol = table.find('\n', pos);
    size_t next = eol == std::string::npos ? table.size() : eol + 1;
    size_t tab = table.find('\t', pos);
    size_t field_end = (tab == std::string::npos || tab > next) ? next : tab;
    if (std::string_view(table).substr(pos, field_end - pos) == path) {
      return {pos, next};
    }
    pos = next;
  }
  return {std::string::npos, std::string::npos};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4 || argc > 6 ||
      (std::strcmp(argv[1], "share") != 0 &&
       std::strcmp(argv[1], "unshare") != 0) ||
      (std::strcmp(argv[1], "unshare") == 0 && argc != 4)) {
    std::fprintf(stderr,
                 "usage: legacy_share share SHARETAB PATH [OPTIONS "
                 "[DESCRIPTION]]\n"
                 "       legacy_share unshare SHARETAB PATH\n");
    return 2;
  }
  const bool share = std::strcmp(argv[1], "share") == 0;
  const std::string sharetab = argv[2];
  const std::string path = argv[3];
  const std::string options = argc > 4 ? argv[4] : "rw";
  const std::string description = argc > 5 ? argv[5] : "";

  int fd = open(sharetab.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Fail("cannot open", sharetab);
  // Whole-file write lock, held until close, like lockf(F_LOCK) in share(1M).
  struct flock lock = {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  while (fcntl(fd, F_SETLKW, &lock) != 0) {
    if (errno != EINTR) return Fail("cannot lock", sharetab);
  }
  std::string table;
  if (!ReadAll(fd, &table)) return Fail("cannot read", sharetab);
  auto [begin, end] = FindLine(table, path);

  if (share) {
    std::string line =
        path + "\t-\tnfs\t" + options + "\t" + description + "\n";
    if (begin == std::string::npos) {
      if (!table.empty() && table.back() != '\n') line.insert(0, "\n");
      if (!WriteAll(fd, line, static_cast<off_t>(table.size()))) {
        return Fail("cannot write", sharetab);
      }
    } else {
      table.replace(begin, end - begin, line);
      if (!WriteAll(fd, std::string_view(table).substr(begin),
                    static_cast<off_t>(begin)) ||
          ftruncate(fd, static_cast<off_t>(table.size())) != 0) {
        return Fail("cannot write", sharetab);
      }
    }
  } else {
    if (begin == std::string::npos) {
      std::fprintf(stderr, "legacy_share: %s: not in %s\n", path.c_str(),
                   sharetab.c_str());
      close(fd);
      return 1;
    }
    // Removing a line moves every later line: the file is rewritten from
    // the removed entry on, as remshare() rewrote the sharetab.
    table.erase(begin, end - begin);
    if (!WriteAll(fd, std::string_view(table).substr(begin),
                  static_cast<off_t>(begin)) ||
        ftruncate(fd, static_cast<off_t>(table.size())) != 0) {
      return Fail("cannot write", sharetab);
    }
  }
  if (close(fd) != 0) return Fail("cannot close", sharetab);
  return 0;
}
