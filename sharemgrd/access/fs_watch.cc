#include "fs_watch.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "libshare/dir_walk.h"
#include "libshare/file_read.h"
#include "libshare/path.h"
#include "thread_name.h"

namespace sharemgrd {
namespace {

absl::string_view ToAbsl(std::string_view s) {
  return absl::string_view(s.data(), s.size());
}

// Rounds over at least this many shares give their freed memory back.
constexpr std::size_t kTrimShares = 50000;

// The least a share's row takes in the store's file (its cell: header,
// id, a path of two bytes, a group of one, the device).
constexpr uint64_t kMinShareRowBytes = 16;

// Log lines about shares not served at one probe, beyond which a count.
constexpr int kMaxLoggedPerProbe = 20;

// "1 share", "2 shares" (log lines).
std::string Shares(std::size_t n, absl::string_view kind = "") {
  return absl::StrCat(n, " ", kind, kind.empty() ? "" : " ",
                      n == 1 ? "share" : "shares");
}

std::string Describe(const FsPlace& p) {
  return absl::StrCat(p.source, " (", p.fstype, ")");
}

// mountinfo from its start: 1,000,000 mounts are about 150 MB.
absl::StatusOr<std::string> ReadAll(int fd) {
  return libshare::ReadFromStart(fd, std::size_t{1} << 30);
}

// Rounds asked for by changes start at least this long after the last
// round ended, and at least this many times its duration: at most about a
// tenth of a core goes to them however fast changes come.
constexpr absl::Duration kWokenRoundGap = absl::Milliseconds(20);
constexpr int kWokenRoundGapFactor = 10;
// The periodic recheck (Config::recheck) comes at least this many times
// the last full round's length after it: at most 2% of a core. Measured
// 2026-12-05: a round over 1,000,000 shares took 5.9-6.5 s, and the
// 30-second recheck alone kept the watch at 13% of a core (5.2 s of CPU
// in 40 s idle); 15,000 shares (60-100 ms) keep the 30 seconds.
constexpr int kRecheckGapFactor = 50;
// A round a batch asks for starts at least this long after that batch: its
// caller's next steps (a second call, its exit, the script's next command)
// then do not share the cores with an O(N) round. Measured 2026-12-02: one
// add-share beside 15,000 shares, after 300 ms of idle, 7.1-7.9 ms with
// the round (and the sharetab view) right after the reply, 3.2 ms with
// both 100 ms later, 2.9 ms with neither.
constexpr absl::Duration kBatchRoundSettle = absl::Milliseconds(50);
// A round over a batch's changes is taken for at least this many changes,
// however small the table (beyond a quarter of it, a full round is).
constexpr std::size_t kMinChangedRound = 1024;
// A round's places are written this many at a time, each slice a
// transaction of its own with a pause after it: a change that comes
// meanwhile waits for one slice (a few ms), not for the whole write. One
// add beside 1,000,000 shares, right after the batch that made them,
// waited 136-324 ms for a round's 1,000,000 places in one transaction.
constexpr std::size_t kPlacesPerWrite = 2048;
constexpr auto kPlacesWriteGap = std::chrono::milliseconds(1);

}  // namespace

namespace {

// Whether a file system is mounted at `path` itself, decided as
// rpc.mountd decides exports(5)'s mountpoint (nfs-utils is_mountpoint):
// "path/.." is on another device, or is the same inode ("/"). A bind mount
// of a folder of the same file system is therefore not one, there as here.
bool IsMountRoot(const std::string& path, const struct stat& st) {
  struct stat parent;
  const std::string up = path + "/..";
  return ::lstat(up.c_str(), &parent) == 0 &&
         (parent.st_dev != st.st_dev || parent.st_ino == st.st_ino);
}

}  // namespace

// Why a share added since start is not served when the file system it was
// on went away before a round recorded it (ProbeShare, NotServed).
constexpr char kUnmountedBeforeRecorded[] =
    "the folder is on another file system than when the share was added, "
    "and none is mounted at it (unmounted before its file system was "
    "recorded)";

PathStat StatPath(const std::string& path, bool mount_point) {
  PathStat r;
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) {
      r.kind = PathStat::Kind::kMissing;
    } else {
      r.kind = PathStat::Kind::kError;
      r.error = ::strerror(errno);
    }
    return r;
  }
  r.dev = st.st_dev;
  if (S_ISDIR(st.st_mode)) {
    r.kind = PathStat::Kind::kDirectory;
    if (mount_point) r.mount_point = IsMountRoot(path, st);
  } else if (S_ISLNK(st.st_mode)) {
    r.kind = PathStat::Kind::kLink;
  } else {
    r.kind = PathStat::Kind::kOther;
  }
  return r;
}

