#include "fs_watch.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "libshare/path.h"
#include "libshare/store.h"

namespace sharemgrd {
namespace {

// Log lines about shares not served at one probe, beyond which a count.
constexpr int kMaxLoggedPerProbe = 20;

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string Unescape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() && s[i + 1] >= '0' &&
        s[i + 1] <= '3' && s[i + 2] >= '0' && s[i + 2] <= '7' &&
        s[i + 3] >= '0' && s[i + 3] <= '7') {
      out.push_back(static_cast<char>((s[i + 1] - '0') * 64 +
                                      (s[i + 2] - '0') * 8 + (s[i + 3] - '0')));
      i += 3;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

std::string Describe(const FsPlace& p) {
  return absl::StrCat(p.source, " (", p.fstype, ")");
}

absl::StatusOr<std::string> ReadAll(int fd) {
  std::string text;
  if (::lseek(fd, 0, SEEK_SET) < 0) {
    return absl::InternalError(absl::StrCat("lseek: ", ::strerror(errno)));
  }
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::InternalError(absl::StrCat("read: ", ::strerror(errno)));
    }
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  return text;
}

}  // namespace

MountInfo MountInfo::Parse(std::string_view text) {
  MountInfo t;
  // ID PARENT MAJ:MIN ROOT MOUNT_POINT OPTIONS [OPTIONAL...] - TYPE SOURCE
  // Split by hand: a 15,000-dataset server has a 2 MB mountinfo, parsed at
  // every mount change.
  t.by_point_.reserve(
      static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')));
  std::string_view f[16];
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    std::size_t n = 0, dash = 0;
    for (std::size_t i = 0; i < line.size() && n < 16;) {
      std::size_t j = line.find(' ', i);
      if (j == std::string_view::npos) j = line.size();
      if (j > i) {
        f[n] = line.substr(i, j - i);
        if (dash == 0 && n >= 6 && f[n] == "-") dash = n;
        ++n;
      }
      i = j + 1;
    }
    if (dash == 0 || dash + 2 >= n || f[4].empty() || f[4][0] != '/') continue;
    FsPlace p;
    p.mount_point = Unescape(f[4]);
    p.fstype = Unescape(f[dash + 1]);
    p.source = Unescape(f[dash + 2]);
    std::string key = p.mount_point;
    t.by_point_.insert_or_assign(std::move(key), std::move(p));  // on top
  }
  return t;
}

const FsPlace* MountInfo::Containing(std::string_view path) const {
  for (std::string_view p = path; !p.empty(); p = libshare::ParentPath(p)) {
    auto it = by_point_.find(absl::string_view(p.data(), p.size()));
    if (it != by_point_.end()) return &it->second;
  }
  return nullptr;
}

PathStat StatPath(const std::string& path) {
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
  } else if (S_ISLNK(st.st_mode)) {
    r.kind = PathStat::Kind::kLink;
  } else {
    r.kind = PathStat::Kind::kOther;
  }
  return r;
}

ShareProbe ProbeShare(std::string_view path, const PathStat& st,
                      const FsPlace* recorded, const MountInfo& mounts,
                      bool mount_point_required) {
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
    case PathStat::Kind::kOther:
      r.reason = "the path is no longer a directory";
      return r;
    case PathStat::Kind::kError:
      r.reason = absl::StrCat("cannot stat the path: ", st.error);
      return r;
  }
  const FsPlace* now = mounts.Containing(path);
  if (now == nullptr) {
    r.reason = "no mount contains the path";
    return r;
  }
  if (mount_point_required && now->mount_point != path) {
    r.reason = absl::StrCat(
        "no file system is mounted at the path (option mountpoint); it is on "
        "the one mounted at ",
        now->mount_point);
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
                 std::unique_ptr<libshare::Store> store)
    : config_(std::move(config)),
      catalog_(catalog),
      store_(std::move(store)),
      wake_fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

