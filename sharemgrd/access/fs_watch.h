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
// The state is refreshed by one thread. A full round probes every share:
// the first, when the mount table changes (mountinfo polled for POLLPRI),
// every `recheck` interval (a folder moved away changes no mount; at least
// 50 times the last full round's length: 1,000,000 shares take seconds), and
// when a decision finds a share's state changed. After a committed batch
// (50 ms after it, paced) only the shares it changed are probed, against
// the mount table read last (a change of it not read yet makes the round a
// full one); a batch that changed more than a quarter of the shares gets a
// full round. Decisions also
// check the one share they concern (lstat, same device as last probed), so
// a share whose folder vanished is refused at once.
//
// Thread-safety: all public methods may be called from any thread.
//
//   auto w = FsWatch::Open({}, catalog, catalog->fs_places());
//   (*w)->Watch([](const std::vector<std::string>& paths) { ... });
//   if (std::optional<std::string> why = (*w)->NotServed(path, false)) ...
#ifndef SHAREMGRD_FS_WATCH_H_
#define SHAREMGRD_FS_WATCH_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
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
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "libshare/batch.h"
#include "libshare/catalog.h"
#include "libshare/mount_table.h"

namespace libshare {
class FsPlaceRecords;
}

namespace sharemgrd {

// Where a file system is mounted: what is recorded per share.
using FsPlace = libshare::MountTableEntry;

// What lstat says of a share's path.
struct PathStat {
  // kLinkAbove: a directory, but a folder above it is a link (or cannot
  // be walked without following one); found by the rounds, which walk
  // each parent once (lstat alone follows links above the last name).
  enum class Kind : uint8_t {
    kDirectory,
    kMissing,
    kLink,
    kLinkAbove,
    kOther,
    kError
  };
  Kind kind = Kind::kMissing;
  uint64_t dev = 0;
  std::string error;  // kError: strerror; kLinkAbove: where and why
  // A file system is mounted at the path itself (its device differs from
  // its parent's, or it is its parent: "/"). Filled by StatPath only when
  // asked (shares with the option mountpoint).
  bool mount_point = false;
};
PathStat StatPath(const std::string& path, bool mount_point = false);

// The served-state decision for one share. Pure. `recorded` null: nothing
// recorded yet (the share is served and `*record` says what to record).
// `mountpoint` (the share's option): served only while `st.mount_point`;
// the place is then the file system mounted there, recorded anew if the
// one recorded was not mounted at the path (nothing mounted there when the
// share was added, or the option set later).
struct ShareProbe {
  bool served = false;
  std::string reason;             // why not served: "recorded on ..., now ..."
  std::optional<FsPlace> record;  // place to record now, if any
};
// `added_dev`: for a share added since the daemon started and not
// recorded yet, the device its path was on when added; if the path is on
// another device now and nothing is mounted at it, while a file system
// was mounted at it when added (`added_mount_root`: its file system was
// unmounted before a round recorded it, and the folder is its parent's),
// it is not served, rather than the parent's file system recorded as its
// own. A share of a plain folder (nothing mounted at it when added) whose
// device changed is on its parent's file system, remounted: recorded
// where it is now.
ShareProbe ProbeShare(std::string_view path, const PathStat& st,
                      const FsPlace* recorded,
                      const libshare::MountTable& mounts,
                      bool mountpoint = false,
                      std::optional<uint64_t> added_dev = std::nullopt,
                      bool added_mount_root = true);

class FsWatch {
 public:
  struct Config {
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
  // The places are read and written through `places`, the catalog's
  // (Catalog::fs_places), which must outlive the watch. `catalog` may be
  // null: it is then given by SetCatalog, once loaded (the daemon opens the
  // watch while the catalog loads: Catalog::Config::beside_load gives
  // `places` then).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<FsWatch>> Open(
      Config config, const libshare::Catalog* catalog,
      libshare::FsPlaceRecords* places);
  // The catalog of a watch opened without one: before Watch, ProbeAll or
  // SharesChanged, and before any other thread uses the watch.
  void SetCatalog(const libshare::Catalog* catalog);
  // Starts the watch thread (once); its first round probes every share,
  // records the places not recorded yet and logs what is not served.
  // `first_round`, if given, is called from the thread after that round
  // (also when it could not read the mount table; not when Stop() cut it
  // short), without any lock of FsWatch held.
  void Watch(ChangedFn changed, std::function<void()> first_round = nullptr);
  ~FsWatch();
  void Stop();