ShareProbe ProbeShare(std::string_view path, const PathStat& st,
                      const FsPlace* recorded,
                      const libshare::MountTable& mounts, bool mountpoint,
                      std::optional<uint64_t> added_dev,
                      bool added_mount_root) {
  ShareProbe r;
  switch (st.kind) {
    case PathStat::Kind::kDirectory:
      break;
    case PathStat::Kind::kMissing:
      r.reason = "the folder does not exist";
      return r;
    case PathStat::Kind::kLink:
      r.reason = "the path is now a symbolic link";
      return r;
    case PathStat::Kind::kLinkAbove:
      r.reason = st.error;
      return r;
    case PathStat::Kind::kOther:
      r.reason = "the path is no longer a directory";
      return r;
    case PathStat::Kind::kError:
      r.reason = absl::StrCat("cannot stat the path: ", st.error);
      return r;
  }
  if (mountpoint && !st.mount_point) {
    r.reason = "no file system is mounted at the path (option mountpoint)";
    return r;
  }
  const FsPlace* now = mounts.Containing(path);
  if (mountpoint && (now == nullptr || now->mount_point != path)) {
    // Mounted (the live check says so) but not in the mount table read
    // last: served; the round the mount woke records its place.
    r.served = true;
    return r;
  }
  if (now == nullptr) {
    r.reason = "no mount contains the path";
    return r;
  }
  if (mountpoint && recorded != nullptr && recorded->mount_point != path) {
    recorded = nullptr;  // recorded before a file system was mounted there
  }
  if (recorded == nullptr && !mountpoint && added_dev.has_value() &&
      added_mount_root && st.dev != *added_dev && now->mount_point != path) {
    // Unmounted between the add and the round that would have recorded
    // it: the folder is now its parent's (a dataset's empty mountpoint),
    // not what was shared. A file system mounted at the path is recorded.
    r.reason = kUnmountedBeforeRecorded;
    return r;
  }
  if (recorded == nullptr) {
    r.served = true;
    r.record = *now;
    return r;
  }
  if (recorded->mount_point != now->mount_point) {
    r.reason = absl::StrCat("recorded on a file system mounted at ",
                            recorded->mount_point, ", now ", now->mount_point);
    // A file system mounted below the recorded one since the share was
    // added (the share was added before its dataset was mounted): only
    // the admin can say the share belongs on it.
    if (recorded->mount_point == "/" ||
        absl::StartsWith(now->mount_point,
                         absl::StrCat(recorded->mount_point, "/"))) {
      absl::StrAppend(&r.reason,
                      " (mounted since the share was added; if the share "
                      "is meant to be on it, sharectl rerecord -s ",
                      absl::string_view(path.data(), path.size()),
                      " records it)");
    }
    return r;
  }
  if (recorded->fstype != now->fstype || recorded->source != now->source) {
    r.reason = absl::StrCat("recorded on ", Describe(*recorded), " mounted at ",
                            recorded->mount_point, ", now ", Describe(*now));
    return r;
  }
  r.served = true;
  return r;
}

FsWatch::FsWatch(Config config, const libshare::Catalog* catalog,
                 libshare::FsPlaceRecords* places)
    : config_(std::move(config)),
      catalog_(catalog),
      records_(places),
      wake_fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

absl::StatusOr<std::unique_ptr<FsWatch>> FsWatch::Open(
    Config config, const libshare::Catalog* catalog,
    libshare::FsPlaceRecords* places) {
  std::unique_ptr<FsWatch> w(new FsWatch(std::move(config), catalog, places));
  // Ids only grow: every share from this id on is added in this run, its
  // device (ShareInfo::dev) read in this boot. Unknown: none is.
  absl::StatusOr<uint64_t> max_id = w->records_->MaxShareId();
  w->first_added_id_ = max_id.ok() ? *max_id + 1 : UINT64_MAX;
  libshare::MountTable mounts = w->ReadMounts();
  // Rows come in id order; consecutive ones mostly repeat the place and
  // the parent folder, so the last of each is remembered.
  // At most one row per share. Opened beside the catalog's load, the count
  // is not known yet: the highest id bounds it (grown row by row instead,
  // the map kept 16 MiB more at 1,000,000 shares), and so does the file (a
  // row takes kMinShareRowBytes of it at least), for a store whose ids
  // removed shares left far above the count, or written by hand. What is
  // reserved beyond the count is given back in SetCatalog.
  if (catalog != nullptr) {
    w->recorded_.reserve(catalog->share_count());
  } else if (max_id.ok()) {
    absl::StatusOr<uint64_t> used = w->records_->UsedBytes();
    const uint64_t rows = used.ok() ? *used / kMinShareRowBytes : 0;
    w->recorded_.reserve(static_cast<std::size_t>(std::min(*max_id, rows)));
  }
  uint32_t last = kNoPlace;
  std::string last_parent;
  const FsPlace* parent_mount = nullptr;
  FsPlace p;
  absl::Status scanned =
      w->records_->Scan([&](const libshare::FsPlaceRowView& r) {
        if (last == kNoPlace || p.mount_point != r.mount_point ||
            p.fstype != r.fstype || p.source != r.source) {
          p.mount_point.assign(r.mount_point);
          p.fstype.assign(r.fstype);
          p.source.assign(r.source);
          last = w->Intern(p);
        }
        w->recorded_.emplace(r.id, last);
        // mounts.Containing(r.path), the parent's part remembered.
        const FsPlace* now = mounts.MountedAt(r.path);
        if (now == nullptr) {
          std::string_view parent = libshare::ParentPath(r.path);
          if (parent != last_parent) {
            last_parent.assign(parent);
            parent_mount = parent.empty() ? nullptr : mounts.Containing(parent);
          }
          now = parent_mount;
        }
        if (now == nullptr || !(*now == p)) {
          absl::MutexLock l(&w->mu_);
          w->initial_.emplace(std::string(r.path), p);
        }
      });
  if (!scanned.ok()) return scanned;
  w->records_->ReleaseMemory();  // the scan's pages
  absl::MutexLock l(&w->mu_);
  w->mounts_ = std::make_shared<const libshare::MountTable>(std::move(mounts));
  return w;
}

