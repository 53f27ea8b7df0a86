// ExportsFollower: sharemgrd --follow-exports. Each followed exports(5)
// file is mirrored into a managed group named after it (/etc/exports ->
// "exports", /etc/exports.d/zfs.exports -> "exports-zfs"). The follower
// watches the files' folders with inotify (so an atomic rename-replace is
// seen), waits until a file has been quiet for the settle time, and applies
// the difference between the file and its group (adds, removes, option
// changes) as one batch: one transaction, one incremental kernel update,
// nothing flushed. A file that does not translate, or whose batch is
// refused, leaves its group as it was and its error is kept (ErrorFor) and
// logged, with the file and line; a deleted file empties its group.
//
// The file is read by the importer of `sharectl import` (libshare/import.h),
// so a followed file and an imported one mean the same.
//
// Thread-safety: Start() and Stop() from one thread; ErrorFor() and
// SyncNow() from any. Batches are applied from the follower's own thread,
// from Start() and from SyncNow(), one file at a time.
//
//   ExportsFollower::Config c;
//   c.patterns = {"/etc/exports", "/etc/exports.d/*.exports"};
//   c.catalog = catalog;
//   c.apply = [&](const libshare::Batch& b) { return mgmt->ApplyBatch(b); };
//   auto f = ExportsFollower::Start(std::move(c));
#ifndef SHAREMGRD_EXPORTS_FOLLOW_H_
#define SHAREMGRD_EXPORTS_FOLLOW_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "libshare/batch.h"
#include "libshare/catalog.h"
#include "libshare/client.h"

namespace sharemgrd {

inline constexpr int kDefaultFollowSettleMs = 200;

// One --follow-exports argument, checked: an absolute path whose last
// component may be a glob (fnmatch(3): *, ?, [...]); the folder part may
// not.
struct FollowPattern {
  std::string folder;  // "/etc/exports.d"
  std::string name;    // "*.exports" or "zfs.exports"
  bool glob = false;
};
[[nodiscard]] absl::StatusOr<FollowPattern> ParseFollowPattern(
    const std::string& arg);

// The managed group of a followed file: "exports" for a file named
// "exports", else "exports-" and the file's name without a ".exports"
// ending ("zfs.exports" -> "exports-zfs"). Error if that is not a valid
// group name.
[[nodiscard]] absl::StatusOr<std::string> FollowGroupName(
    const std::string& path);

// The operations that turn `current` (the group's shares) into the
// add-shares of `wanted` (the importer's plan for the file, in file order):
// removes first, then option changes, then adds, so that a path moving
// between nesting levels fits in one batch. `origin[i]` receives, for each
// returned operation, the index into `wanted` it comes from, or -1.
std::vector<libshare::Operation> FollowDiff(
    const std::string& group, const std::vector<libshare::ShareInfo>& current,
    const std::vector<libshare::Operation>& wanted, std::vector<int>* origin);

class ExportsFollower {
 public:
  struct Config {
    std::vector<std::string> patterns;  // --follow-exports arguments
    absl::Duration settle = absl::Milliseconds(kDefaultFollowSettleMs);
    libshare::Catalog* catalog = nullptr;  // reads only
    // Applies a batch (the daemon: MgmtService::ApplyBatch).
    std::function<libshare::BatchResult(const libshare::Batch&)> apply;
    std::function<void(const std::string&)> log;
  };

  // Checks the patterns (each folder must exist), starts watching, brings
  // every followed file's group in step once (errors are kept, not fatal),
  // releases the groups of files no longer followed, and starts the
  // watching thread. Fails on a bad pattern, a missing folder, two files
  // with one group, or when inotify cannot be set up.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<ExportsFollower>> Start(
      Config config);
  ~ExportsFollower();

  // Stops the thread; pending changes are dropped (the next start reads
  // the files again).
  void Stop();

  // The error that keeps `group`'s file from being applied, or "".
  std::string ErrorFor(const std::string& group) const;

  // One followed file, as SyncNow() left it.
  struct FileState {
    std::string path;
    std::string group;
    std::string error;     // ErrorFor(group) after the sync
    bool changed = false;  // a batch was committed for it
  };
  // `exportfs -r`: without waiting for the settle time, adds the files
  // the glob patterns match now (one renamed into place whose event the
  // thread has not read yet is included), brings every followed file's
  // group in step (one batch per file, as the thread does) and returns
  // the files by path once their batches are committed. Serialized with
  // the thread's own syncs, so two never interleave; the thread's pending
  // events still run later and find nothing to change. Do not call from
  // inside Config::apply.
  std::vector<FileState> SyncNow();
  // Every followed file now, by path, whether or not a version of it was
  // ever applied (`sharectl stats`): a file whose first version is refused
  // has no group in the table yet, but is followed all the same.
  std::vector<libshare::FollowedFileStatus> Files() const;
  const std::vector<std::string>& patterns() const { return config_.patterns; }
  // Batches applied so far (tests wait on it).
  uint64_t applied() const { return applied_.load(); }

 private:
  struct Followed {
    std::string path;
    std::string group;
    // The table generation its last applied version made (0: none applied
    // since the start); whether its group is known to match its last
    // version read; since when its last version is refused (Unix s).
    uint64_t applied_generation = 0;
    bool in_step = false;
    int64_t error_since = 0;
  };
  explicit ExportsFollower(Config config);
  absl::Status Setup();
  // Brings one file's group in step with the file (one batch); true if a
  // batch was committed. Holds sync_mu_.
  bool Sync(const std::string& path) ABSL_LOCKS_EXCLUDED(sync_mu_, mu_);
  bool SyncLocked(const std::string& path)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(sync_mu_) ABSL_LOCKS_EXCLUDED(mu_);
  // The files of the folder that glob pattern `p` matches now, sorted.
  static std::vector<std::string> GlobMatches(const FollowPattern& p);
  void Run();
  // The followed file for `path` (adding it if a glob matches), or nullptr.
  const Followed* Match(const std::string& path) ABSL_LOCKS_EXCLUDED(mu_);
  // The file's state after a sync: its error ("" once its group is in
  // step) and, when a batch was applied for it, the generation it made.
  void SetError(const std::string& path, const std::string& group,
                std::string error, uint64_t applied_generation = 0);
  void Log(const std::string& line) const;

  Config config_;
  std::vector<FollowPattern> patterns_;
  int inotify_fd_ = -1;
  int stop_fd_ = -1;
  std::map<int, std::string> watches_;  // watch descriptor -> folder
  std::thread thread_;
  std::atomic<uint64_t> applied_{0};

  // Held for a whole sync: the thread's and SyncNow()'s take turns.
  absl::Mutex sync_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  mutable absl::Mutex mu_;
  std::map<std::string, Followed> files_ ABSL_GUARDED_BY(mu_);      // by path
  std::map<std::string, std::string> errors_ ABSL_GUARDED_BY(mu_);  // group
};

}  // namespace sharemgrd

#endif  // SHAREMGRD_EXPORTS_FOLLOW_H_