  // nullopt if the share at `share_path` is served (or not known yet);
  // otherwise why not ("recorded on a file system mounted at X, now Y").
  // `live`: also lstat the path now (decisions that hand out a handle).
  // `mountpoint`: the share has that option (known to the caller from its
  // compiled options; rounds read it from the effective text).
  // `id`, `dev` and `mount_root` (the share's, from the catalog; 0 and
  // true when unknown): a share added since the last round is then checked
  // live too, against the device its path was on when added and whether
  // a file system was mounted at it then (see ProbeShare).
  std::optional<std::string> NotServed(const std::string& share_path, bool live,
                                       bool mountpoint = false, uint64_t id = 0,
                                       uint64_t dev = 0,
                                       bool mount_root = true) const;
  // `sharectl rerecord`: records anew, for each share at `paths`, the file
  // system that contains its path in the mount table the watch read last,
  // whatever was recorded (the admin says the share belongs there: one
  // added before its dataset was mounted was recorded on the parent's),
  // then probes them as a round over changes does. One line per path:
  // "PATH: recorded on SOURCE (TYPE) mounted at M (was ...)". All or
  // nothing: NotFound for a path that is no share, InvalidArgument for
  // one that is not a directory (or, with the option mountpoint, has
  // nothing mounted at it), Unavailable before the first round, Internal
  // when the store refuses the write; nothing is recorded then.
  [[nodiscard]] absl::StatusOr<std::vector<std::string>> Rerecord(
      const std::vector<std::string>& paths);
  // The paths of the shares the last round found not served (their
  // groups enabled or not; none before the first round).
  std::vector<std::string> NotServedPaths() const;
  // A decision found that a share's path no longer leads where it did
  // (a folder above it became a link, which the live check of NotServed
  // does not walk): asks for a full round, paced.
  void Recheck() const { Wake(); }
  // Changes whenever some share's served state changes.
  uint64_t version() const { return version_.load(); }
  // Asks for a round over the shares a batch changed: kBatchRoundSettle
  // (50 ms) after it at the earliest, and paced (fs_watch.cc).
  void SharesChanged(const std::vector<libshare::ShareChange>& changes);
  // Probes every share now, on the calling thread (tests, start).
  void ProbeAll();
  // Rounds done so far: over every share, and over a batch's changes.
  uint64_t full_rounds() const { return full_rounds_.load(); }
  uint64_t changed_rounds() const { return changed_rounds_.load(); }

 private:
  FsWatch(Config config, const libshare::Catalog* catalog,
          libshare::FsPlaceRecords* places);
  void Loop();
  void Wake() const;
  // Forgets the changes waiting for a round (and their memory); `full`:
  // the next round is a full one.
  void ResetPending(bool full) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void TrimAfterRound() const;

  // A share a batch changed, waiting for its round.
  struct Pending {
    std::string path;
    uint64_t id = 0;  // for a removal, the id it had
  };
  // Probes the shares at `pending`'s paths (those no longer in the table
  // are forgotten), on the calling thread. False, having done nothing,
  // before the first round.
  bool ProbeChanged(std::vector<Pending> pending);
  class ParentWalks;
  struct RoundReport;
  // Logs a round's report, moves version_ and calls changed_.
  void Report(RoundReport& report, std::string_view what, bool first,
              std::chrono::steady_clock::time_point start);