void FsWatch::SetCatalog(const libshare::Catalog* catalog) {
  catalog_ = catalog;
  if (recorded_.capacity() > 4 * (catalog->share_count() + 1024)) {
    recorded_.rehash(0);  // to the size it holds
  }
}

const FsPlace& FsWatch::OwnPlace(uint32_t i) const
    ABSL_NO_THREAD_SAFETY_ANALYSIS {
  return places_[i];
}

uint32_t FsWatch::Intern(const FsPlace& p) {
  std::string key =
      absl::StrCat(p.mount_point, absl::string_view("\0", 1), p.fstype,
                   absl::string_view("\0", 1), p.source);
  auto it = place_index_.find(key);
  if (it != place_index_.end()) return it->second;
  absl::MutexLock l(&mu_);
  const uint32_t i = static_cast<uint32_t>(places_.size());
  places_.push_back(p);
  place_index_.emplace(std::move(key), i);
  return i;
}

libshare::MountTable FsWatch::ReadMounts() const {
  libshare::MountTable mounts;
  int fd = ::open(config_.mountinfo.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    absl::StatusOr<std::string> text = ReadAll(fd);
    ::close(fd);
    if (text.ok()) mounts = libshare::MountTable::Parse(*text);
  }
  return mounts;
}

void FsWatch::Watch(ChangedFn changed, std::function<void()> first_round) {
  if (thread_.joinable()) return;
  changed_ = std::move(changed);
  first_round_ = std::move(first_round);
  thread_ = std::thread([this] {
    NameThisThread("sm-fswatch");
    Loop();
  });
}

FsWatch::~FsWatch() {
  Stop();
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

void FsWatch::Stop() {
  stop_asked_ = true;
  {
    absl::MutexLock l(&mu_);
    stopping_ = true;
  }
  uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof one);
  if (thread_.joinable()) thread_.join();
}

void FsWatch::Wake() const {
  {
    absl::MutexLock l(&mu_);
    wake_ = true;
    urgent_ = true;
  }
  uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof one);
}

void FsWatch::ResetPending(bool full) {
  pending_.clear();
  pending_.shrink_to_fit();
  pending_full_ = full;
}

void FsWatch::SharesChanged(const std::vector<libshare::ShareChange>& changes) {
  // Added, removed, or options or group state changed (a share enabled
  // again is probed too): every change asks for a round, settled.
  if (changes.empty()) return;
  {
    absl::MutexLock l(&mu_);
    if (!wake_) batch_due_ = absl::Now() + kBatchRoundSettle;
    wake_ = true;
    // More changes than a quarter of the shares: one full round costs
    // about as much as probing them one by one, and lists the rest anew.
    // Before the first round has listed the shares (states_ empty) a few
    // are kept too: a batch made while it runs may come after its list.
    const std::size_t most =
        std::max(kMinChangedRound, (states_.size() + 3) / 4);
    if (pending_.size() + changes.size() > most) ResetPending(/*full=*/true);
    if (!pending_full_) {
      for (const libshare::ShareChange& c : changes) {
        pending_.push_back({c.path, c.id});
      }
    }
  }
  uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof one);
}