absl::StatusOr<std::unique_ptr<FsWatch>> FsWatch::Open(
    Config config, const libshare::Catalog* catalog) {
  absl::StatusOr<std::unique_ptr<libshare::Store>> store =
      libshare::Store::Open(config.db_path);
  if (!store.ok()) return store.status();
  absl::StatusOr<std::vector<libshare::FsPlaceRow>> rows =
      (*store)->LoadFsPlaces();
  if (!rows.ok()) return rows.status();
  std::unique_ptr<FsWatch> w(
      new FsWatch(std::move(config), catalog, *std::move(store)));
  MountInfo mounts = w->ReadMounts();
  absl::MutexLock l(&w->mu_);
  w->recorded_.reserve(rows->size());
  w->initial_.reserve(rows->size());
  for (libshare::FsPlaceRow& r : *rows) {
    FsPlace p{std::move(r.mount_point), std::move(r.fstype),
              std::move(r.source)};
    w->initial_.emplace(std::move(r.path), p);
    w->recorded_.emplace(r.id, std::move(p));
  }
  w->mounts_ = std::make_shared<const MountInfo>(std::move(mounts));
  return w;
}

MountInfo FsWatch::ReadMounts() const {
  MountInfo mounts;
  int fd = ::open(config_.mountinfo.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    absl::StatusOr<std::string> text = ReadAll(fd);
    ::close(fd);
    if (text.ok()) mounts = MountInfo::Parse(*text);
  }
  return mounts;
}

void FsWatch::Watch(ChangedFn changed) {
  if (thread_.joinable()) return;
  changed_ = std::move(changed);
  thread_ = std::thread([this] { Loop(); });
}

FsWatch::~FsWatch() {
  Stop();
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

void FsWatch::Stop() {
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
  }
  uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof one);
}

void FsWatch::SharesChanged(const std::vector<libshare::ShareChange>& changes) {
  for (const libshare::ShareChange& c : changes) {
    if (c.kind != libshare::ShareChange::Kind::kChanged) {
      Wake();
      return;
    }
  }
  // Options or group state changed: a share enabled again is probed too.
  if (!changes.empty()) Wake();
}

std::optional<std::string> FsWatch::NotServed(const std::string& share_path,
                                              bool live,
                                              bool mount_point_required) const {
  std::optional<FsPlace> recorded;
  std::shared_ptr<const MountInfo> mounts;
  bool served = true;
  uint64_t dev = 0;
  {
    absl::ReaderMutexLock l(&mu_);
    auto it = states_.find(share_path);
    if (it == states_.end()) {
      // Added since the last round: served (its batch woke the thread,
      // which records it), unless it needs a mount point and has none.
      // Before the first round: decided live.
      if (probed_) {
        if (!mount_point_required || mounts_ == nullptr) return std::nullopt;
        const FsPlace* now = mounts_->Containing(share_path);
        if (now != nullptr && now->mount_point == share_path) {
          return std::nullopt;
        }
        return std::string(
            "no file system is mounted at the path (option mountpoint)");
      }
      served = false;
      if (auto r = initial_.find(share_path); r != initial_.end()) {
        recorded = r->second;
      }
      mounts = mounts_;
    } else {
      if (!live && !it->second.served) return it->second.reason;
      if (!live) return std::nullopt;
      served = it->second.served;
      dev = it->second.dev;
      recorded = it->second.recorded;
      mount_point_required |= it->second.mount_point_required;
      mounts = mounts_;
    }
  }
  PathStat st = StatPath(share_path);
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
  ShareProbe p = ProbeShare(share_path, st, recorded ? &*recorded : nullptr,
                            mounts != nullptr ? *mounts : MountInfo(),
                            mount_point_required);
  if (p.served != served || (p.served && st.dev != dev)) Wake();
  if (p.served) return std::nullopt;
  return p.reason;
}

