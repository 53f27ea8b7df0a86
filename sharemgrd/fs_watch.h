// FsWatch: whether each share is served, i.e. still on the file system it
// was recorded on. A nested dataset that is not mounted leaves its
// mountpoint as an empty folder of the parent file system; serving that
// folder would let clients write into the wrong dataset.
//
// The rule (sharemgrd.8, "Shares follow their file systems"): a share is
// served when its path is a directory (not a link) and the mount that
// contains it (the longest mount point above or at the path in
// /proc/self/mountinfo) has the mount point, type and source recorded for
// the share. The place is recorded when the share is added (right after
// its batch commits) and, for shares stored before schema 2, at the first
// start of this version. st_dev is not compared across probes: ZFS and
// tmpfs get a new one on every mount.
//
// The state is refreshed by one thread: when the mount table changes
// (mountinfo polled for POLLPRI), every `recheck` interval (a folder moved
// away changes no mount), and after each committed batch. Decisions also
// check the one share they concern (lstat, same device as last probed), so
// a share whose folder vanished is refused at once.
//
// Thread-safety: all public methods may be called from any thread.
//
//   auto w = FsWatch::Open({.db_path = db}, catalog);
//   (*w)->Watch([](const std::vector<std::string>& paths) { ... });
//   if (std::optional<std::string> why = (*w)->NotServed(path, false)) ...
#ifndef SHAREMGRD_FS_WATCH_H_
#define SHAREMGRD_FS_WATCH_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "libshare/batch.h"
#include "libshare/catalog.h"

namespace libshare {
class Store;
}

namespace sharemgrd {

// Where a file system is mounted: what is recorded per share.
struct FsPlace {
  std::string mount_point;
  std::string fstype;
  std::string source;
  bool operator==(const FsPlace& o) const {
    return mount_point == o.mount_point && fstype == o.fstype &&
           source == o.source;
  }
};

// /proc/self/mountinfo, parsed. Pure.
class MountInfo {
 public:
  // Lines that do not parse are skipped (the kernel writes none).
  static MountInfo Parse(std::string_view text);
  // The mount containing `path` (absolute, normalized): the longest mount
  // point at or above it, the last mounted if several share it (on top).
  const FsPlace* Containing(std::string_view path) const;
  std::size_t size() const { return by_point_.size(); }

 private:
  absl::flat_hash_map<std::string, FsPlace> by_point_;
};

// What lstat says of a share's path.
struct PathStat {
  enum class Kind : uint8_t { kDirectory, kMissing, kLink, kOther, kError };
  Kind kind = Kind::kMissing;
  uint64_t dev = 0;
  std::string error;  // kError: strerror
};
PathStat StatPath(const std::string& path);

// The served-state decision for one share. Pure. `recorded` null: nothing
// recorded yet (the share is served and `*record` says what to record).
struct ShareProbe {
  bool served = false;
  std::string reason;             // why not served: "recorded on ..., now ..."
  std::optional<FsPlace> record;  // place to record now, if any
};
// `mount_point_required` (the share's `mountpoint` option): served only
// when a mount point is the path itself; nothing is recorded until it is.
ShareProbe ProbeShare(std::string_view path, const PathStat& st,
                      const FsPlace* recorded, const MountInfo& mounts,
                      bool mount_point_required = false);

class FsWatch {
 public:
  struct Config {
    std::string db_path;  // the store (a connection of its own)
    std::string mountinfo = "/proc/self/mountinfo";
    absl::Duration recheck = absl::Seconds(30);
    // After a mount change, wait this long for more before probing (a
    // pool import mounts thousands of datasets).
    absl::Duration settle = absl::Milliseconds(20);
    std::function<void(const std::string&)> log;
  };
  // Paths whose served state changed, called from the watch thread
  // without any lock of FsWatch held.
  using ChangedFn = std::function<void(const std::vector<std::string>&)>;

  // Loads the recorded places and reads the mount table; nothing is
  // probed yet (a daemon with 15,000 shares serves before its first round:
  // until then every decision probes its share live, as exactly).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<FsWatch>> Open(
      Config config, const libshare::Catalog* catalog);
  // Starts the watch thread (once); its first round probes every share,
  // records the places not recorded yet and logs what is not served.
  void Watch(ChangedFn changed);
  ~FsWatch();
  void Stop();

  // nullopt if the share at `share_path` is served (or not known yet);
  // otherwise why not ("recorded on a file system mounted at X, now Y").
  // `live`: also lstat the path now (decisions that hand out a handle).
  // `mount_point_required`: the share has `mountpoint` (callers that hold
  // its options pass it, so a share added since the last round is decided
  // by it too; rounds read it from the catalog).
  std::optional<std::string> NotServed(const std::string& share_path, bool live,
                                       bool mount_point_required = false) const;
  // Changes whenever some share's served state changes.
  uint64_t version() const { return version_.load(); }
  // Asks for a probe soon (after a batch; `changes` tells which to record).
  void SharesChanged(const std::vector<libshare::ShareChange>& changes);
  // Probes every share now, on the calling thread (tests, start).
  void ProbeAll();

 private:
  FsWatch(Config config, const libshare::Catalog* catalog,
          std::unique_ptr<libshare::Store> store);
  void Loop();
  void Wake() const;

  struct State {
    bool served = true;
    uint64_t dev = 0;  // st_dev at the last probe (served only)
    std::string reason;
    std::optional<FsPlace> recorded;  // for live probes between rounds
    bool mount_point_required = false;  // `mountpoint` at the last round
  };

  const Config config_;
  ChangedFn changed_;  // set once by Watch(), before the thread starts
  const libshare::Catalog* const catalog_;
  std::unique_ptr<libshare::Store> store_;  // the watch thread's (or start's)
  absl::flat_hash_map<uint64_t, FsPlace> recorded_;  // by share id; the
  bool first_probe_ = true;  // watch thread's (or ProbeAll's caller's)

  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, State> states_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<const MountInfo> mounts_ ABSL_GUARDED_BY(mu_);  // last read
  // Before the first round every share is decided live, with the places
  // read from the store by path (emptied by the first round).
  absl::flat_hash_map<std::string, FsPlace> initial_ ABSL_GUARDED_BY(mu_);
  bool probed_ ABSL_GUARDED_BY(mu_) = false;
  // Reads the mount table; empty if it cannot be read.
  MountInfo ReadMounts() const;
  mutable bool wake_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::atomic<uint64_t> version_{1};
  absl::Mutex probe_mu_;  // one probe at a time
  const int wake_fd_;     // eventfd: Wake() and Stop() interrupt the poll
  std::thread thread_;
};

}  // namespace sharemgrd

#endif  // SHAREMGRD_FS_WATCH_H_
