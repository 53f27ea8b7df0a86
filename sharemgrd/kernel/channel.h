// The kernel's files the kernel mode talks through, behind interfaces so
// tests can fake them:
//  - CacheChannel: /proc/net/rpc/CACHE/channel. Each read() returns one
//    whole request line (0 bytes when none is queued); each write() is
//    one reply line. Opened O_RDWR once: the kernel counts write-opens as
//    listeners, and every open file is a separate reader.
//  - NfsdFiles: the other files: /proc/fs/nfsd/filehandle (a transaction:
//    write "DOMAIN PATH MAXSIZE\n", read "\xHANDLE\n" on the same fd),
//    /proc/fs/nfsd/unlock_filesystem, /proc/fs/nfsd/export_features and
//    /proc/net/rpc/CACHE/flush.
// Everything takes a proc root ("/proc" in production) so tests can point
// it at a folder. Implementations are thread-safe.
#ifndef SHAREMGRD_KERNEL_CHANNEL_H_
#define SHAREMGRD_KERNEL_CHANNEL_H_

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace sharemgrd::kernel {

// The caches the kernel mode answers.
inline constexpr char kIpCache[] = "auth.unix.ip";
inline constexpr char kGidCache[] = "auth.unix.gid";
inline constexpr char kFhCache[] = "nfsd.fh";
inline constexpr char kExportCache[] = "nfsd.export";

// The largest request line the kernel writes is one page; replies over
// 8 KiB fail before Linux 5.10.
inline constexpr size_t kChannelReadSize = 32 * 1024;
inline constexpr size_t kMaxDowncall = 8 * 1024;

class CacheChannel {
 public:
  virtual ~CacheChannel() = default;
  virtual const std::string& cache() const = 0;  // "nfsd.export", ...
  // A descriptor that polls readable (POLLIN) while a request is queued.
  virtual int fd() const = 0;
  // One request line (ending in "\n"), or "" when none is queued.
  [[nodiscard]] virtual absl::StatusOr<std::string> Read() = 0;
  // Writes one reply line (ending in "\n") in one write. Errors carry the
  // kernel's errno (ENOENT: unknown domain or path; EINVAL: refused).
  [[nodiscard]] virtual absl::Status Write(std::string_view line) = 0;
};

// Opens PROC_ROOT/net/rpc/CACHE/channel read-write, non-blocking.
[[nodiscard]] absl::StatusOr<std::unique_ptr<CacheChannel>> OpenProcChannel(
    const std::string& proc_root, const std::string& cache);

// Opens it read-only: a reader that is no listener. The kernel makes an
// upcall only while a write-open exists or for 30 s after the last one
// closed (net/sunrpc/cache.c, cache_listeners_exist counts writers and
// last_close only), and every open file reads every queued request. Each
// Write opens the channel write-only for that one reply, so the kernel
// goes on making upcalls for 30 s after each answer, then stops. What
// the kernel mode watches auth.unix.gid with when it does not manage
// gids (kernel_mode.cc).
[[nodiscard]] absl::StatusOr<std::unique_ptr<CacheChannel>>
OpenProcChannelReader(const std::string& proc_root, const std::string& cache);

class NfsdFiles {
 public:
  virtual ~NfsdFiles() = default;
  // The kernel's handle (raw bytes) for PATH as DOMAIN sees it, at most
  // max_size bytes (32 for MOUNT v1, 64 for v3). The auth.unix.ip and
  // nfsd.export entries must be in the kernel already: this makes no
  // upcall.
  [[nodiscard]] virtual absl::StatusOr<std::string> FileHandle(
      const std::string& domain, const std::string& path, int max_size) = 0;
  // Drops every entry of one cache (writes the flush file).
  [[nodiscard]] virtual absl::Status Flush(const std::string& cache) = 0;
  // When the cache was last flushed (wall-clock seconds, as the flush file
  // shows it). The kernel treats every entry refreshed at or before that
  // second as flushed, and a flush within the same second as the previous
  // one moves it a second into the future.
  [[nodiscard]] virtual absl::StatusOr<int64_t> FlushTime(
      const std::string& cache) = 0;
  // Drops the NLM locks (and NFSv4 state) on the file system of PATH.
  [[nodiscard]] virtual absl::Status UnlockFilesystem(
      const std::string& path) = 0;
  // The text of export_features; NotFound on kernels without it.
  [[nodiscard]] virtual absl::StatusOr<std::string> ExportFeatures() = 0;
};

std::unique_ptr<NfsdFiles> MakeProcNfsdFiles(const std::string& proc_root);

// Parses the filehandle file's answer "\xHEX\n" into bytes.
[[nodiscard]] absl::StatusOr<std::string> ParseFileHandleReply(
    std::string_view text);

}  // namespace sharemgrd::kernel

#endif  // SHAREMGRD_KERNEL_CHANNEL_H_