absl::StatusOr<std::vector<std::string>> FsWatch::Rerecord(
    const std::vector<std::string>& paths) {
  std::vector<Pending> probe;
  std::vector<std::string> lines;
  {
    absl::MutexLock l(&probe_mu_);  // no round meanwhile
    std::shared_ptr<const libshare::MountTable> mounts;
    {
      absl::ReaderMutexLock r(&mu_);
      if (!probed_ || mounts_ == nullptr) {
        return absl::UnavailableError(
            "the first look at the file systems has not finished; try again "
            "in a few seconds");
      }
      mounts = mounts_;
    }
    const std::vector<libshare::ShareLocation> shares =
        catalog_->LocationsOf(paths);
    std::vector<PlaceToRecord> rows;
    for (const std::string& path : paths) {
      auto s = std::find_if(shares.begin(), shares.end(),
                            [&](const auto& x) { return x.path == path; });
      if (s == shares.end()) {
        return absl::NotFoundError(absl::StrCat(path, ": no share has this path"));
      }
      PathStat st = StatPath(path, s->mountpoint);
      ShareProbe now = ProbeShare(path, st, nullptr, *mounts, s->mountpoint);
      if (!now.served || !now.record.has_value()) {
        return absl::InvalidArgumentError(absl::StrCat(
            path, ": nothing to record: ",
            now.reason.empty() ? "its mount is not in the mount table yet"
                               : now.reason));
      }
      auto old = recorded_.find(s->id);
      std::string was = old == recorded_.end()
                            ? std::string("nothing recorded")
                            : absl::StrCat(Describe(OwnPlace(old->second)),
                                           " mounted at ",
                                           OwnPlace(old->second).mount_point);
      rows.push_back({s->id, Intern(*now.record)});
      lines.push_back(absl::StrCat(path, ": recorded on ",
                                   Describe(*now.record), " mounted at ",
                                   now.record->mount_point, " (was ", was,
                                   ")"));
      probe.push_back({path, s->id});
    }
    if (absl::Status s = records_->Record(
            rows.size(),
            [&](std::size_t i) {
              const FsPlace& p = OwnPlace(rows[i].place);
              return libshare::FsPlaceRowView{rows[i].id, {}, p.mount_point,
                                              p.fstype, p.source};
            });
        !s.ok()) {
      return absl::InternalError(
          absl::StrCat("cannot record the file systems: ", s.message()));
    }
    for (const PlaceToRecord& r : rows) recorded_[r.id] = r.place;
  }
  if (config_.log) {
    for (const std::string& line : lines) config_.log("rerecord: " + line);
  }
  ProbeChanged(std::move(probe));  // served now: views and kernel told
  return lines;
}

std::vector<std::string> FsWatch::NotServedPaths() const {
  absl::MutexLock l(&mu_);
  std::vector<std::string> out;
  out.reserve(reasons_.size());
  for (const auto& [path, why] : reasons_) out.push_back(path);
  return out;
}

std::optional<std::string> FsWatch::NotServed(const std::string& share_path,
                                              bool live, bool mountpoint,
                                              uint64_t id,
                                              uint64_t added_dev,
                                              bool added_mount_root) const {
  const bool added = id != 0 && id >= first_added_id_;
  std::optional<FsPlace> recorded;
  std::shared_ptr<const libshare::MountTable> mounts;
  bool served = true;
  bool first_pending = false;
  uint64_t dev = 0;
  {
    absl::ReaderMutexLock l(&mu_);
    first_pending = !probed_;
    auto it = states_.find(share_path);
    if (it == states_.end()) {
      // Added since the last round: served (its batch woke the thread,
      // which records it), unless it needs a mount at its path. Before the
      // first round: decided live.
      if (probed_ && !mountpoint) {
        if (!live || !added) return std::nullopt;
        // Added since the last round: the decision that hands out a
        // handle checks that its path is still where it was when added.
        const PathStat st = StatPath(share_path, /*mount_point=*/true);
        if (st.kind != PathStat::Kind::kDirectory || st.dev == added_dev ||
            st.mount_point || !added_mount_root) {
          return std::nullopt;
        }
        return std::string(kUnmountedBeforeRecorded);
      }
      served = false;
      if (auto r = initial_.find(share_path); r != initial_.end()) {
        recorded = r->second;
      } else if (!probed_ && mounts_ != nullptr) {
        // Recorded on the mount that contains it now, or not recorded:
        // decided alike (see initial_).
        if (const FsPlace* now = mounts_->Containing(share_path)) {
          recorded = *now;
        }
      }
      mounts = mounts_;
    } else {
      // A share that has the option mountpoint since the last round (a
      // change not probed yet) is decided live, not from that round.
      const bool newly_mountpoint = mountpoint && !it->second.mountpoint;
      if (!live && !newly_mountpoint && !it->second.served) {
        auto r = reasons_.find(share_path);
        return r != reasons_.end() ? r->second : std::string();
      }
      if (!live && !newly_mountpoint) return std::nullopt;
      mountpoint = mountpoint || it->second.mountpoint;
      served = it->second.served;
      dev = it->second.dev;
      if (it->second.recorded != kNoPlace) {
        recorded = places_[it->second.recorded];
      }
      mounts = mounts_;
    }
  }
  PathStat st = StatPath(share_path, mountpoint);
  if (served && st.kind == PathStat::Kind::kDirectory && st.dev == dev) {
    return std::nullopt;  // the file system it was served from, still
  }
  if (served && st.kind == PathStat::Kind::kDirectory) {
    // Another device than at the last round: a mount changed and the
    // round it woke has not finished. Not answered from a stale table.
    Wake();
    return std::string(
        "its file system changed since the last probe (probing again)");
  }
  // Decided again with the last mount table (a mount change wakes the
  // watch thread at once); a state that changed is probed for everyone.
  ShareProbe p = ProbeShare(
      share_path, st, recorded ? &*recorded : nullptr,
      mounts != nullptr ? *mounts : libshare::MountTable(), mountpoint,
      added && !recorded ? std::optional<uint64_t>(added_dev) : std::nullopt,
      added_mount_root);
  // Before the first round `served` says nothing (the round, due now,
  // probes every share): a decision then wakes nobody. Woken, the thread
  // would probe all again right after its first round (at start the view
  // asks about every share).
  if (!first_pending && (p.served != served || (p.served && st.dev != dev))) {
    Wake();
  }
  if (p.served) return std::nullopt;
  return p.reason;
}

