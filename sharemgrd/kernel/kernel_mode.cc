#include "kernel_mode.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <set>
#include <thread>

#include "absl/cleanup/cleanup.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "export_entry.h"
#include "fsid_index.h"
#include "keyed_work_queue.h"
#include "line_format.h"
#include "mirror.h"
#include "share_tree.h"
#include "libshare/dir_walk.h"

namespace sharemgrd::kernel {
namespace {

enum Cache { kIp, kGid, kFh, kExport, kCaches };

int CacheIndex(const std::string& name) {
  if (name == kIpCache) return kIp;
  if (name == kGidCache) return kGid;
  if (name == kFhCache) return kFh;
  if (name == kExportCache) return kExport;
  return -1;
}

const char* CacheName(int c) {
  switch (c) {
    case kIp:
      return kIpCache;
    case kGid:
      return kGidCache;
    case kFh:
      return kFhCache;
    default:
      return kExportCache;
  }
}

// The last answers' latencies, for a p99 without keeping them all.
class LatencyWindow {
 public:
  void Add(uint64_t us) {
    absl::MutexLock lock(&mu_);
    if (v_.size() < kSize) {
      v_.push_back(us);
    } else {
      v_[next_] = us;
    }
    next_ = (next_ + 1) % kSize;
  }
  uint64_t P99() const {
    std::vector<uint64_t> copy;
    {
      absl::MutexLock lock(&mu_);
      copy = v_;
    }
    if (copy.empty()) return 0;
    const size_t k = (copy.size() * 99 + 99) / 100 - 1;
    std::nth_element(copy.begin(), copy.begin() + k, copy.end());
    return copy[k];
  }

 private:
  static constexpr size_t kSize = 4096;
  mutable absl::Mutex mu_;
  std::vector<uint64_t> v_ ABSL_GUARDED_BY(mu_);
  size_t next_ ABSL_GUARDED_BY(mu_) = 0;
};

// A digest of a reply without its expiry field: two answers with the same
// digest tell the kernel the same thing.
uint64_t Digest(const std::string& line, size_t expiry_field) {
  absl::StatusOr<std::vector<std::string>> f = SplitLine(line);
  if (!f.ok()) return 0;
  std::string joined;
  for (size_t i = 0; i < f->size(); ++i) {
    if (i == expiry_field) continue;
    joined += (*f)[i];
    joined.push_back('\0');
  }
  return std::hash<std::string>()(joined);
}

constexpr size_t kExportExpiryField = 2;
constexpr size_t kFhExpiryField = 3;
// An expiry in the past: the kernel drops the entry and asks again.
constexpr int64_t kExpired = 1;

}  // namespace

constexpr absl::Duration kFlushSettle = absl::Seconds(4);
// How long SharesChanged waits for a push's rewrites.
constexpr absl::Duration kPushWait = absl::Seconds(10);
// A change that took this long is logged with its parts.
constexpr absl::Duration kPushLogged = absl::Milliseconds(100);

struct KernelMode::Impl {
  KernelConfig config;
  const libshare::Catalog* catalog;
  const ShareAccess* access;
  KernelDeps deps;
  CacheChannel* channels[kCaches] = {};
  ShareTree tree;
  FsidIndex index;
  std::unique_ptr<Responder> responder;
  std::unique_ptr<Mirror> mirror;
  std::unique_ptr<KeyedWorkQueue> pool;
  int wake_fd = -1;
  std::atomic<bool> stopping{false};
  std::thread poller;
  std::thread indexer;
  absl::Mutex stop_mu;
  bool stopped ABSL_GUARDED_BY(stop_mu) = false;

  std::atomic<uint64_t> upcalls{0}, negative{0}, pushed{0}, flushes{0},
      bad_upcalls{0}, write_errors{0};
  LatencyWindow latency;

  // Pushes whose rewrites (on the clients' keys) are not all written yet,
  // by number in the order they ran: WaitPushed waits for those begun
  // before it.
  absl::Mutex push_mu;
  uint64_t pushes_begun ABSL_GUARDED_BY(push_mu) = 0;
  std::set<uint64_t> pushes_unfinished ABSL_GUARDED_BY(push_mu);

  void Log(const std::string& line) const {
    if (config.log) config.log(line);
  }

  int64_t Now() const { return deps.now(); }

  // Waits (at most kFlushSettle) until an answer written now is newer
  // than the caches' last flush. The kernel counts an entry refreshed in
  // the flush's second (or before) as flushed, and a second flush within
  // one second moves the flush time a second ahead: answers written
  // meanwhile would be dropped at once, and a client's request waiting on
  // them would time out (seen with the real nfsd right after `exportfs`
  // and our start-up flush). Two seconds past the flush time leaves room
  // for the kernel's rounding between boot-relative and wall-clock time.
  void WaitOutFlush() {
    if (!deps.files) return;
    const int64_t latest = LatestFlushTime();
    if (latest > 0) fresh_after = latest + 2;
    SayIfFlushedAhead(latest);
    WaitUntilFresh();
  }

  // The latest of the caches' flush times (0 if none reads).
  int64_t LatestFlushTime() const {
    int64_t latest = 0;
    for (int c = 0; c < kCaches; ++c) {
      if (channels[c] == nullptr) continue;
      absl::StatusOr<int64_t> t = deps.files->FlushTime(CacheName(c));
      if (t.ok()) latest = std::max(latest, *t);
    }
    return latest;
  }

