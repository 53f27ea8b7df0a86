#include "channel.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "line_format.h"
#include "libshare/dir_walk.h"

namespace sharemgrd::kernel {
namespace {

absl::Status ErrnoStatus(int err, const std::string& what) {
  std::string msg = absl::StrCat(what, ": ", strerror(err));
  switch (err) {
    case ENOENT:
      return absl::NotFoundError(msg);
    case EINVAL:
      return absl::InvalidArgumentError(msg);
    case EACCES:
    case EPERM:
      return absl::PermissionDeniedError(msg);
    case EAGAIN:
      return absl::UnavailableError(msg);
    default:
      return absl::InternalError(msg);
  }
}

using libshare::UniqueFd;

class ProcChannel : public CacheChannel {
 public:
  // write_per_reply: fd is read-only; each Write opens the channel
  // write-only for its reply (OpenProcChannelReader).
  ProcChannel(std::string cache, std::string path, int fd,
              bool write_per_reply = false)
      : cache_(std::move(cache)),
        path_(std::move(path)),
        fd_(fd),
        write_per_reply_(write_per_reply) {}
  ~ProcChannel() override { close(fd_); }
  const std::string& cache() const override { return cache_; }
  int fd() const override { return fd_; }

  absl::StatusOr<std::string> Read() override {
    std::string buf(kChannelReadSize, '\0');
    ssize_t n;
    do {
      n = read(fd_, buf.data(), buf.size());
    } while (n < 0 && errno == EINTR);
    if (n < 0) {
      if (errno == EAGAIN) return std::string();
      return ErrnoStatus(errno, absl::StrCat("read ", path_));
    }
    buf.resize(static_cast<size_t>(n));
    return buf;
  }

  absl::Status Write(std::string_view line) override {
    if (line.size() > kMaxDowncall) {
      return absl::InvalidArgumentError(absl::StrCat(
          "write ", path_, ": reply of ", line.size(), " bytes is too long"));
    }
    UniqueFd own(write_per_reply_
                     ? open(path_.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC)
                     : -1);
    if (write_per_reply_ && own.get() < 0) {
      return ErrnoStatus(errno, absl::StrCat("open ", path_));
    }
    const int fd = write_per_reply_ ? own.get() : fd_;
    ssize_t n;
    do {
      n = write(fd, line.data(), line.size());
    } while (n < 0 && errno == EINTR);
    if (n < 0) return ErrnoStatus(errno, absl::StrCat("write ", path_));
    if (static_cast<size_t>(n) != line.size()) {
      return absl::InternalError(
          absl::StrCat("write ", path_, ": short write"));
    }
    return absl::OkStatus();
  }

 private:
  const std::string cache_;
  const std::string path_;
  const int fd_;
  const bool write_per_reply_;
};

absl::Status WriteWhole(const std::string& path, std::string_view text) {
  UniqueFd fd(open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (fd.get() < 0) return ErrnoStatus(errno, absl::StrCat("open ", path));
  ssize_t n = write(fd.get(), text.data(), text.size());
  if (n < 0) return ErrnoStatus(errno, absl::StrCat("write ", path));
  return absl::OkStatus();
}

class ProcNfsdFiles : public NfsdFiles {
 public:
  explicit ProcNfsdFiles(std::string proc_root) : root_(std::move(proc_root)) {}

  absl::StatusOr<std::string> FileHandle(const std::string& domain,
                                         const std::string& path,
                                         int max_size) override {
    const std::string file = root_ + "/fs/nfsd/filehandle";
    UniqueFd fd(open(file.c_str(), O_RDWR | O_CLOEXEC));
    if (fd.get() < 0) return ErrnoStatus(errno, absl::StrCat("open ", file));
    LineWriter w;
    w.Text(domain);
    w.Text(path);
    w.Int(max_size);
    const std::string req = std::move(w).Finish();
    if (write(fd.get(), req.data(), req.size()) !=
        static_cast<ssize_t>(req.size())) {
      return ErrnoStatus(errno, absl::StrCat("write ", file, " for ", path));
    }
    std::string buf(256, '\0');
    // A transaction file answers on the same descriptor, from offset 0.
    ssize_t n = pread(fd.get(), buf.data(), buf.size(), 0);
    if (n <= 0) {
      return ErrnoStatus(n < 0 ? errno : EIO, absl::StrCat("read ", file));
    }
    buf.resize(static_cast<size_t>(n));
    return ParseFileHandleReply(buf);
  }

  absl::Status Flush(const std::string& cache) override {
    // The kernel flushes entries refreshed before the time written;
    // newer kernels always use "now" whatever the number.
    return WriteWhole(absl::StrCat(root_, "/net/rpc/", cache, "/flush"),
                      absl::StrCat(time(nullptr), "\n"));
  }

  absl::StatusOr<int64_t> FlushTime(const std::string& cache) override {
    const std::string file = absl::StrCat(root_, "/net/rpc/", cache, "/flush");
    UniqueFd fd(open(file.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) return ErrnoStatus(errno, absl::StrCat("open ", file));
    char buf[32];
    ssize_t n = read(fd.get(), buf, sizeof buf - 1);
    if (n < 0) return ErrnoStatus(errno, absl::StrCat("read ", file));
    int64_t t = 0;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(absl::string_view(buf, n)),
                          &t)) {
      return absl::DataLossError(absl::StrCat(file, ": not a time"));
    }
    return t;
  }

  absl::Status UnlockFilesystem(const std::string& path) override {
    LineWriter w;
    w.Text(path);
    return WriteWhole(root_ + "/fs/nfsd/unlock_filesystem",
                      std::move(w).Finish());
  }

  absl::StatusOr<std::string> ExportFeatures() override {
    const std::string file = root_ + "/fs/nfsd/export_features";
    UniqueFd fd(open(file.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) return ErrnoStatus(errno, absl::StrCat("open ", file));
    std::string buf(128, '\0');
    ssize_t n = read(fd.get(), buf.data(), buf.size());
    if (n < 0) return ErrnoStatus(errno, absl::StrCat("read ", file));
    buf.resize(static_cast<size_t>(n));
    return buf;
  }

 private:
  const std::string root_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<CacheChannel>> OpenProcChannel(
    const std::string& proc_root, const std::string& cache) {
  std::string path = absl::StrCat(proc_root, "/net/rpc/", cache, "/channel");
  int fd = open(path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, absl::StrCat("open ", path));
  return std::make_unique<ProcChannel>(cache, std::move(path), fd);
}

absl::StatusOr<std::unique_ptr<CacheChannel>> OpenProcChannelReader(
    const std::string& proc_root, const std::string& cache) {
  std::string path = absl::StrCat(proc_root, "/net/rpc/", cache, "/channel");
  int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, absl::StrCat("open ", path));
  return std::make_unique<ProcChannel>(cache, std::move(path), fd,
                                       /*write_per_reply=*/true);
}

std::unique_ptr<NfsdFiles> MakeProcNfsdFiles(const std::string& proc_root) {
  return std::make_unique<ProcNfsdFiles>(proc_root);
}

absl::StatusOr<std::string> ParseFileHandleReply(std::string_view text) {
  absl::StatusOr<std::vector<std::string>> f = SplitLine(text);
  if (!f.ok() || f->size() != 1 || text.substr(0, 2) != "\\x") {
    return absl::InternalError(absl::StrCat("filehandle: unexpected answer \"",
                                            std::string(text.substr(0, 80)),
                                            "\""));
  }
  return std::move((*f)[0]);
}

}  // namespace sharemgrd::kernel