// lstat sees a share's own folder turned into a link, not one of the
// folders above it. Each parent is walked once per round, refusing links
// (one openat2 for the usual thousands of siblings): "" when it has none,
// else why the shares under it are not served. Looked up by view: no
// string made per share.
class FsWatch::ParentWalks {
 public:
  void Check(const std::string& path, PathStat* st) {
    const std::size_t slash = path.rfind('/');
    if (st->kind != PathStat::Kind::kDirectory || slash == std::string::npos ||
        slash == 0) {
      return;
    }
    const absl::string_view parent(path.data(), slash);
    auto it = parents_.find(parent);
    if (it == parents_.end()) {
      const std::string p(parent);
      libshare::WalkResult w = libshare::OpenDirectoryNoSymlinks(p);
      std::string why;
      if (w.stop == libshare::WalkStop::kSymlink) {
        why = absl::StrCat(w.at, ": a symlink component");
      } else if (!w.ok()) {
        why = absl::StrCat(w.at, ": ", w.Why());
      }
      it = parents_.emplace(p, std::move(why)).first;
    }
    if (!it->second.empty()) {
      st->kind = PathStat::Kind::kLinkAbove;
      st->error = it->second;
    }
  }

 private:
  absl::flat_hash_map<std::string, std::string> parents_;
};

// What a round found changed, and the log lines saying so.
struct FsWatch::RoundReport {
  std::vector<std::string> changed;
  // A share with the option mountpoint new to this round was decided live
  // until now (NotServed), and those answers may be cached (EXPORT):
  // version_ changes so they are decided again.
  bool live_until_now = false;
  std::vector<std::string> lines;
  int unlogged = 0;
  std::size_t mounts = 0;

  void Say(std::string line) {
    if (lines.size() < kMaxLoggedPerProbe) {
      lines.push_back(std::move(line));
    } else {
      ++unlogged;
    }
  }
  // One share's new state `n` against its last (`old`, null when new to
  // the rounds); `first`: the first round, which lists every share not
  // served.
  void Compare(absl::string_view path, const State& n, const State* old,
               std::string_view reason, std::string_view old_reason,
               bool first) {
    if (n.mountpoint && (old == nullptr || !old->mountpoint)) {
      live_until_now = true;
    }
    if (first || old == nullptr) {
      if (!n.served) {
        Say(absl::StrCat(path, ": not served: ", ToAbsl(reason)));
        changed.emplace_back(path);  // first round: EXPORT may list it
      }
      return;
    }
    if (old->served != n.served) {
      changed.emplace_back(path);
      Say(n.served ? absl::StrCat(path, ": served again")
                   : absl::StrCat(path, ": not served: ", ToAbsl(reason)));
    } else if (!n.served && old_reason != reason) {
      Say(absl::StrCat(path, ": not served: ", ToAbsl(reason)));
    }
  }
};