  // Each flush within the flush time's second moves it a second on: a run
  // of flushes (`exportfs -ra` once per dataset created) leaves it ahead
  // of the clock, and until the clock passes it the kernel drops every
  // answer as soon as it is written, whoever writes it. Said once per
  // flush time, as clients wait that long whatever we do.
  void SayIfFlushedAhead(int64_t latest) {
    const int64_t now = time(nullptr);
    if (latest <= now + absl::ToInt64Seconds(kFlushSettle)) return;
    if (said_flushed_until.exchange(latest) == latest) return;
    Log(absl::StrCat(
        "kernel mode: the kernel counts its caches as flushed until ",
        absl::FormatTime("%H:%M:%S", absl::FromUnixSeconds(latest),
                         absl::LocalTimeZone()),
        ", ", latest - now,
        " s ahead of the clock (many flushes in a row, such as exportfs -ra "
        "once per change): it drops every answer before then, so NFS "
        "requests that need one wait up to ",
        latest - now, " s"));
  }
  std::atomic<int64_t> said_flushed_until{0};

  // Whether flushing `cache` now would drop anything: not when its flush
  // time is already ahead of the clock (every entry in it counts as
  // flushed, and a flush would only move that time a second further).
  bool FlushWouldDrop(int cache) const {
    absl::StatusOr<int64_t> t = deps.files->FlushTime(CacheName(cache));
    return !t.ok() || *t <= static_cast<int64_t>(time(nullptr)) + 1;
  }

  // Whether `cache` is flushed at start and by Flush(): every cache
  // answered, except auth.unix.gid when gids are not managed. Then its
  // channel is only a reader (OpenProcChannelReader) for the upcalls the
  // kernel still makes for 30 s after a previous responder that managed
  // gids (Debian's rpc.mountd) closed it: answered at once from the
  // system's groups, as that responder would have, for gid_bridge_ttl;
  // a request waiting on such an upcall would otherwise be dropped until
  // the pending entry expired (120 s and more: a flush cannot drop a
  // pending entry). Its valid entries are kept to expire on their own.
  bool Flushes(int cache) const {
    return channels[cache] != nullptr && (cache != kGid || config.manage_gids);
  }


  // See WaitOutFlush; every reply waits here (Write, WriteIpEntry), so
  // answers are held back after `sharectl cache flush` too.
  void WaitUntilFresh() const {
    // The common case, on every write: nothing to wait for.
    const int64_t after = fresh_after.load(std::memory_order_relaxed);
    if (after == 0 || time(nullptr) >= after) return;
    const absl::Time give_up = absl::Now() + kFlushSettle;
    while (time(nullptr) < fresh_after && !stopping && absl::Now() < give_up) {
      absl::SleepFor(absl::Milliseconds(50));
    }
  }
  // Wall-clock second from which answers outlive the last flush we made.
  std::atomic<int64_t> fresh_after{0};

  // Writes a reply; an export or fh line for a domain the kernel does not
  // know (someone ran `exportfs -f`, or the ip entry expired) is retried
  // once after writing the domain's ip entry.
  bool Write(int cache, const std::string& line, std::string_view domain) {
    CacheChannel* ch = channels[cache];
    if (ch == nullptr) return false;
    WaitUntilFresh();
    absl::Status s = ch->Write(line);
    if (absl::IsNotFound(s) && (cache == kExport || cache == kFh)) {
      if (std::optional<libshare::IpAddress> client =
              Responder::ClientOf(domain)) {
        WriteIpEntry(*client);
        s = ch->Write(line);
      }
    }
    if (!s.ok()) {
      ++write_errors;
      Log(absl::StrCat("kernel mode: ", ch->cache(), " refused \"",
                       line.substr(0, line.size() - 1), "\": ", s.message()));
      return false;
    }
    return true;
  }

  void WriteIpEntry(const libshare::IpAddress& client) {
    IpUpcall u{"nfsd", client.ToString(), client};
    Answer a = responder->Ip(u);
    WaitUntilFresh();
    if (channels[kIp] != nullptr && !channels[kIp]->Write(a.line).ok()) {
      ++write_errors;
    }
  }

  // Writes an nfsd.export answer and remembers it.
  bool TellExport(const std::string& domain, const std::string& path,
                  const Answer& a) {
    if (!Write(kExport, a.line, domain)) return false;
    std::vector<MirrorEntry> evicted;
    mirror->RecordExport(domain, path, Digest(a.line, kExportExpiryField),
                         &evicted);
    Forget(evicted);
    return true;
  }

  // Whether the directory the kernel finds by the name `path` is still
  // the one the access decision saw: no symlink component (ShareAccess
  // walks without following links, the kernel's kern_path follows them)
  // and, when the decision walked to it, the same device and inode. One
  // open and fstat.
  static bool PathUnchanged(const std::string& path, const Answer& a) {
    libshare::WalkResult w = libshare::OpenDirectoryNoSymlinks(path);
    if (w.stop != libshare::WalkStop::kOk) return false;
    return !a.walked || (w.dev == a.dev && w.ino == a.ino);
  }