  // Places are kept once each (a million shares sit on a few file
  // systems) and named by their index in places_.
  static constexpr uint32_t kNoPlace = UINT32_MAX;
  struct State {
    uint64_t dev = 0;              // st_dev at the last probe (served only)
    uint32_t recorded = kNoPlace;  // for live probes between rounds
    bool served = true;
    bool mountpoint = false;  // the share's option
  };
  // A share's place to write to the store: the share and its place's
  // index in places_ (16 bytes, where a row of its own texts took ~180 and
  // a round after a batch of 1,000,000 adds held 1,000,000 of them).
  struct PlaceToRecord {
    uint64_t id;
    uint32_t place;
  };
  // One share probed by a round (the watch thread's): its state, and why
  // it is not served (`reason`). Records its place in recorded_ and, when
  // new, in `to_record`.
  State Probe(const libshare::ShareLocation& s,
              const libshare::MountTable& mounts, ParentWalks& parents,
              std::vector<PlaceToRecord>* to_record, std::string* reason);
  // Writes the places a round recorded to the store (the watch thread's).
  void RecordPlaces(const std::vector<PlaceToRecord>& rows);
  // The index of `p` in places_, added if new. The watch thread's (or
  // Open's); takes mu_ only to add.
  uint32_t Intern(const FsPlace& p);
  // places_[i] for the thread that calls Intern (the only one that adds),
  // without mu_; valid until its next Intern.
  const FsPlace& OwnPlace(uint32_t i) const;

  const Config config_;
  ChangedFn changed_;  // set once by Watch(), before the thread starts
  std::function<void()> first_round_;  // likewise
  const libshare::Catalog* catalog_;   // set before any other thread runs
  // The recorded places, the catalog's (Catalog::fs_places): read at
  // Open, written by the watch thread's rounds.
  libshare::FsPlaceRecords* const records_;
  // By share id, the index of its recorded place; the watch thread's (or
  // ProbeAll's caller's), as are the two below.
  absl::flat_hash_map<uint64_t, uint32_t> recorded_;
  absl::flat_hash_map<std::string, uint32_t> place_index_;  // Intern's
  bool first_probe_ = true;

  mutable absl::Mutex mu_;
  std::vector<FsPlace> places_ ABSL_GUARDED_BY(mu_);  // only grows
  // Keyed by views into state_paths_ (all the paths of the last round).
  absl::flat_hash_map<absl::string_view, State> states_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<char[]> state_paths_ ABSL_GUARDED_BY(mu_);
  // The paths of shares first probed by a round over changes (a deque:
  // the views stay valid as it grows); emptied by the next full round.
  std::deque<std::string> added_paths_ ABSL_GUARDED_BY(mu_);
  // What the batches since the last round changed, for a round over those
  // only; `pending_full_`: too many (or before the first round, or the last
  // full round could not read the mount table), the next round is a full
  // one.
  std::vector<Pending> pending_ ABSL_GUARDED_BY(mu_);
  bool pending_full_ ABSL_GUARDED_BY(mu_) = false;
  // Why each share not served at the last round is not (only those).
  absl::flat_hash_map<std::string, std::string> reasons_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<const libshare::MountTable> mounts_
      ABSL_GUARDED_BY(mu_);  // last read
  // Before the first round every share is decided live, with the places
  // read from the store by path (emptied by the first round). Only the
  // places other than the mount containing the path in mounts_ (read at
  // Open) are kept here: a share not listed was recorded on that mount or
  // not at all, which decide alike (ProbeShare serves both).
  absl::flat_hash_map<std::string, FsPlace> initial_ ABSL_GUARDED_BY(mu_);
  bool probed_ ABSL_GUARDED_BY(mu_) = false;
  // Reads the mount table; empty if it cannot be read.
  libshare::MountTable ReadMounts() const;
  mutable bool wake_ ABSL_GUARDED_BY(mu_) = false;
  // The pending wake came from a decision (Wake), not only from batches.
  mutable bool urgent_ ABSL_GUARDED_BY(mu_) = false;
  // When the round the first pending batch asked for may start.
  absl::Time batch_due_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // Stop() asked: a round in progress gives up (a round over a million
  // shares takes seconds; its unfinished work is redone next start).
  std::atomic<bool> stop_asked_{false};
  std::atomic<uint64_t> version_{1};
  std::atomic<uint64_t> full_rounds_{0};
  std::atomic<uint64_t> changed_rounds_{0};
  // The first share id added since the daemon started: set in Open,
  // before any other thread sees the object; read only after.
  uint64_t first_added_id_ = UINT64_MAX;
  absl::Mutex probe_mu_;  // one probe at a time
  const int wake_fd_;     // eventfd: Wake() and Stop() interrupt the poll
  std::thread thread_;
};

}  // namespace sharemgrd

#endif  // SHAREMGRD_FS_WATCH_H_