FsWatch::State FsWatch::Probe(const libshare::ShareLocation& s,
                              const libshare::MountTable& mounts,
                              ParentWalks& parents,
                              std::vector<PlaceToRecord>* to_record,
                              std::string* reason) {
  PathStat st = StatPath(s.path, s.mountpoint);
  parents.Check(s.path, &st);
  auto rec = recorded_.find(s.id);
  const bool added = s.id >= first_added_id_;
  ShareProbe p = ProbeShare(
      s.path, st, rec == recorded_.end() ? nullptr : &OwnPlace(rec->second),
      mounts, s.mountpoint,
      added && rec == recorded_.end() ? std::optional<uint64_t>(s.dev)
                                      : std::nullopt,
      s.mount_root);
  State n;
  if (p.record.has_value()) {
    n.recorded = recorded_[s.id] = Intern(*p.record);
    to_record->push_back({s.id, n.recorded});
  } else if (rec != recorded_.end()) {
    n.recorded = rec->second;
  }
  n.served = p.served;
  n.dev = st.dev;
  n.mountpoint = s.mountpoint;
  if (!p.served) *reason = std::move(p.reason);
  return n;
}

void FsWatch::RecordPlaces(const std::vector<PlaceToRecord>& rows) {
  for (std::size_t begin = 0; begin < rows.size();) {
    // Stopping: the rest in one go, as a round that reached its write
    // always wrote it all.
    const bool stopping = begin > 0 && stop_asked_.load();
    if (begin > 0 && !stopping) std::this_thread::sleep_for(kPlacesWriteGap);
    const std::size_t n = stopping
                              ? rows.size() - begin
                              : std::min(kPlacesPerWrite, rows.size() - begin);
    if (absl::Status s =
            records_->Record(n,
                             [&](std::size_t i) {
                               const PlaceToRecord& r = rows[begin + i];
                               const FsPlace& p = OwnPlace(r.place);
                               return libshare::FsPlaceRowView{
                                   r.id, {}, p.mount_point, p.fstype, p.source};
                             });
        !s.ok()) {
      // Kept in memory; written again at the next start (still
      // unrecorded).
      if (config_.log) {
        config_.log(absl::StrCat("cannot record the file systems of ",
                                 Shares(rows.size() - begin), ": ",
                                 s.message()));
      }
      return;
    }
    begin += n;
  }
}

void FsWatch::Report(RoundReport& report, std::string_view what, bool first,
                     std::chrono::steady_clock::time_point start) {
  if (!report.changed.empty() || report.live_until_now) version_.fetch_add(1);
  if (config_.log) {
    for (const std::string& line : report.lines) config_.log(line);
    if (report.unlogged > 0) {
      config_.log(absl::StrCat("... and ", Shares(report.unlogged, "more"),
                               " changed served state"));
    }
    if (first || !report.changed.empty()) {
      const double ms = std::chrono::duration<double, std::milli>(
                            std::chrono::steady_clock::now() - start)
                            .count();
      config_.log(absl::StrCat("file systems probed: ", ToAbsl(what), ", ",
                               report.mounts, " mounts, ",
                               static_cast<int64_t>(ms + 0.5), " ms"));
    }
  }
  if (!report.changed.empty() && changed_) changed_(report.changed);
}