  // Tells the kernel no for (domain, path) with the short failure expiry
  // and remembers it. Not an expiry in the past: that makes the kernel
  // ask again at once, and while someone keeps the link in place every
  // answer would be a grant taken back, in a loop; failure_ttl bounds
  // that to one upcall per failure_ttl and still lets a repaired path be
  // granted soon.
  void Revoke(const std::string& domain, const std::string& path,
              const std::string& why) {
    Answer no{ExportDowncall(domain, path,
                             Now() + absl::ToInt64Seconds(config.failure_ttl),
                             std::nullopt),
              true};
    TellExport(domain, path, no);
    Log(absl::StrCat("kernel mode: ", path, " ", why, " for ", domain,
                     ": told the kernel no"));
  }

  // TellExport, then for a positive answer checks the path again
  // (PathUnchanged) now that the kernel resolved it: someone owning a
  // component could have swapped a directory for a link after the
  // decision walked it, and the kernel would have filed the grant under
  // the link's target. Returns whether the answer was told and stands.
  bool TellExportChecked(const std::string& domain, const std::string& path,
                         const Answer& a) {
    const bool told = TellExport(domain, path, a);
    if (a.negative || !a.recheck) return told;
    if (!PathUnchanged(path, a)) {
      Revoke(domain, path, "changed on disk while it was answered");
      return false;
    }
    return told;
  }

  // Runs `job` under `key` on the pool, behind that key's queued work,
  // and waits for it. False if the pool dropped it (stopping).
  bool RunKeyed(const std::string& key, std::function<void()> job) {
    struct Done {
      absl::Notification n;
      bool ran = false;
    };
    auto done = std::make_shared<Done>();
    // Notifies when the job ran, or when the pool drops it unrun (the
    // guard is destroyed with the job).
    struct Guard {
      std::shared_ptr<Done> d;
      ~Guard() {
        if (d && !d->n.HasBeenNotified()) d->n.Notify();
      }
    };
    auto guard = std::make_shared<Guard>();
    guard->d = done;
    pool->Submit(key, [job = std::move(job), guard, done] {
      job();
      done->ran = true;
      done->n.Notify();
    });
    guard.reset();
    done->n.WaitForNotification();
    return done->ran;
  }

  bool TellFh(const FhUpcall& u, const Answer& a) {
    if (!Write(kFh, a.line, u.domain)) return false;
    absl::StatusOr<std::vector<std::string>> f = SplitLine(a.line);
    const std::string path = f.ok() && f->size() > kFhExpiryField + 1
                                 ? (*f)[kFhExpiryField + 1]
                                 : std::string();
    std::vector<MirrorEntry> evicted;
    mirror->RecordFh(u.domain, u.fsid_type, u.fsid, path,
                     Digest(a.line, kFhExpiryField), &evicted);
    Forget(evicted);
    return true;
  }

  // Entries the mirror no longer holds could not be rewritten on a
  // change: make the kernel ask again for them instead.
  void Forget(const std::vector<MirrorEntry>& evicted) {
    for (const MirrorEntry& e : evicted) {
      if (e.kind == MirrorEntry::Kind::kExport) {
        Write(kExport, ExportDowncall(e.domain, e.path, kExpired, std::nullopt),
              e.domain);
      } else {
        Write(kFh,
              FhDowncall(e.domain, e.fsid_type, e.fsid, kExpired, std::nullopt),
              e.domain);
      }
    }
  }

  // Computes and tells an answer; if the table changed or a push updated
  // the tree and index meanwhile, that push may have looked for what to
  // rewrite before this older answer was recorded: tell again.
  template <typename Compute, typename Tell>
  Answer AnswerStable(const Compute& compute, const Tell& tell) {
    Answer a;
    for (int i = 0; i < 3; ++i) {
      const uint64_t gen = catalog->generation();
      const uint64_t pushes = learned.load();
      a = compute();
      tell(a);
      if (catalog->generation() == gen && learned.load() == pushes) break;
    }
    return a;
  }

  void Answered(const Answer& a, absl::Time read_at) {
    ++upcalls;
    if (a.negative) ++negative;
    latency.Add(static_cast<uint64_t>(
        absl::ToInt64Microseconds(absl::Now() - read_at)));
  }

  void Dispatch(int cache, std::string line) {
    const absl::Time read_at = absl::Now();
    switch (cache) {
      case kIp: {
        absl::StatusOr<IpUpcall> u = ParseIpUpcall(line);
        if (!u.ok()) break;
        const std::string key = Responder::DomainOf(u->address);
        pool->Submit(key, [this, u = *std::move(u), read_at] {
          Answer a = responder->Ip(u);
          Write(kIp, a.line, "");
          Answered(a, read_at);
        });
        return;
      }
      case kGid: {
        absl::StatusOr<GidUpcall> u = ParseGidUpcall(line);
        if (!u.ok()) break;
        pool->Submit(absl::StrCat("uid ", u->uid), [this, u = *u, read_at] {
          Answer a = responder->Gid(u, deps.groups.get());
          Write(kGid, a.line, "");
          Answered(a, read_at);
        });
        return;
      }
      case kFh: {
        absl::StatusOr<FhUpcall> u = ParseFhUpcall(line);
        if (!u.ok()) break;
        const std::string key = u->domain;
        pool->Submit(key, [this, u = *std::move(u), read_at] {
          Answer a = AnswerStable([&] { return responder->Fh(u); },
                                  [&](const Answer& x) { TellFh(u, x); });
          Answered(a, read_at);
        });
        return;
      }
      case kExport: {
        absl::StatusOr<ExportUpcall> u = ParseExportUpcall(line);
        if (!u.ok()) break;
        const std::string key = u->domain;
        pool->Submit(key, [this, u = *std::move(u), read_at] {
          Answer a = AnswerStable(
              [&] { return responder->Export(u.domain, u.path); },
              [&](const Answer& x) { TellExportChecked(u.domain, u.path, x); });
          Answered(a, read_at);
        });
        return;
      }
    }
    ++bad_upcalls;
    if (AnswerUnparsed(cache, line)) return;
    Log(absl::StrCat("kernel mode: ", CacheName(cache),
                     ": ignored a request that does not parse"));
  }