void FsWatch::ProbeAll() {
  absl::MutexLock probe(&probe_mu_);
  const auto start = std::chrono::steady_clock::now();
  MountInfo mounts = ReadMounts();
  {
    if (mounts.size() == 0) {
      // Without the mount table nothing can be told apart: keep the last
      // state rather than stop serving everything.
      if (config_.log) {
        config_.log(absl::StrCat("cannot read ", config_.mountinfo,
                                 "; served states kept"));
      }
      return;
    }
  }
  absl::StatusOr<std::vector<libshare::ShareInfo>> shares =
      catalog_->ListShares({});
  if (!shares.ok()) return;

  // Shares with `mountpoint` (effective options; inactive ones are probed
  // again when their group is enabled).
  absl::flat_hash_set<std::string> need_mount_point;
  catalog_->ForEachActive(
      [&](const libshare::ShareInfo& s, const libshare::ShareOptions& o) {
        if (o.mountpoint) need_mount_point.insert(s.path);
      });

  absl::flat_hash_map<std::string, State> next;
  next.reserve(shares->size());
  std::vector<libshare::FsPlaceRow> to_record;
  for (const libshare::ShareInfo& s : *shares) {
    PathStat st = StatPath(s.path);
    auto rec = recorded_.find(s.id);
    const bool mp = need_mount_point.contains(s.path);
    ShareProbe p =
        ProbeShare(s.path, st, rec == recorded_.end() ? nullptr : &rec->second,
                   mounts, mp);
    if (p.record.has_value()) {
      to_record.push_back({s.id, s.path, p.record->mount_point,
                           p.record->fstype, p.record->source});
      recorded_[s.id] = *p.record;
    }
    State& n = next[s.path];
    n.mount_point_required = mp;
    n.served = p.served;
    n.dev = st.dev;
    n.reason = std::move(p.reason);
    if (auto r = recorded_.find(s.id); r != recorded_.end()) {
      n.recorded = r->second;
    }
  }
  if (!to_record.empty()) {
    if (absl::Status s = store_->RecordFsPlaces(to_record); !s.ok()) {
      // Kept in memory; written again at the next start (still unrecorded).
      if (config_.log) {
        config_.log(absl::StrCat("cannot record the file systems of ",
                                 to_record.size(), " shares: ", s.message()));
      }
    }
  }
  if (recorded_.size() > shares->size() * 2 + 1024) {
    absl::flat_hash_map<uint64_t, FsPlace> kept;
    for (const libshare::ShareInfo& s : *shares) {
      auto it = recorded_.find(s.id);
      if (it != recorded_.end()) kept.emplace(s.id, std::move(it->second));
    }
    recorded_ = std::move(kept);
  }

  const std::size_t mount_count = mounts.size();
  // What changed, and the log lines saying so.
  std::vector<std::string> changed;
  std::vector<std::string> lines;
  int unlogged = 0;
  auto say = [&](std::string line) {
    if (lines.size() < kMaxLoggedPerProbe) {
      lines.push_back(std::move(line));
    } else {
      ++unlogged;
    }
  };
  {
    absl::MutexLock l(&mu_);
    for (const auto& [path, n] : next) {
      auto old = states_.find(path);
      const bool was_served = old == states_.end() || old->second.served;
      if (first_probe_ || old == states_.end()) {
        if (!n.served) {
          say(absl::StrCat(path, ": not served: ", n.reason));
          changed.push_back(path);  // first round: EXPORT may list it
        }
        continue;
      }
      if (was_served != n.served) {
        changed.push_back(path);
        say(n.served ? absl::StrCat(path, ": served again")
                     : absl::StrCat(path, ": not served: ", n.reason));
      } else if (!n.served && old->second.reason != n.reason) {
        say(absl::StrCat(path, ": not served: ", n.reason));
      }
    }
    states_ = std::move(next);
    mounts_ = std::make_shared<const MountInfo>(std::move(mounts));
    probed_ = true;
    initial_.clear();
  }
  if (!changed.empty()) version_.fetch_add(1);
  const bool first = first_probe_;
  first_probe_ = false;
  if (config_.log) {
    for (const std::string& line : lines) config_.log(line);
    if (unlogged > 0) {
      config_.log(absl::StrCat("... and ", unlogged,
                               " more shares changed served state"));
    }
    if (first || !changed.empty()) {
      const double ms = std::chrono::duration<double, std::milli>(
                            std::chrono::steady_clock::now() - start)
                            .count();
      config_.log(absl::StrCat("file systems probed: ", shares->size(),
                               " shares, ", mount_count, " mounts, ",
                               static_cast<int64_t>(ms + 0.5), " ms"));
    }
  }
  if (!changed.empty() && changed_) changed_(changed);
}

void FsWatch::Loop() {
  int fd = ::open(config_.mountinfo.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) (void)ReadAll(fd);  // POLLPRI reports changes after a read
  ProbeAll();                      // the first round
  auto next_recheck = absl::Now() + config_.recheck;
  for (;;) {
    bool probe = false;
    {
      absl::MutexLock l(&mu_);
      if (stopping_) break;
      if (wake_) {
        wake_ = false;
        probe = true;
      }
    }
    if (!probe) {
      const int timeout_ms = static_cast<int>(std::max<int64_t>(
          0, absl::ToInt64Milliseconds(next_recheck - absl::Now())));
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
    ProbeAll();
    next_recheck = absl::Now() + config_.recheck;
  }
  if (fd >= 0) ::close(fd);
}

}  // namespace sharemgrd
