// Client API of the sharemgrd management program: what sharectl uses, and
// what any program uses to change many shares in one call instead of one
// process per share.
//
// A Client holds one connection to the daemon's Unix socket. It is not
// thread-safe: use one Client per thread (connections are cheap).
//
//   auto c = libshare::Client::Connect("/run/sharemgr/sharemgrd.sock");
//   if (!c.ok()) ...  // absl::StatusCode::kUnavailable: daemon unreachable
//   libshare::Batch b = ...;
//   absl::StatusOr<libshare::BatchResult> r = (*c)->Apply(b);
//
// Status codes: kUnavailable when the daemon cannot be reached or the
// connection breaks; kPermissionDenied when the caller may not change
// shares; kInvalidArgument or kNotFound for a refused request. A batch
// whose operations are refused is not a transport error: Apply() returns a
// BatchResult whose `errors` say which operations and why.
#ifndef LIBSHARE_CLIENT_H_
#define LIBSHARE_CLIENT_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "libshare/batch.h"
#include "libshare/records.h"
#include "libshare/sharetab.h"

namespace libshare {

inline constexpr char kDefaultSocketPath[] = "/run/sharemgr/sharemgrd.sock";

// The decision the daemon would make for a MNT from `client` of `path`.
struct CheckResult {
  std::string client;              // as given
  std::string address;             // the address it was checked as
  std::string access;              // "rw", "ro" or "none"
  bool root = false;
  std::optional<std::string> share;  // the share that covers the path
  std::string option;  // option that decided ("rw=", "ro", "none=", "" ...)
  std::string entry;   // the list entry that matched ("" if none)
  std::string reason;  // one human sentence
  std::string sec;     // the flavor decided for ("sys", "krb5", ...)
  // The share's recorded file-system identity and, when its file system's
  // differs, that one (as ShareInfo's).
  std::string fs_identity;
  std::string live_fs_identity;
};

struct RequestStats {
  std::string name;  // "MNT", "EXPORT", "BATCH", ...
  uint64_t count = 0;
  uint64_t errors = 0;
  double p50_us = 0;
  double p99_us = 0;
};

// The kernel mode: upcalls answered (of them negative), entries rewritten
// after changes, whole-cache flushes, answer latency inside the daemon.
struct KernelStats {
  std::string mode = "off";  // "on" or "off"
  uint64_t upcalls = 0;
  uint64_t negative = 0;
  uint64_t pushed = 0;
  uint64_t flushes = 0;
  double answer_p99_us = 0;
};

// One followed file's state (STATS): every file --follow-exports matches,
// whether or not a version of it was ever applied.
struct FollowedFileStatus {
  std::string path;
  std::string group;                // its managed group (may not exist yet)
  uint64_t applied_generation = 0;  // made by its last applied version
                                    // (0: none applied since the start)
  bool in_step = false;             // its group matches its last version
  std::string error;                // why its last version is refused
  int64_t error_since = 0;          // Unix seconds; 0 without an error
};

struct DaemonStats {
  uint64_t shares = 0;
  uint64_t groups = 0;
  uint64_t generation = 0;
  double load_ms = 0;
  int load_threads = 0;
  uint64_t mounts = 0;
  uint64_t mounts_dropped = 0;  // records not kept: a limit was reached
  uint64_t mount_limit = 0;
  uint64_t mount_client_limit = 0;
  CacheStats cache;
  std::vector<RequestStats> requests;
  std::string sharetab_error;  // last failure writing the view, "" if none
  KernelStats kernel;
  StoreStatus store;  // records.h
  std::vector<FollowedFileStatus> followed;  // sharemgrd --follow-exports
  bool insecure = false;  // sharemgrd runs --insecure (MNT from any port)
  // `shares` split: served; of enabled groups but not served (not on the
  // file system recorded for them, as the file-system watch's last round
  // found); of disabled groups.
  uint64_t shares_served = 0;
  uint64_t shares_not_served = 0;
  uint64_t shares_disabled = 0;
};

// One mount record (`sharectl mounts`).
struct MountInfo {
  std::string client;  // address
  std::string path;
  int64_t since = 0;  // Unix seconds of the MNT; 0: before the daemon's start
};

// One committed batch as the daemon's change log keeps it.
struct ChangeRecord {
  uint64_t generation = 0;  // the table's generation after it
  int64_t time = 0;         // Unix seconds of the commit
  uint32_t uid = 0;         // the caller (SO_PEERCRED)
  int32_t pid = 0;
  std::string origin;  // what the caller said made it ("batch FILE")
  uint64_t operations = 0;
  std::string summary;  // its operations, or counts per operation type
  std::vector<ShareChange> shares;  // the shares it touched
};

// The batches committed after a generation, oldest first.
struct ChangeList {
  uint64_t generation = 0;  // the table's now
  uint64_t oldest = 0;      // the log holds every batch after this one
  std::vector<ChangeRecord> batches;
};

// One file the daemon follows (sharemgrd --follow-exports).
struct FollowedFile {
  std::string path;   // "/etc/exports.d/zfs.exports"
  std::string group;  // its managed group ("exports-zfs")
  // Why the file is not applied ("FILE:LINE: message"; its group keeps
  // its last good state), "" when the group is in step with it.
  std::string error;
  bool changed = false;  // this call committed a batch for it
};

// What FollowSync() did.
struct FollowSyncResult {
  std::vector<std::string> patterns;  // the --follow-exports arguments
  std::vector<FollowedFile> files;    // every followed file, by path
  uint64_t generation = 0;            // the table's after the call
};

class Client {
 public:
  // Connects to the daemon's management socket.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<Client>> Connect(
      const std::string& socket_path = kDefaultSocketPath);
  virtual ~Client() = default;