  // Every upcall gets an answer (DESIGN.md): one that does not parse but
  // whose key fields can be split is told no with the short failure
  // expiry, so the kernel neither waits for it nor keeps the no long.
  bool AnswerUnparsed(int cache, const std::string& line) {
    static constexpr size_t kKeyFields[kCaches] = {2, 1, 3, 2};
    absl::StatusOr<std::vector<std::string>> f = SplitLine(line);
    if (!f.ok() || f->size() < kKeyFields[cache]) return false;
    LineWriter w;
    for (size_t i = 0; i < kKeyFields[cache]; ++i) {
      if ((*f)[i].empty()) return false;
      if (cache == kFh && i == 2) {
        w.Hex((*f)[i]);
      } else {
        w.Text((*f)[i]);
      }
    }
    w.Int(Now() + absl::ToInt64Seconds(config.failure_ttl));
    const std::string reply = std::move(w).Finish();
    const std::string key = (*f)[0];
    Log(absl::StrCat("kernel mode: ", CacheName(cache),
                     ": a request that does not parse (\"",
                     line.substr(0, line.find('\n')), "\"): told no"));
    pool->Submit(key, [this, cache, reply, key, read_at = absl::Now()] {
      if (Write(cache, reply, key)) Answered({reply, true}, read_at);
    });
    return true;
  }

  void Poll() {
    // Upcalls queue in the kernel meanwhile.
    WaitOutFlush();
    std::vector<pollfd> fds;
    std::vector<int> caches;
    fds.push_back({wake_fd, POLLIN, 0});
    caches.push_back(-1);
    for (int c = 0; c < kCaches; ++c) {
      if (channels[c] == nullptr) continue;
      fds.push_back({channels[c]->fd(), POLLIN, 0});
      caches.push_back(c);
    }
    while (!stopping) {
      int n = poll(fds.data(), fds.size(), -1);
      if (n < 0) continue;  // EINTR
      if (fds[0].revents) {
        uint64_t v;
        (void)!read(wake_fd, &v, sizeof v);
      }
      for (size_t i = 1; i < fds.size() && !stopping; ++i) {
        if (!(fds[i].revents & (POLLIN | POLLERR | POLLHUP))) continue;
        CacheChannel* ch = channels[caches[i]];
        // Each read returns one request; read until none is queued.
        for (int k = 0; k < 1024; ++k) {
          absl::StatusOr<std::string> line = ch->Read();
          if (!line.ok()) {
            // A channel that keeps failing must not spin this thread.
            Log(absl::StrCat("kernel mode: ", line.status().message()));
            absl::SleepFor(absl::Milliseconds(100));
            break;
          }
          if (line->empty()) break;
          Dispatch(caches[i], *std::move(line));
        }
      }
    }
  }

  // Learns the identities of paths for the fsid index: `present` ones are
  // probed (in parallel when there are many: a batch of 15,000 adds is
  // indexed before its reply, and ZFS datasets' metadata may wait on
  // disks), the others forgotten, in slices so a start with 1,000,000
  // shares holds one slice's results at a time. Failed probes are
  // forgotten too and logged, the first few by name and the rest as a
  // count.
  void LearnAll(const std::vector<std::pair<std::string, bool>>& items) {
    size_t failed = 0;
    for (size_t from = 0; from < items.size() && !stopping;
         from += kLearnSlice) {
      const size_t n = std::min(kLearnSlice, items.size() - from);
      std::vector<absl::StatusOr<FsIdentity>> ids(
          n, absl::StatusOr<FsIdentity>(absl::CancelledError()));
      std::atomic<size_t> next{0};
      auto work = [&] {
        for (size_t i; (i = next.fetch_add(1)) < n && !stopping;) {
          const auto& [path, present] = items[from + i];
          if (present) ids[i] = deps.probe->Probe(path);
        }
      };
      const size_t helpers =
          std::min<size_t>(std::max(config.probe_threads, 1) - 1,
                           n / kProbesPerThread);
      std::vector<std::thread> threads;
      for (size_t t = 0; t < helpers; ++t) {
        try {
          threads.emplace_back(work);
        } catch (const std::system_error&) {
          break;  // no thread: the others and this one do it all
        }
      }
      work();
      for (std::thread& t : threads) t.join();
      if (stopping) return;
      for (size_t i = 0; i < n; ++i) {
        const auto& [path, present] = items[from + i];
        if (present && !ids[i].ok() && ++failed <= kProbeErrorsLogged) {
          Log(absl::StrCat("kernel mode: ", ids[i].status().message()));
        }
        if (!present || !ids[i].ok()) {
          index.Set(path, std::nullopt);
          continue;
        }
        // A directory above a share is also answered as a pseudo-root
        // entry, whose handles carry rpc.mountd's uuid of the path.
        if (path != "/" && tree.IsAbove(path)) {
          ids[i]->pseudo_uuid = PseudoRootUuid(path);
        }
        index.Set(path, *ids[i]);
      }
    }
    if (failed > kProbeErrorsLogged) {
      Log(absl::StrCat("kernel mode: ", failed - kProbeErrorsLogged,
                       " more paths could not be examined"));
    }
  }
  static constexpr size_t kLearnSlice = 4096;
  static constexpr size_t kProbesPerThread = 256;
  static constexpr size_t kProbeErrorsLogged = 5;