void FsWatch::ProbeAll() {
  absl::MutexLock probe(&probe_mu_);
  const auto start = std::chrono::steady_clock::now();
  libshare::MountTable mounts = ReadMounts();
  if (mounts.size() == 0) {
    // Without the mount table nothing can be told apart: keep the last
    // state rather than stop serving everything. The changes this round
    // was to cover stay asked for: the next round (the next change's, or
    // the recheck) is a full one.
    {
      absl::MutexLock l(&mu_);
      ResetPending(/*full=*/true);
    }
    if (config_.log) {
      config_.log(absl::StrCat("cannot read ", config_.mountinfo,
                               "; served states kept"));
    }
    return;
  }
  {
    // Every change committed before the list below is in it.
    absl::MutexLock l(&mu_);
    ResetPending(/*full=*/false);
  }
  // Copied out, so that the stats below do not hold the table.
  const std::vector<libshare::ShareLocation> shares = catalog_->ListLocations();

  // The states' keys are views into one block holding every path: a
  // std::string key per share was 32 bytes in the slot plus a heap block
  // of its own (at 1,000,000 shares ~100 MiB against ~30).
  std::size_t path_bytes = 0;
  for (const libshare::ShareLocation& s : shares) path_bytes += s.path.size();
  std::unique_ptr<char[]> paths(new char[std::max<std::size_t>(1, path_bytes)]);
  std::size_t path_end = 0;
  absl::flat_hash_map<absl::string_view, State> next;
  absl::flat_hash_map<std::string, std::string> next_reasons;
  next.reserve(shares.size());
  std::vector<PlaceToRecord> to_record;
  ParentWalks parents;
  std::size_t probed = 0;
  std::string reason;
  for (const libshare::ShareLocation& s : shares) {
    // A round over a million shares takes seconds: Stop() does not wait
    // for it. Nothing of it is kept; the next start probes again.
    if ((++probed & 1023) == 0 && stop_asked_.load()) return;
    const State n = Probe(s, mounts, parents, &to_record, &reason);
    std::memcpy(paths.get() + path_end, s.path.data(), s.path.size());
    next[absl::string_view(paths.get() + path_end, s.path.size())] = n;
    path_end += s.path.size();
    if (!n.served) next_reasons[s.path] = std::move(reason);
  }
  RecordPlaces(to_record);
  if (recorded_.size() > shares.size() * 2 + 1024) {
    absl::flat_hash_map<uint64_t, uint32_t> kept;
    for (const libshare::ShareLocation& s : shares) {
      auto it = recorded_.find(s.id);
      if (it != recorded_.end()) kept.emplace(s.id, it->second);
    }
    recorded_ = std::move(kept);
  }

  RoundReport report;
  report.mounts = mounts.size();
  {
    absl::MutexLock l(&mu_);
    auto reason_of = [](const absl::flat_hash_map<std::string, std::string>& m,
                        absl::string_view path) -> std::string_view {
      auto r = m.find(path);
      return r != m.end() ? std::string_view(r->second) : std::string_view();
    };
    for (const auto& [path, n] : next) {
      auto old = states_.find(path);
      report.Compare(path, n, old == states_.end() ? nullptr : &old->second,
                     reason_of(next_reasons, path), reason_of(reasons_, path),
                     first_probe_);
    }
    states_ = std::move(next);
    state_paths_ = std::move(paths);  // after the views into the old one
    added_paths_.clear();             // likewise
    reasons_ = std::move(next_reasons);
    mounts_ = std::make_shared<const libshare::MountTable>(std::move(mounts));
    probed_ = true;
    initial_.clear();
  }
  const bool first = first_probe_;
  first_probe_ = false;
  full_rounds_.fetch_add(1);
  Report(report, Shares(shares.size()), first, start);
}

bool FsWatch::ProbeChanged(std::vector<Pending> pending) {
  absl::MutexLock probe(&probe_mu_);
  const auto start = std::chrono::steady_clock::now();
  std::shared_ptr<const libshare::MountTable> mounts;
  {
    absl::ReaderMutexLock l(&mu_);
    if (!probed_ || mounts_ == nullptr) return false;
    mounts = mounts_;
  }
  // In path order, each path probed once.
  std::sort(pending.begin(), pending.end(),
            [](const Pending& a, const Pending& b) { return a.path < b.path; });
  std::vector<std::string> paths;
  paths.reserve(pending.size());
  for (std::size_t i = 0; i < pending.size(); ++i) {
    if (i + 1 < pending.size() && pending[i + 1].path == pending[i].path) {
      continue;
    }
    paths.push_back(pending[i].path);
  }
  const std::vector<libshare::ShareLocation> shares =
      catalog_->LocationsOf(paths);
  std::vector<PlaceToRecord> to_record;
  ParentWalks parents;
  std::vector<State> states(shares.size());
  std::vector<std::string> reasons(shares.size());
  for (std::size_t i = 0; i < shares.size(); ++i) {
    // Up to a quarter of a million shares: Stop() does not wait for them.
    if ((i & 1023) == 1023 && stop_asked_.load()) return true;
    states[i] = Probe(shares[i], *mounts, parents, &to_record, &reasons[i]);
  }
  RecordPlaces(to_record);
  // The paths no longer in the table: removed, their places forgotten
  // (as the place of an id a path had before it was added again). Both
  // lists are in path order (LocationsOf keeps the order of `paths`).
  std::vector<absl::string_view> gone;
  std::size_t j = 0;
  for (const Pending& p : pending) {
    while (j < shares.size() && shares[j].path < p.path) ++j;
    const bool here = j < shares.size() && shares[j].path == p.path;
    if (!here) gone.push_back(p.path);
    if (!here || shares[j].id != p.id) recorded_.erase(p.id);
  }

  RoundReport report;
  report.mounts = mounts->size();
  {
    absl::MutexLock l(&mu_);
    for (absl::string_view path : gone) {
      states_.erase(path);
      reasons_.erase(path);
    }
    for (std::size_t i = 0; i < shares.size(); ++i) {
      const std::string& path = shares[i].path;
      auto old = states_.find(path);
      auto old_reason = reasons_.find(path);
      report.Compare(path, states[i],
                     old == states_.end() ? nullptr : &old->second, reasons[i],
                     old_reason == reasons_.end()
                         ? std::string_view()
                         : std::string_view(old_reason->second),
                     /*first=*/false);
      if (old == states_.end()) {
        added_paths_.push_back(path);
        states_.emplace(absl::string_view(added_paths_.back()), states[i]);
      } else {
        old->second = states[i];
      }
      if (states[i].served) {
        if (old_reason != reasons_.end()) reasons_.erase(old_reason);
      } else {
        reasons_[path] = std::move(reasons[i]);
      }
    }
  }
  changed_rounds_.fetch_add(1);
  Report(report, Shares(shares.size(), "changed"),
         /*first=*/false, start);
  return true;
}