  [[nodiscard]] virtual absl::StatusOr<BatchResult> Apply(const Batch& batch) = 0;
  // Says that a batch of about `call_bytes` encoded bytes follows, before
  // it is read and parsed (MGMTPROC_PREPARE_BATCH; it needs the rights of
  // Apply()). This sharemgrd answers and changes nothing; earlier ones
  // made memory ready for the batch meanwhile. Sent, not
  // waited for: an error is one of sending; what the daemon answers (a
  // refusal, or PROC_UNAVAIL from a daemon without it) is skipped by the
  // next call on this client, or by closing it. Nothing changes either
  // way, and the batch can still be sent.
  [[nodiscard]] virtual absl::Status PrepareBatch(std::size_t call_bytes) {
    (void)call_bytes;
    return absl::UnimplementedError(
        "PrepareBatch: not supported by this client");
  }
  [[nodiscard]] virtual absl::StatusOr<std::vector<GroupInfo>> ListGroups() = 0;
  // Shares of `groups` (all if empty); kNotFound names an unknown group.
  [[nodiscard]] virtual absl::StatusOr<std::vector<ShareInfo>> ListShares(
      const std::vector<std::string>& groups) = 0;
  [[nodiscard]] virtual absl::StatusOr<std::vector<SharetabEntry>> Sharetab() = 0;
  // `client` is an address or a host name (resolved by the daemon);
  // `sec` the flavor to decide for ("" is sys; the daemon refuses an
  // unknown one with kInvalidArgument).
  [[nodiscard]] virtual absl::StatusOr<CheckResult> Check(
      const std::string& client, const std::string& path,
      const std::string& sec) = 0;
  [[nodiscard]] virtual absl::StatusOr<DaemonStats> Stats() = 0;
  [[nodiscard]] virtual absl::Status FlushCache() = 0;
  // The daemon's mount records, by client address then path.
  [[nodiscard]] virtual absl::StatusOr<std::vector<MountInfo>> Mounts() {
    return absl::UnimplementedError("mounts: not supported by this client");
  }

  // `exportfs -r`: has the daemon read every followed exports file now
  // (not after the settle time) and bring each file's group in step, one
  // batch per file; returns once those batches are committed and, in
  // kernel mode, pushed to the kernel. A refused file is not an error of
  // the call: its FollowedFile says why. kNotFound when the daemon follows
  // no files (started without --follow-exports); kPermissionDenied as for
  // Apply().
  [[nodiscard]] virtual absl::StatusOr<FollowSyncResult> FollowSync() {
    return absl::UnimplementedError("FollowSync: not supported by this client");
  }

  // `sharectl rerecord`: has the daemon record anew the file system each
  // share at `paths` is on now (a share added before its file system was
  // mounted was recorded on the parent's, and is not served once its own
  // is mounted), and probe them. One line per path: what it recorded and
  // what was recorded before. All or nothing: kNotFound for a path that
  // is no share, kInvalidArgument for one that is not a directory on a
  // mount now (the message names it); kPermissionDenied as for Apply().
  [[nodiscard]] virtual absl::StatusOr<std::vector<std::string>> Rerecord(
      const std::vector<std::string>& paths) {
    (void)paths;
    return absl::UnimplementedError("Rerecord: not supported by this client");
  }

  // The batches committed after `generation`, from the daemon's bounded
  // in-memory log. kOutOfRange when the log no longer reaches back that
  // far (older than the log, or from before the daemon's start): list
  // everything instead. kInvalidArgument for a generation the table has
  // not reached. Not an error: nothing changed since (empty list).
  [[nodiscard]] virtual absl::StatusOr<ChangeList> ChangesSince(
      uint64_t generation) {
    (void)generation;
    return absl::UnimplementedError("ChangesSince");
  }
};

}  // namespace libshare

#endif  // LIBSHARE_CLIENT_H_