  // Rewrites what the kernel holds for changed shares (SharesChanged):
  // updates the tree and the index here, then queues the rewrites on the
  // clients' keys. Returns the push's number (see WaitPush).
  uint64_t Push(const std::vector<std::string>& paths)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(learn_mu);

  // Waits (at most `timeout`) until the pushes numbered up to `target`
  // have written their rewrites; false on time-out.
  bool WaitPush(uint64_t target, absl::Duration timeout) {
    absl::MutexLock l(&push_mu);
    auto done = [this, target]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(push_mu) {
      return pushes_unfinished.empty() ||
             *pushes_unfinished.begin() > target || stopping.load();
    };
    return push_mu.AwaitWithTimeout(absl::Condition(&done), timeout);
  }

  // Brings the tree up to date for one share path and lists, in `learn`,
  // the paths whose identity must be learnt (true) or forgotten (false);
  // returns whether it is an active share now.
  bool Refresh(const std::string& path,
               std::vector<std::pair<std::string, bool>>* learn) {
    std::optional<libshare::ShareMatch> m = catalog->FindNearest(path);
    const bool active = m.has_value() && m->exact;
    if (active) {
      std::vector<std::string> created = tree.Add(path);
      learn->emplace_back(path, true);
      for (std::string& up : created) learn->emplace_back(std::move(up), true);
    } else {
      std::vector<std::string> gone = tree.Remove(path);
      // A removed share that is still above others stays a pseudo dir.
      learn->emplace_back(path, tree.IsAbove(path));
      for (std::string& up : gone) learn->emplace_back(std::move(up), false);
    }
    return active;
  }

