#include "mount_service.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/types/span.h"
#include "fs_watch.h"
#include "libshare/path.h"
#include "log.h"
#include "share_access.h"
#include "thread_name.h"
#include "xdr_writer.h"

namespace sharemgrd {
namespace {

using libshare::IpAddress;
using libshare::MountRecord;

// Mount records are written behind the calls: the flusher looks every
// kFlushInterval, and writes what changed once no change came for
// kFlushQuiet, once the first changes it saw waited kFlushMaxDelay, or once
// a shard logged kFlushShardChanges (half of what makes its log folded
// under its lock). A storm of first mounts is then written when it pauses,
// not beside it: on 2 cores, each write (a transaction of a few thousand
// rows, several ms of a core) left the storm's calls one core while it ran,
// and those calls made the storm's tail. Measured 2026-12-06 (bench/
// README.md, "First mounts written when the storm pauses").
constexpr auto kFlushInterval = absl::Milliseconds(50);
constexpr auto kFlushQuiet = absl::Milliseconds(10);
constexpr auto kFlushMaxDelay = std::chrono::seconds(1);
constexpr uint64_t kFlushShardChanges = MountTable::kFoldAt / 2;

enum StatIndex : std::size_t {
  kStatNull,
  kStatMnt,
  kStatDump,
  kStatUmnt,
  kStatUmntAll,
  kStatExport,
  kStatExportAll,
};

bool PeerAddress(const CallContext& ctx, IpAddress* addr, uint16_t* port) {
  if (ctx.peer.ss_family == AF_INET) {
    const auto* sin = reinterpret_cast<const sockaddr_in*>(&ctx.peer);
    *addr = IpAddress::FromV4(ntohl(sin->sin_addr.s_addr));
    *port = ntohs(sin->sin_port);
    return true;
  }
  if (ctx.peer.ss_family == AF_INET6) {
    const auto* sin6 = reinterpret_cast<const sockaddr_in6*>(&ctx.peer);
    std::copy(sin6->sin6_addr.s6_addr, sin6->sin6_addr.s6_addr + 16,
              addr->bytes.begin());
    *port = ntohs(sin6->sin6_port);
    return true;
  }
  return false;
}

// Reads a dirpath/name (string<max>) without allocating; false if it is
// longer than max or the arguments end early.
bool DecodeString(XDR* x, uint32_t max, std::string* out) {
  u_int len = 0;
  if (!::xdr_u_int(x, &len) || len > max) return false;
  char buf[kMntPathLen + 4];
  if (!::xdr_opaque(x, buf, len)) return false;
  out->assign(buf, len);
  return true;
}

}  // namespace

std::vector<std::string> ExportGroups(const libshare::ShareOptions& opts) {
  std::vector<std::string> groups;
  for (const libshare::SecScope& s : opts.scopes) {
    if (s.HasNoAccessOption() || s.rw_all || s.ro_all) return {};
  }
  for (const libshare::SecScope& s : opts.scopes) {
    for (const auto* list : {&s.rw, &s.ro}) {
      if (!list->has_value()) continue;
      for (const libshare::AccessEntry& e : (*list)->entries) {
        if (e.deny) continue;
        std::string text = e.Canonical();
        if (std::find(groups.begin(), groups.end(), text) == groups.end()) {
          groups.push_back(std::move(text));
        }
      }
    }
  }
  return groups;
}

void ExportListEncoder::Add(std::string_view dir,
                            const std::vector<std::string>& groups) {
  XdrWriter w(&out_);
  w.Bool(true);  // another exportnode follows
  w.String(dir);
  for (const std::string& g : groups) {
    w.Bool(true);
    w.String(std::string_view(g).substr(0, kMntNameLen));
  }
  w.Bool(false);  // end of ex_groups
}

std::string ExportListEncoder::Finish() {
  XdrWriter(&out_).Bool(false);  // end of exports
  std::string r = std::move(out_);
  out_.clear();
  return r;
}

std::string FileHandleFor(uint64_t dev, uint64_t ino) {
  std::string h;
  h.reserve(kFhSize);
  XdrWriter w(&h);
  w.Raw("SMGR");
  w.U32(1);
  w.U64(dev);
  w.U64(ino);
  h.resize(kFhSize, '\0');
  return h;
}

MountTable::PathShard& MountTable::PathShardOf(absl::string_view path) const {
  // The hash's top bits, as for clients (ShardIndex).
  return path_shards_[(absl::HashOf(path) >> 56) % kShards];
}

MountTable::PathEntry* MountTable::RefPath(absl::string_view path,
                                           uint32_t refs) {
  PathShard& ps = PathShardOf(path);
  absl::MutexLock l(&ps.mu);
  auto it = ps.paths.find(path);  // no string built for a path already held
  if (it == ps.paths.end()) it = ps.paths.emplace(std::string(path), 0).first;
  it->second += refs;
  return &*it;
}

void MountTable::UnrefPath(PathEntry* path) {
  PathShard& ps = PathShardOf(path->first);
  absl::MutexLock l(&ps.mu);
  if (--path->second == 0) ps.paths.erase(ps.paths.find(path->first));
}

void MountTable::Shard::Log(MountTable* table, const Key& k, bool present) {
  log.push_back({k, present});
  logged.store(logged.load(std::memory_order_relaxed) + 1,
               std::memory_order_relaxed);
  FoldIfLong(table);
}

void MountTable::Shard::FoldIfLong(MountTable* table) {
  if (log.size() >= fold_at) {
    FoldLocked(table, &log);
    fold_at = std::max(kFoldAt, 2 * log.size());
  }
}

// Stable: of a key's changes, the last logged stays last.
void MountTable::SortByKey(std::vector<Change>* log) {
  std::stable_sort(log->begin(), log->end(),
                   [](const Change& a, const Change& b) {
                     return KeyLess()(a.key, b.key);
                   });
}

bool MountTable::Replaced(const std::vector<Change>& sorted, std::size_t i) {
  return i + 1 < sorted.size() && sorted[i + 1].key == sorted[i].key;
}

void MountTable::Shard::FoldLocked(MountTable* table,
                                   std::vector<Change>* changes) {
  SortByKey(changes);
  std::size_t kept = 0;
  for (std::size_t i = 0; i < changes->size(); ++i) {
    if (Replaced(*changes, i)) {
      table->UnrefPath((*changes)[i].key.path);
    } else {
      (*changes)[kept++] = (*changes)[i];
    }
  }
  changes->resize(kept);
}

std::size_t MountTable::ShardIndex(const IpAddress& client) {
  // The hash's top bits: its low ones pick the control bytes of the
  // shard's per-client map, which would then vary less within a shard.
  return (IpAddressHash()(client) >> 56) % kShards;
}

MountTable::Shard& MountTable::ShardOf(const IpAddress& client) const {
  return shards_[ShardIndex(client)];
}

void MountTable::Dropped(const IpAddress& client, absl::string_view path,
                         bool table_full) {
  dropped_.fetch_add(1, std::memory_order_relaxed);
  dropped_log_.Log(absl::StrCat(
      "mount record of ", EscapeForLog(path), " for ", client.ToString(),
      " not kept: ", table_full ? "the table" : "the client",
      " has reached its limit of ", table_full ? max_total_ : max_per_client_,
      " records"));
}

bool MountTable::Add(const IpAddress& client, absl::string_view path,
                     int64_t since) {
  Shard& sh = ShardOf(client);
  bool table_full = false;
  {
    absl::MutexLock l(&sh.mu);
    const Probe probe{client, path};
    // Where the record would go: found once, for the check and the insert.
    auto at = sh.records.lower_bound(probe);
    if (at != sh.records.end() && !KeyLess()(probe, at->first)) return false;
    auto pc = sh.per_client.find(client);
    const std::size_t mine = pc == sh.per_client.end() ? 0 : pc->second;
    if (mine < max_per_client_) {
      // The table's place is taken before the insert, so that MNTs in
      // other shards cannot together go past the limit.
      if (total_.fetch_add(1, std::memory_order_relaxed) < max_total_) {
        // The record and its pending change.
        const Key k{client, RefPath(path, 2)};
        sh.records.emplace_hint(at, k, since);
        if (pc == sh.per_client.end()) {
          sh.per_client.emplace(client, 1);
        } else {
          ++pc->second;
        }
        sh.Log(this, k, true);
        return true;
      }
      total_.fetch_sub(1, std::memory_order_relaxed);
      table_full = true;
    }
  }
  // Logged without the shard's lock held.
  Dropped(client, path, table_full);
  return false;
}

bool MountTable::Remove(const IpAddress& client, absl::string_view path) {
  Shard& sh = ShardOf(client);
  absl::MutexLock l(&sh.mu);
  auto it = sh.records.find(Probe{client, path});
  if (it == sh.records.end()) return false;
  const Key k = it->first;
  sh.records.erase(it);
  total_.fetch_sub(1, std::memory_order_relaxed);
  if (auto pc = sh.per_client.find(client);
      pc != sh.per_client.end() && --pc->second == 0) {
    sh.per_client.erase(pc);
  }
  sh.Log(this, k, false);  // takes over the record's path reference
  return true;
}

std::size_t MountTable::RemoveClient(const IpAddress& client) {
  Shard& sh = ShardOf(client);
  absl::MutexLock l(&sh.mu);
  std::size_t n = 0;
  auto it = sh.records.lower_bound(Probe{client, absl::string_view()});
  while (it != sh.records.end() && it->first.client == client) {
    const Key k = it->first;
    it = sh.records.erase(it);
    sh.Log(this, k, false);  // takes over the record's path reference
    ++n;
  }
  total_.fetch_sub(n, std::memory_order_relaxed);
  sh.per_client.erase(client);
  return n;
}

bool MountTable::Add(const MountRecord& r) {
  std::optional<IpAddress> a = IpAddress::Parse(r.client);
  return a.has_value() && Add(*a, r.path, absl::ToUnixSeconds(absl::Now()));
}

bool MountTable::Remove(const MountRecord& r) {
  std::optional<IpAddress> a = IpAddress::Parse(r.client);
  return a.has_value() && Remove(*a, r.path);
}

std::size_t MountTable::RemoveClient(const std::string& client) {
  std::optional<IpAddress> a = IpAddress::Parse(client);
  return a.has_value() ? RemoveClient(*a) : 0;
}

void MountTable::Load(const std::vector<MountRecord>& records) {
  // Records kept before are loaded whatever the limits (they were within
  // those in force then); new ones wait until the counts are below.
  for (const MountRecord& r : records) {
    std::optional<IpAddress> a = IpAddress::Parse(r.client);
    if (!a.has_value()) {
      LogLine(absl::StrCat("mount record of ", EscapeForLog(r.path),
                           " skipped: client \"", EscapeForLog(r.client),
                           "\" is not an address"));
      continue;
    }
    Shard& sh = ShardOf(*a);
    absl::MutexLock l(&sh.mu);
    if (sh.records.contains(Probe{*a, r.path})) continue;
    sh.records.emplace(Key{*a, RefPath(r.path, 1)}, 0);
    ++sh.per_client[*a];
    total_.fetch_add(1, std::memory_order_relaxed);
  }
}

std::vector<MountListing> MountTable::List() const {
  std::vector<MountListing> out;
  out.reserve(size());
  for (Shard& sh : shards_) {
    absl::MutexLock l(&sh.mu);
    for (const auto& [k, since] : sh.records) {
      out.push_back({k.client, k.path->first, since});
    }
  }
  // Each shard's records are in order: merge the shards'.
  std::sort(out.begin(), out.end(),
            [](const MountListing& a, const MountListing& b) {
              return KeyLess::Less(a.client, a.path, b.client, b.path);
            });
  return out;
}

std::vector<MountRecord> MountTable::All() const {
  std::vector<MountListing> l = List();
  std::vector<MountRecord> out;
  out.reserve(l.size());
  for (MountListing& m : l) {
    out.push_back({m.client.ToString(), std::move(m.path)});
  }
  return out;
}

std::size_t MountTable::path_count() const {
  std::size_t n = 0;
  for (PathShard& ps : path_shards_) {
    absl::MutexLock l(&ps.mu);
    n += ps.paths.size();
  }
  return n;
}

std::array<uint64_t, MountTable::kShards> MountTable::LoggedPerShard() const {
  std::array<uint64_t, kShards> n;
  for (std::size_t i = 0; i < kShards; ++i) {
    n[i] = shards_[i].logged.load(std::memory_order_relaxed);
  }
  return n;
}

bool MountTable::has_changes() const {
  for (Shard& sh : shards_) {
    absl::MutexLock l(&sh.mu);
    if (!sh.log.empty()) return true;
  }
  return false;
}

std::pair<std::vector<MountRecord>, std::vector<MountRecord>>
MountTable::TakeChanges() {
  std::array<std::vector<Change>, kShards> logs;
  std::size_t total = 0;
  for (std::size_t i = 0; i < kShards; ++i) {
    Shard& sh = shards_[i];
    absl::MutexLock l(&sh.mu);
    logs[i].swap(sh.log);
    sh.log.swap(sh.spare);
    total += logs[i].size();
  }
  std::vector<MountRecord> added, removed;
  added.reserve(total);
  // Folded and turned into text without the shards' locks, so MNT never
  // waits for this; the logs' path references keep the texts alive until
  // let go below. Sorted by key, a client's changes are together: its
  // address is written as text once, not once per change.
  for (std::vector<Change>& log : logs) {
    SortByKey(&log);
    const IpAddress* text_of = nullptr;  // the client client_text spells
    std::string client_text;
    for (std::size_t i = 0; i < log.size(); ++i) {
      const Change& c = log[i];
      if (Replaced(log, i)) continue;
      if (text_of == nullptr || *text_of != c.key.client) {
        text_of = &c.key.client;
        client_text = c.key.client.ToString();
      }
      (c.present ? added : removed).push_back({client_text, c.key.path->first});
    }
    for (const Change& c : log) UnrefPath(c.key.path);
  }
  for (std::size_t i = 0; i < kShards; ++i) {
    if (logs[i].capacity() == 0) continue;
    logs[i].clear();
    Shard& sh = shards_[i];
    absl::MutexLock l(&sh.mu);
    if (logs[i].capacity() > sh.spare.capacity()) sh.spare.swap(logs[i]);
  }
  return {std::move(added), std::move(removed)};
}

void MountTable::Restore(std::vector<MountRecord> added,
                         std::vector<MountRecord> removed) {
  // Put before the changes logged since, so that a newer change to the
  // same key wins over the failed one.
  std::array<std::vector<Change>, kShards> by_shard;
  for (const auto* list : {&added, &removed}) {
    for (const MountRecord& r : *list) {
      std::optional<IpAddress> a = IpAddress::Parse(r.client);
      if (!a.has_value()) continue;
      by_shard[ShardIndex(*a)].push_back(
          {Key{*a, RefPath(r.path, 1)}, list == &added});
    }
  }
  for (std::size_t i = 0; i < kShards; ++i) {
    if (by_shard[i].empty()) continue;
    Shard& sh = shards_[i];
    absl::MutexLock l(&sh.mu);
    sh.log.insert(sh.log.begin(), by_shard[i].begin(), by_shard[i].end());
    sh.FoldIfLong(this);
  }
}

MountService::MountService(libshare::Catalog* catalog,
                           authcache::AuthCache* cache, bool insecure)
    : catalog_(catalog),
      cache_(cache),
      insecure_(insecure),
      stats_(
          {"NULL", "MNT", "DUMP", "UMNT", "UMNTALL", "EXPORT", "EXPORTALL"}) {}

MountService::~MountService() { Stop(); }

absl::Status MountService::Start() {
  absl::StatusOr<std::vector<MountRecord>> loaded = catalog_->LoadMounts();
  if (!loaded.ok()) return loaded.status();
  mounts_.Load(*loaded);
  flusher_ = std::thread([this] {
    NameThisThread("sm-mountflush");
    FlushLoop();
  });
  return absl::OkStatus();
}

void MountService::Stop() {
  {
    absl::MutexLock l(&flush_mu_);
    if (stopping_ && !flusher_.joinable()) return;
    stopping_ = true;
  }
  if (flusher_.joinable()) flusher_.join();
  FlushOnce();
}

void MountService::FlushLoop() {
  using Clock = std::chrono::steady_clock;
  absl::MutexLock l(&flush_mu_);
  absl::Duration wait = kFlushInterval;
  // Each shard's count of logged changes at the last look, and at the
  // last write.
  std::array<uint64_t, MountTable::kShards> seen = mounts_.LoggedPerShard();
  std::array<uint64_t, MountTable::kShards> written = seen;
  // When this loop first saw the changes not written yet (none: nullopt).
  std::optional<Clock::time_point> pending_since;
  while (!stopping_) {
    flush_mu_.AwaitWithTimeout(absl::Condition(&stopping_), wait);
    if (stopping_) break;
    flush_mu_.Unlock();
    const std::array<uint64_t, MountTable::kShards> logged =
        mounts_.LoggedPerShard();
    const bool quiet = logged == seen;
    bool long_log = false;
    for (std::size_t i = 0; i < logged.size(); ++i) {
      long_log = long_log || logged[i] - written[i] >= kFlushShardChanges;
    }
    seen = logged;
    wait = kFlushInterval;
    const Clock::time_point now = Clock::now();
    const bool due = quiet || long_log ||
                     (pending_since && now - *pending_since >= kFlushMaxDelay);
    if (pending_since && !due) {
      wait = kFlushQuiet;  // changes still coming: look again soon
    } else if (!mounts_.has_changes()) {
      pending_since.reset();
    } else if (due) {
      written = logged;
      FlushOnce();
      pending_since.reset();
    } else {
      pending_since = now;  // the first look that sees them
      wait = kFlushQuiet;
    }
    // EXPORT is encoded on the first EXPORT call after a change, not here:
    // encoding holds the catalog's read lock for O(N), which the next
    // batch's link step waited for, so one add grew with the table.
    flush_mu_.Lock();
  }
}

void MountService::FlushOnce() {
  if (!mounts_.has_changes()) return;
  auto [added, removed] = mounts_.TakeChanges();
  absl::Status s = catalog_->RecordMounts(added, removed);
  if (!s.ok()) {
    LogLine(absl::StrCat("cannot record mounts (will retry): ", s.message()));
    mounts_.Restore(std::move(added), std::move(removed));
  }
}

std::shared_ptr<const std::string> MountService::ExportBody() {
  uint64_t gen = catalog_->generation();
  const uint64_t served = served_ != nullptr ? served_->version() : 0;
  absl::MutexLock l(&export_mu_);
  if (export_body_ != nullptr && export_generation_ == gen &&
      export_served_version_ == served) {
    return export_body_;
  }
  ExportListEncoder enc;
  catalog_->ForEachActive(
      [&](const libshare::ShareInfo& info, const libshare::ShareOptions& o) {
        if (served_ != nullptr &&
            served_->NotServed(info.path, false, o.mountpoint).has_value()) {
          return;
        }
        enc.Add(info.path, ExportGroups(o));
      });
  export_body_ = std::make_shared<const std::string>(enc.Finish());
  export_generation_ = gen;
  export_served_version_ = served;
  return export_body_;
}

MountStat MountService::Mnt(const CallContext& ctx, const IpAddress& client,
                            const std::string& addr_text,
                            const std::string& raw_path, bool v1,
                            std::string* handle,
                            std::vector<uint32_t>* flavors) {
  uint16_t port = 0;
  IpAddress ignored;
  PeerAddress(ctx, &ignored, &port);
  auto refuse = [&](MountStat st, absl::string_view why) {
    refused_log_.Log(absl::StrCat("refused mount of ", EscapeForLog(raw_path),
                                  " from ", addr_text, " port ", port, ": ",
                                  EscapeReasonForLog(why)));
    return st;
  };
  if (!insecure_ && port >= IPPORT_RESERVED) {
    return refuse(kMnt3ErrAcces,
                  "source port is not reserved (see --insecure)");
  }
  // Every refusal that is not about a name inside what the client reaches
  // is ACCES, as for an unshared path: the answer reveals nothing outside.
  AccessResult a =
      ShareAccess(catalog_, cache_, served_)
          .Decide({.client = client,
                   .path = raw_path,
                   .uid = ctx.auth_sys ? ctx.uid : 65534u,
                   .gid = ctx.auth_sys ? ctx.gid : 65534u,
                   .groups = ctx.auth_sys ? ctx.groups()
                                          : absl::Span<const uint32_t>(),
                   .anonymous = !ctx.auth_sys,
                   .resolve = true});
  switch (a.outcome) {
    case AccessOutcome::kGranted:
      break;
    case AccessOutcome::kNoent:
      return refuse(kMnt3ErrNoent, a.reason);
    case AccessOutcome::kNotdir:
      return refuse(kMnt3ErrNotdir, a.reason);
    case AccessOutcome::kBadPath:
    case AccessOutcome::kNotShared:
    case AccessOutcome::kNosub:
    case AccessOutcome::kDenied:
      return refuse(kMnt3ErrAcces, a.reason);
  }
  if (handle_source_) {
    absl::StatusOr<std::string> h =
        handle_source_(client, a, v1 ? kFhSize : kFhSize3);
    if (!h.ok()) {
      return refuse(
          absl::IsPermissionDenied(h.status()) ? kMnt3ErrAcces : kMnt3ErrIo,
          h.status().message());
    }
    *handle = *std::move(h);
    // A version 1 handle is a fixed 32 bytes; shorter ones are padded
    // with zeros, as rpc.mountd does.
    if (v1) handle->resize(kFhSize, '\0');
  } else {
    *handle = FileHandleFor(a.dev, a.ino);
  }
  *flavors = a.share->options->RpcFlavors();
  mounts_.Add(client, a.path, absl::ToUnixSeconds(absl::Now()));
  return kMnt3Ok;
}

accept_stat MountService::Call(const CallContext& ctx, XDR* args,
                               std::string* out) {
  const auto start = std::chrono::steady_clock::now();
  const bool v1 = ctx.vers < kMountV3;
  std::size_t stat_index = kStatNull;
  bool error = false;
  accept_stat result = SUCCESS;
  XdrWriter w(out);
  IpAddress client;
  uint16_t port = 0;
  std::string addr_text;
  if (PeerAddress(ctx, &client, &port)) addr_text = client.ToString();

  switch (ctx.proc) {
    case kMountProcNull:
      break;
    case kMountProcMnt: {
      stat_index = kStatMnt;
      std::string path;
      if (!DecodeString(args, kMntPathLen, &path)) {
        result = GARBAGE_ARGS;
        break;
      }
      std::string handle;
      std::vector<uint32_t> flavors;
      MountStat st = Mnt(ctx, client, addr_text, path, v1, &handle, &flavors);
      error = st != kMnt3Ok;
      w.U32(st);
      if (st == kMnt3Ok) {
        if (v1) {
          w.FixedOpaque(std::string_view(handle).substr(0, kFhSize));
        } else {
          w.Opaque(handle);
          w.U32(static_cast<uint32_t>(flavors.size()));
          for (uint32_t f : flavors) w.U32(f);
        }
      }
      break;
    }
    case kMountProcDump: {
      stat_index = kStatDump;
      const std::size_t start_size = out->size();
      for (const MountRecord& r : mounts_.All()) {
        if (out->size() - start_size > kMaxDumpBytes) break;
        w.Bool(true);
        w.String(std::string_view(r.client).substr(0, kMntNameLen));
        w.String(r.path);
      }
      w.Bool(false);
      break;
    }
    case kMountProcUmnt: {
      stat_index = kStatUmnt;
      std::string path;
      if (!DecodeString(args, kMntPathLen, &path)) {
        result = GARBAGE_ARGS;
        break;
      }
      // The reserved-port rule of MNT: otherwise any local user could
      // erase the records root's mounts made.
      if (!insecure_ && port >= IPPORT_RESERVED) {
        error = true;
        refused_log_.Log(absl::StrCat("refused UMNT of ", EscapeForLog(path),
                                      " from ", addr_text, " port ", port,
                                      ": source port is not reserved "
                                      "(see --insecure)"));
        break;  // UMNT has no result: the record stays
      }
      absl::StatusOr<std::string> norm = libshare::NormalizePath(path);
      mounts_.Remove(client, norm.ok() ? *norm : path);
      break;
    }
    case kMountProcUmntAll:
      stat_index = kStatUmntAll;
      if (!insecure_ && port >= IPPORT_RESERVED) {
        error = true;
        refused_log_.Log(absl::StrCat("refused UMNTALL from ", addr_text,
                                      " port ", port,
                                      ": source port is not reserved "
                                      "(see --insecure)"));
        break;
      }
      mounts_.RemoveClient(client);
      break;
    case kMountProcExportAll:
      if (!v1) {
        result = PROC_UNAVAIL;
        break;
      }
      [[fallthrough]];
    case kMountProcExport: {
      stat_index = ctx.proc == kMountProcExport ? kStatExport : kStatExportAll;
      // Shared, not copied, into each reply: clients that do not read
      // their replies then hold no copy of their own.
      SetSharedReplyTail(ExportBody());
      break;
    }
    default:
      result = PROC_UNAVAIL;
  }
  if (result == SUCCESS || result == GARBAGE_ARGS) {
    auto us = std::chrono::duration_cast<std::chrono::microseconds>(
                  std::chrono::steady_clock::now() - start)
                  .count();
    stats_.Record(stat_index, static_cast<uint64_t>(us),
                  error || result != SUCCESS);
  }
  return result;
}

}  // namespace sharemgrd