void FsWatch::TrimAfterRound() const {
  // A round over a big table frees what it built (the share list, the
  // previous states: ~300 MiB at 1,000,000 shares) in pieces malloc keeps;
  // they go back to the system here. Small tables are not worth the walk.
  if (catalog_->share_count() >= kTrimShares) malloc_trim(0);
}

void FsWatch::Loop() {
  int fd = ::open(config_.mountinfo.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) (void)ReadAll(fd);  // POLLPRI reports changes after a read
  // The next recheck after a full round from `start` to `end`.
  const auto recheck_after = [this](absl::Time start, absl::Time end) {
    return end + std::max(config_.recheck, (end - start) * kRecheckGapFactor);
  };
  const absl::Time first_start = absl::Now();
  ProbeAll();  // the first round
  auto next_recheck = recheck_after(first_start, absl::Now());
  TrimAfterRound();
  if (first_round_ && !stop_asked_.load()) first_round_();
  // Rounds a wake asks for are paced: a full round is O(shares) (a stat
  // each), so a stream of decisions that find states changed would
  // otherwise keep a core busy probing back to back; a round over a
  // batch's changes is paced by its own length, so that a stream of
  // single changes (per-share scripts, group commits) shares rounds.
  // Changes arriving during the gap share the next round; mount changes
  // are not paced.
  auto next_full_round = absl::InfinitePast();
  auto next_changed_round = absl::InfinitePast();
  // Whether the mount table changed since it was last read.
  const auto mounts_changed = [fd] {
    pollfd p = {fd, POLLPRI, 0};
    return fd >= 0 && ::poll(&p, 1, 0) > 0 &&
           (p.revents & (POLLPRI | POLLERR)) != 0;
  };
  for (;;) {
    bool probe = false;
    bool paced = false;
    std::optional<std::vector<Pending>> changed;  // a round over these only
    absl::Time due;
    {
      absl::MutexLock l(&mu_);
      if (stopping_) break;
      // A decision's wake (urgent_) is paced only; a batch's also settled.
      const bool full = urgent_ || pending_full_;
      due = full ? (urgent_ ? next_full_round
                            : std::max(next_full_round, batch_due_))
                 : std::max(next_changed_round, batch_due_);
      if (wake_ && absl::Now() >= due) {
        wake_ = false;
        urgent_ = false;
        probe = true;
        if (!full) changed = std::move(pending_);
        pending_.clear();
        pending_full_ = false;
      }
      paced = wake_;
    }
    // Its changes were probed by a full round since they were asked for.
    if (changed.has_value() && changed->empty()) continue;
    if (!probe) {
      auto until = next_recheck;
      if (paced) until = std::min(until, due);
      const int timeout_ms = static_cast<int>(std::max<int64_t>(
          0, absl::ToInt64Milliseconds(until - absl::Now()) + (paced ? 1 : 0)));
      pollfd p[2] = {{fd, POLLPRI, 0}, {wake_fd_, POLLIN, 0}};
      int n = ::poll(p, 2, std::min(timeout_ms, 1000));
      if (n > 0 && (p[1].revents & POLLIN) != 0) {
        uint64_t v;
        (void)!::read(wake_fd_, &v, sizeof v);
      }
      if (n > 0 && (p[0].revents & (POLLPRI | POLLERR)) != 0) {
        // Let a burst of mounts (a pool import) settle before probing.
        absl::SleepFor(config_.settle);
        (void)ReadAll(fd);
        probe = true;
      }
      if (absl::Now() >= next_recheck) probe = true;
      if (!probe) continue;  // woken: the flag is read above
    }
    if (changed.has_value() && mounts_changed()) {
      // The changed shares would be decided against a stale mount table.
      absl::SleepFor(config_.settle);
      (void)ReadAll(fd);
      changed.reset();
    }
    const absl::Time start = absl::Now();
    const bool full =
        !changed.has_value() || !ProbeChanged(*std::move(changed));
    if (full) ProbeAll();
    const absl::Time end = absl::Now();
    const absl::Time next =
        end + std::max(kWokenRoundGap, (end - start) * kWokenRoundGapFactor);
    if (full) {
      TrimAfterRound();
      next_recheck = recheck_after(start, end);
      next_full_round = next;
      next_changed_round = end + kWokenRoundGap;
    } else {
      next_changed_round = next;
    }
  }
  if (fd >= 0) ::close(fd);
}

}  // namespace sharemgrd