  // Serializes the pushes' first part (tree, index, what to rewrite), so
  // they apply in the order SharesChanged was called.
  absl::Mutex learn_mu;
  // Counts the pushes whose tree and index are updated: an answer computed
  // before one and written after it is computed again (AnswerStable).
  std::atomic<uint64_t> learned{0};
};

uint64_t KernelMode::Impl::Push(const std::vector<std::string>& paths) {
  uint64_t push_id;
  {
    absl::MutexLock l(&push_mu);
    push_id = ++pushes_begun;
    pushes_unfinished.insert(push_id);
  }
  index.WaitReady(Responder::kIndexWait);
  absl::flat_hash_set<std::pair<std::string, std::string>> exports;
  absl::flat_hash_map<std::string, FhUpcall> fhs;  // by type+fsid+domain
  std::vector<std::string> unlock;
  auto add_fh = [&](const MirrorEntry& e) {
    std::string k = FsidMapKey(e.fsid_type, e.fsid);
    k.push_back('\0');
    k += e.domain;
    fhs.try_emplace(std::move(k), FhUpcall{e.domain, e.fsid_type, e.fsid});
  };
  // First the tree and the index for every path (the probes in
  // parallel), then what the kernel was told about them.
  struct Changed {
    std::optional<FsIdentity> old_id;
    bool was_share;
    bool active;
  };
  std::vector<Changed> before;
  before.reserve(paths.size());
  std::vector<std::string> relearnt;  // ancestors whose identity changed
  {
    std::vector<std::pair<std::string, bool>> learn;
    learn.reserve(paths.size());
    index.BeginUpdate();
    for (const std::string& p : paths) {
      Changed c;
      c.old_id = index.IdentityOf(p);
      c.was_share = tree.IsShare(p);
      c.active = Refresh(p, &learn);
      before.push_back(std::move(c));
    }
    // The ancestors still in the tree, once each: a share with a share
    // added below it becomes a pseudo directory too, and one whose last
    // share below left stops being one (pseudo_uuid; no probe needed).
    absl::flat_hash_set<std::string> listed;
    for (const auto& [path, present] : learn) listed.insert(path);
    for (const std::string& p : paths) {
      for (std::string& up : ShareTree::Ancestors(p)) {
        if (!listed.insert(up).second) continue;
        if (!(tree.IsShare(up) || tree.IsAbove(up))) continue;
        std::optional<FsIdentity> id = index.IdentityOf(up);
        const bool pseudo = up != "/" && tree.IsAbove(up);
        if (!id.has_value()) {
          learn.emplace_back(up, true);
        } else if (id->pseudo_uuid.has_value() != pseudo) {
          id->pseudo_uuid = pseudo ? std::optional<Uuid>(PseudoRootUuid(up))
                                   : std::nullopt;
          index.Set(up, *id);
        } else {
          continue;
        }
        relearnt.push_back(std::move(up));
      }
    }
    LearnAll(std::move(learn));
    index.EndUpdate();
    ++learned;
  }
  for (size_t i = 0; i < paths.size(); ++i) {
    const std::string& p = paths[i];
    const std::optional<FsIdentity>& old_id = before[i].old_id;
    const bool was_share = before[i].was_share;
    const bool active = before[i].active;
    const std::optional<FsIdentity> new_id = index.IdentityOf(p);
    std::vector<std::string> where = ShareTree::Ancestors(p);
    where.insert(where.begin(), p);
    for (const std::string& q : where) {
      for (const MirrorEntry& e : mirror->ExportsOf(q)) {
        exports.emplace(e.domain, q);
      }
      for (const MirrorEntry& e : mirror->FhAnsweredWith(q)) add_fh(e);
    }
    for (const std::optional<FsIdentity>& id : {old_id, new_id}) {
      if (!id.has_value()) continue;
      for (const FsidKey& k : FsidKeys(*id)) {
        for (const MirrorEntry& e : mirror->FhOf(k.type, k.bytes)) add_fh(e);
      }
    }
    if (was_share && !active && old_id.has_value() &&
        index.PathsOnDevice(old_id->major, old_id->minor) == 0) {
      unlock.push_back(p);
    }
  }
  // An ancestor now a pseudo directory: an fsid told no before may lead
  // to it now.
  for (const std::string& up : relearnt) {
    const std::optional<FsIdentity> id = index.IdentityOf(up);
    if (!id.has_value()) continue;
    for (const FsidKey& k : FsidKeys(*id)) {
      for (const MirrorEntry& e : mirror->FhOf(k.type, k.bytes)) add_fh(e);
    }
  }
  // Each rewrite runs under its domain's key, behind that client's
  // upcalls: a slow name lookup for one client holds only its rewrites.
  // The last one releases the locks of file systems no share uses any
  // more, after the kernel was told no.
  auto left =
      std::make_shared<std::atomic<size_t>>(exports.size() + fhs.size() + 1);
  auto unlock_after = [this, left, push_id, unlock = std::move(unlock)] {
    if (left->fetch_sub(1) != 1) return;
    auto finished = absl::MakeCleanup([this, push_id] {
      absl::MutexLock l(&push_mu);
      pushes_unfinished.erase(push_id);
    });
    for (const std::string& p : unlock) {
      if (!deps.files) break;
      if (absl::Status s = deps.files->UnlockFilesystem(p); !s.ok()) {
        Log(absl::StrCat("kernel mode: unlock_filesystem ", p, ": ",
                         s.message()));
      }
    }
  };
  for (const auto& [domain, path] : exports) {
    pool->Submit(domain, [this, domain = domain, path = path, unlock_after] {
      Answer a = responder->Export(domain, path);
      if (mirror->ExportDigest(domain, path) !=
              Digest(a.line, kExportExpiryField) &&
          TellExportChecked(domain, path, a)) {
        ++pushed;
      }
      unlock_after();
    });
  }
  for (const auto& [k, u] : fhs) {
    pool->Submit(u.domain, [this, u = u, unlock_after] {
      Answer a = responder->Fh(u);
      if (mirror->FhDigest(u.domain, u.fsid_type, u.fsid) !=
              Digest(a.line, kFhExpiryField) &&
          TellFh(u, a)) {
        ++pushed;
      }
      unlock_after();
    });
  }
  unlock_after();
  return push_id;
}

KernelMode::KernelMode(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

KernelMode::~KernelMode() { Stop(); }

absl::StatusOr<std::unique_ptr<KernelMode>> KernelMode::Start(
    KernelConfig config, const libshare::Catalog* catalog,
    const ShareAccess* access) {
  absl::StatusOr<bool> nfsd = NfsdAvailable(config.proc_root);
  if (!nfsd.ok()) return nfsd.status();
  if (!*nfsd) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the nfsd file system is not mounted on ", config.proc_root,
        "/fs/nfsd (mount -t nfsd nfsd ", config.proc_root, "/fs/nfsd)"));
  }
  if (absl::Status s = CheckNoOtherResponder(config.proc_root); !s.ok()) {
    return s;
  }
  KernelDeps deps;
  std::vector<std::string> caches = {kIpCache, kFhCache, kExportCache};
  for (const std::string& c : caches) {
    absl::StatusOr<std::unique_ptr<CacheChannel>> ch =
        OpenProcChannel(config.proc_root, c);
    if (!ch.ok()) return ch.status();
    deps.channels.push_back(*std::move(ch));
  }
  // auth.unix.gid: a listener with manage-gids; else only a reader (see
  // Impl::Flushes), never a reason not to start.
  absl::StatusOr<std::unique_ptr<CacheChannel>> gid =
      config.manage_gids ? OpenProcChannel(config.proc_root, kGidCache)
                         : OpenProcChannelReader(config.proc_root, kGidCache);
  if (gid.ok()) {
    deps.channels.push_back(*std::move(gid));
  } else if (config.manage_gids) {
    return gid.status();
  } else if (config.log) {
    config.log(absl::StrCat("kernel mode: ", gid.status().message()));
  }
  deps.files = MakeProcNfsdFiles(config.proc_root);
  deps.probe = config.probe != nullptr ? MakeSharedFsProbe(config.probe)
                                       : MakeSystemFsProbe();
  deps.groups = MakeSystemGroupSource();
  deps.now = [] { return static_cast<int64_t>(time(nullptr)); };
  return StartWith(std::move(config), catalog, access, std::move(deps));
}

absl::StatusOr<std::unique_ptr<KernelMode>> KernelMode::StartWith(
    KernelConfig config, const libshare::Catalog* catalog,
    const ShareAccess* access, KernelDeps deps) {
  auto impl = std::make_unique<Impl>();
  impl->config = std::move(config);
  impl->catalog = catalog;
  impl->access = access;
  impl->deps = std::move(deps);
  if (!impl->deps.now) {
    impl->deps.now = [] { return static_cast<int64_t>(time(nullptr)); };
  }
  if (!impl->deps.probe) impl->deps.probe = MakeSystemFsProbe();
  // Every head answers a share with the identity recorded when it was
  // added (libshare/fs_identity.h), so all hand out the same handles.
  impl->deps.probe = MakeRecordedIdentityProbe(
      std::move(impl->deps.probe),
      [catalog](const std::string& path) -> std::optional<Uuid> {
        std::optional<libshare::ShareMatch> m = catalog->FindNearest(path);
        if (!m || !m->exact) return std::nullopt;
        return m->fs_uuid;
      },
      [log = impl->config.log](const std::string& line) {
        if (log) log(absl::StrCat("kernel mode: ", line));
      });
  if (!impl->deps.groups) impl->deps.groups = MakeSystemGroupSource();
  for (const std::unique_ptr<CacheChannel>& ch : impl->deps.channels) {
    const int c = CacheIndex(ch->cache());
    if (c < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("kernel mode: unknown cache ", ch->cache()));
    }
    impl->channels[c] = ch.get();
  }

  ResponderConfig rc;
  rc.positive_ttl = impl->config.positive_ttl;
  rc.negative_ttl = impl->config.negative_ttl;
  rc.failure_ttl = impl->config.failure_ttl;
  rc.insecure = impl->config.insecure;
  rc.gid_ttl = impl->config.manage_gids ? impl->config.positive_ttl
                                        : impl->config.gid_bridge_ttl;
  if (impl->deps.files) {
    absl::StatusOr<std::string> text = impl->deps.files->ExportFeatures();
    if (text.ok()) {
      absl::StatusOr<ExportFeatures> f = ParseExportFeatures(*text);
      if (!f.ok()) return f.status();
      rc.features = *f;
    } else if (!absl::IsNotFound(text.status())) {
      return text.status();
    }
    if (!(rc.features.all_flags & nfsexp::kV4Root)) {
      impl->Log(
          "kernel mode: this kernel has no NFSv4 pseudo-root (V4ROOT); NFSv4 "
          "clients cannot mount");
    }
    // Once at start: drop what an earlier responder told the kernel.
    for (int c = 0; c < kCaches; ++c) {
      if (!impl->Flushes(c) || !impl->FlushWouldDrop(c)) continue;
      if (absl::Status s = impl->deps.files->Flush(CacheName(c)); !s.ok()) {
        return s;
      }
      ++impl->flushes;
    }
    impl->SayIfFlushedAhead(impl->LatestFlushTime());
  }
  impl->mirror = std::make_unique<Mirror>(impl->config.mirror_max_entries);
  impl->responder = std::make_unique<Responder>(
      rc, catalog, access, &impl->index, &impl->tree, impl->deps.probe.get(),
      impl->deps.now);

  // The tree at once (memory only); the fsid index, which stats every
  // share, in the background: nfsd.fh answers wait for it.
  std::vector<std::string> paths;
  catalog->ForEachActive(
      [&](const libshare::ShareInfo& s, const libshare::ShareOptions&) {
        paths.push_back(s.path);
      });
  std::vector<std::string> dirs;
  for (const std::string& p : paths) {
    for (std::string& up : impl->tree.Add(p)) dirs.push_back(std::move(up));
  }
  impl->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (impl->wake_fd < 0) return absl::InternalError("eventfd failed");
  Impl* raw = impl.get();
  impl->indexer =
      std::thread([raw, paths = std::move(paths), dirs = std::move(dirs)] {
        std::vector<std::pair<std::string, bool>> learn;
        learn.reserve(paths.size() + dirs.size());
        for (const std::string& p : paths) learn.emplace_back(p, true);
        for (const std::string& d : dirs) learn.emplace_back(d, true);
        raw->LearnAll(learn);
        // Also when stopping: nobody may wait for an index never finished.
        raw->index.MarkReady();
      });

  impl->pool = std::make_unique<KeyedWorkQueue>(impl->config.threads);
  impl->poller = std::thread([raw] { raw->Poll(); });
  return std::unique_ptr<KernelMode>(new KernelMode(std::move(impl)));
}

void KernelMode::Stop() {
  Impl* d = impl_.get();
  {
    absl::MutexLock lock(&d->stop_mu);
    if (d->stopped) return;
    d->stopped = true;
  }
  d->stopping = true;
  // A push computing on a caller's thread stops at its next probe and
  // queues its rewrites on the pool, which drops them below.
  { absl::MutexLock l(&d->learn_mu); }
  uint64_t one = 1;
  (void)!write(d->wake_fd, &one, sizeof one);
  if (d->poller.joinable()) d->poller.join();
  d->pool->Stop();
  if (d->indexer.joinable()) d->indexer.join();
  close(d->wake_fd);
}

void KernelMode::SharesChanged(const std::vector<std::string>& share_paths) {
  Impl* d = impl_.get();
  const absl::Time start = absl::Now();
  uint64_t id;
  {
    absl::MutexLock l(&d->learn_mu);
    if (d->stopping) return;
    id = d->Push(share_paths);
  }
  const absl::Time learnt = absl::Now();
  // Bounded: a rewrite waits behind its client's upcalls, and those on a
  // name lookup (the auth cache's lookup timeout at most).
  if (!d->WaitPush(id, kPushWait)) {
    d->Log(absl::StrCat("kernel mode: the rewrites of ", share_paths.size(),
                        " changed shares were not all written after ",
                        absl::FormatDuration(kPushWait),
                        "; replying, they go on"));
  }
  // A big change's cost, where the batch's reply waited for it.
  const absl::Duration took = absl::Now() - start;
  if (took >= kPushLogged) {
    d->Log(absl::StrCat(
        "kernel mode: ", share_paths.size(), " changed shares told in ",
        absl::ToInt64Milliseconds(took), " ms (tree and fsid index ",
        absl::ToInt64Milliseconds(learnt - start), " ms, rewrites ",
        absl::ToInt64Milliseconds(took - (learnt - start)), " ms)"));
  }
}

void KernelMode::WaitPushed() {
  Impl* d = impl_.get();
  uint64_t target;
  {
    // After the pushes being computed now.
    absl::MutexLock l(&d->learn_mu);
    if (d->stopping) return;
    absl::MutexLock p(&d->push_mu);
    target = d->pushes_begun;
  }
  // Bounded: a rewrite the pool drops on stop never finishes its push.
  d->WaitPush(target, absl::Seconds(30));
}

absl::Status KernelMode::Flush() {
  Impl* d = impl_.get();
  if (!d->deps.files) return absl::OkStatus();
  // The kernel forgets everything: nothing is left to rewrite. Cleared
  // first, so an answer recorded while the flush runs stays remembered.
  d->mirror->Clear();
  // Hold answers back from now on (Write waits), not only once the flush
  // time is read: one written in the flush's second would be dropped.
  const int64_t hold = static_cast<int64_t>(time(nullptr)) + 2;
  int64_t prev = d->fresh_after.load();
  while (prev < hold && !d->fresh_after.compare_exchange_weak(prev, hold)) {
  }
  for (int c = 0; c < kCaches; ++c) {
    if (!d->Flushes(c)) continue;
    if (absl::Status s = d->deps.files->Flush(CacheName(c)); !s.ok()) return s;
    ++d->flushes;
  }
  d->WaitOutFlush();
  return absl::OkStatus();
}

absl::StatusOr<std::string> KernelMode::FileHandle(
    const libshare::IpAddress& client, const AccessResult& decided,
    int max_size) {
  Impl* d = impl_.get();
  // MOUNT made the one access decision; a refusal never gets here, and
  // nothing is decided again.
  if (!decided.granted() || !decided.share.has_value()) {
    return absl::PermissionDeniedError(
        absl::StrCat(decided.path, ": ", decided.reason));
  }
  const std::string domain = Responder::DomainOf(client);
  const std::string& share_path = decided.share->path;
  // Under the domain's key, as upcall answers and pushes are, and
  // re-told if the table changed meanwhile: a concurrent change wins.
  Answer a;
  bool stands = false;
  if (!d->RunKeyed(domain, [&] {
        d->WriteIpEntry(client);
        a = d->AnswerStable(
            [&] { return d->responder->Export(domain, share_path); },
            [&](const Answer& x) {
              stands = d->TellExportChecked(domain, share_path, x);
            });
      })) {
    return absl::UnavailableError("kernel mode is stopping");
  }
  if (a.negative) {
    return absl::PermissionDeniedError(
        absl::StrCat(client.ToString(), " may not use share ", share_path));
  }
  if (!stands) {
    return absl::PermissionDeniedError(
        absl::StrCat(share_path, " changed on disk during the mount"));
  }
  if (!d->deps.files) return absl::UnavailableError("no nfsd files");
  // Read outside the key: the kernel may upcall for this domain meanwhile.
  absl::StatusOr<std::string> h =
      d->deps.files->FileHandle(domain, decided.path, max_size);
  if (!h.ok()) return h.status();
  // The kernel resolved decided.path by name; MOUNT's walk did not follow
  // links. If it is not the same directory now, the handle may be of a
  // link's target: refuse it and take the grant back.
  Answer seen;
  seen.walked = decided.resolved;
  seen.dev = decided.dev;
  seen.ino = decided.ino;
  if (!Impl::PathUnchanged(decided.path, seen)) {
    d->RunKeyed(domain, [&] {
      d->Revoke(domain, share_path,
                absl::StrCat("(mount of ", decided.path, ") changed on disk"));
    });
    return absl::PermissionDeniedError(
        absl::StrCat(decided.path, " changed on disk during the mount"));
  }
  return h;
}

KernelStats KernelMode::stats() const {
  const Impl* d = impl_.get();
  KernelStats s;
  s.upcalls = d->upcalls;
  s.negative = d->negative;
  s.pushed = d->pushed;
  s.flushes = d->flushes;
  s.answer_p99_us = d->latency.P99();
  s.bad_upcalls = d->bad_upcalls;
  s.write_errors = d->write_errors;
  return s;
}

void KernelMode::WaitIdle() { impl_->pool->WaitIdle(); }

}  // namespace sharemgrd::kernel
