#include "libshare/mgmt_codec.h"

#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"

namespace libshare {
namespace {

// The XDR structs hold char*; encoding only reads through them.
char* Mutable(std::string_view s) { return const_cast<char*>(s.data()); }
std::string FromC(const char* s) { return s ? std::string(s) : std::string(); }

// The refusals the protocol names, and the code each stands for.
struct StatusPair {
  mgmt_status wire;
  absl::StatusCode code;
};
constexpr StatusPair kStatusPairs[] = {
    {MGMT_ERR_PERM, absl::StatusCode::kPermissionDenied},
    {MGMT_ERR_INVAL, absl::StatusCode::kInvalidArgument},
    {MGMT_ERR_NOENT, absl::StatusCode::kNotFound},
    {MGMT_ERR_INTERNAL, absl::StatusCode::kInternal},
};

}  // namespace

ChangeBatchesView::ChangeBatchesView(const std::vector<ChangeRecord>& records)
    : batches_(records.size()), shares_(records.size()) {
  for (std::size_t i = 0; i < records.size(); ++i) {
    const ChangeRecord& in = records[i];
    mgmt_change_batch& b = batches_[i];
    b.generation = in.generation;
    b.time = in.time;
    b.uid = in.uid;
    b.pid = in.pid;
    b.origin = Mutable(in.origin);
    b.operations = in.operations;
    b.summary = Mutable(in.summary);
    std::vector<mgmt_changed_share>& shares = shares_[i];
    shares.resize(in.shares.size());
    for (std::size_t k = 0; k < in.shares.size(); ++k) {
      const ShareChange& c = in.shares[k];
      shares[k].kind = Mutable(ShareChangeKindName(c.kind));
      shares[k].path = Mutable(c.path);
      shares[k].id = c.id;
      shares[k].active = c.active;
    }
    b.shares.shares_len = static_cast<u_int>(shares.size());
    b.shares.shares_val = shares.data();
  }
}

ChangeRecord DecodeChangeBatch(const mgmt_change_batch& b) {
  ChangeRecord c;
  c.generation = b.generation;
  c.time = b.time;
  c.uid = b.uid;
  c.pid = b.pid;
  c.origin = FromC(b.origin);
  c.operations = b.operations;
  c.summary = FromC(b.summary);
  c.shares.reserve(b.shares.shares_len);
  for (u_int k = 0; k < b.shares.shares_len; ++k) {
    const mgmt_changed_share& m = b.shares.shares_val[k];
    ShareChange& sc = c.shares.emplace_back();
    const std::string_view kind = m.kind ? m.kind : "";
    sc.kind = kind == ShareChangeKindName(ShareChange::Kind::kAdded)
                  ? ShareChange::Kind::kAdded
              : kind == ShareChangeKindName(ShareChange::Kind::kRemoved)
                  ? ShareChange::Kind::kRemoved
                  : ShareChange::Kind::kChanged;
    sc.path = FromC(m.path);
    sc.id = m.id;
    sc.active = m.active;
  }
  return c;
}

mgmt_cache_stats EncodeCacheStats(const CacheStats& c) {
  mgmt_cache_stats m{};
  m.entries = c.entries;
  m.hits = c.hits;
  m.misses = c.misses;
  m.coalesced = c.coalesced;
  m.refreshes = c.refreshes;
  m.reclaims = c.reclaims;
  m.lookups = c.lookups;
  m.lookup_failures = c.lookup_failures;
  m.timeouts = c.timeouts;
  return m;
}

CacheStats DecodeCacheStats(const mgmt_cache_stats& m) {
  CacheStats c;
  c.entries = m.entries;
  c.hits = m.hits;
  c.misses = m.misses;
  c.coalesced = m.coalesced;
  c.refreshes = m.refreshes;
  c.reclaims = m.reclaims;
  c.lookups = m.lookups;
  c.lookup_failures = m.lookup_failures;
  c.timeouts = m.timeouts;
  return c;
}

mgmt_share EncodeShare(const ShareInfo& s) {
  mgmt_share m{};
  m.id = s.id;
  m.generation = s.generation;
  m.path = Mutable(s.path);
  m.group = Mutable(s.group);
  m.resource = Mutable(s.resource);
  m.description = Mutable(s.description);
  m.options = Mutable(s.options);
  m.effective_options = Mutable(s.effective_options);
  m.active = s.active;
  m.not_served = Mutable(s.not_served);
  m.fs_identity = Mutable(s.fs_identity);
  m.live_fs_identity = Mutable(s.live_fs_identity);
  return m;
}

ShareInfo DecodeShare(const mgmt_share& m) {
  ShareInfo s;
  s.id = m.id;
  s.generation = m.generation;
  s.path = FromC(m.path);
  s.group = FromC(m.group);
  s.resource = FromC(m.resource);
  s.description = FromC(m.description);
  s.options = FromC(m.options);
  s.effective_options = FromC(m.effective_options);
  s.active = m.active;
  s.not_served = FromC(m.not_served);
  s.fs_identity = FromC(m.fs_identity);
  s.live_fs_identity = FromC(m.live_fs_identity);
  return s;
}

mgmt_group EncodeGroup(const GroupInfo& g) {
  mgmt_group m{};
  m.name = Mutable(g.name);
  m.enabled = g.enabled;
  m.options = Mutable(g.options);
  m.share_count = g.share_count;
  m.managed_by = Mutable(g.managed_by);
  m.follow_error = Mutable(g.follow_error);
  return m;
}

GroupInfo DecodeGroup(const mgmt_group& m) {
  GroupInfo g;
  g.name = FromC(m.name);
  g.enabled = m.enabled;
  g.options = FromC(m.options);
  g.share_count = static_cast<std::size_t>(m.share_count);
  g.managed_by = FromC(m.managed_by);
  g.follow_error = FromC(m.follow_error);
  return g;
}

mgmt_sharetab_entry EncodeSharetabEntry(const SharetabEntry& e) {
  mgmt_sharetab_entry m{};
  m.path = Mutable(e.path);
  m.resource = Mutable(e.resource);
  m.fstype = Mutable(e.fstype);
  m.options = Mutable(e.options);
  m.description = Mutable(e.description);
  return m;
}

SharetabEntry DecodeSharetabEntry(const mgmt_sharetab_entry& m) {
  SharetabEntry e;
  e.path = FromC(m.path);
  e.resource = FromC(m.resource);
  e.fstype = FromC(m.fstype);
  e.options = FromC(m.options);
  e.description = FromC(m.description);
  return e;
}

mgmt_check_result EncodeCheckResult(const CheckResult& c) {
  mgmt_check_result m{};
  m.client = Mutable(c.client);
  m.address = Mutable(c.address);
  m.access = Mutable(c.access);
  m.root = c.root;
  m.has_share = c.share.has_value();
  m.share = Mutable(c.share.has_value() ? std::string_view(*c.share) : "");
  m.option = Mutable(c.option);
  m.entry = Mutable(c.entry);
  m.reason = Mutable(c.reason);
  m.sec = Mutable(c.sec);
  m.fs_identity = Mutable(c.fs_identity);
  m.live_fs_identity = Mutable(c.live_fs_identity);
  return m;
}

CheckResult DecodeCheckResult(const mgmt_check_result& m) {
  CheckResult c;
  c.client = FromC(m.client);
  c.address = FromC(m.address);
  c.access = FromC(m.access);
  c.root = m.root;
  if (m.has_share) c.share = FromC(m.share);
  c.option = FromC(m.option);
  c.entry = FromC(m.entry);
  c.reason = FromC(m.reason);
  c.sec = FromC(m.sec);
  c.fs_identity = FromC(m.fs_identity);
  c.live_fs_identity = FromC(m.live_fs_identity);
  return c;
}

mgmt_mount EncodeMount(const MountInfo& m) {
  mgmt_mount w{};
  w.client = Mutable(m.client);
  w.path = Mutable(m.path);
  w.since = m.since;
  return w;
}

MountInfo DecodeMount(const mgmt_mount& w) {
  MountInfo m;
  m.client = FromC(w.client);
  m.path = FromC(w.path);
  m.since = w.since;
  return m;
}

char* EncodeText(const std::string& s) { return Mutable(s); }
std::string DecodeText(char* const& s) { return FromC(s); }

std::vector<std::string> DecodeTexts(char* const* val, u_int len) {
  return DecodeAll(val, len, DecodeText);
}

mgmt_check_args EncodeCheckArgs(const CheckArgs& a) {
  return mgmt_check_args{Mutable(a.client), Mutable(a.path), Mutable(a.sec)};
}

CheckArgs DecodeCheckArgs(const mgmt_check_args& m) {
  return CheckArgs{FromC(m.client), FromC(m.path), FromC(m.sec)};
}

namespace {

mgmt_followed_file EncodeFollowedFile(const FollowedFile& f) {
  mgmt_followed_file m{};
  m.path = Mutable(f.path);
  m.group = Mutable(f.group);
  m.error = Mutable(f.error);
  m.changed = f.changed;
  return m;
}

FollowedFile DecodeFollowedFile(const mgmt_followed_file& m) {
  return {FromC(m.path), FromC(m.group), FromC(m.error), m.changed != 0};
}

mgmt_op_error EncodeOperationError(const OperationError& e) {
  mgmt_op_error m{};
  m.index = e.index;
  m.message = Mutable(e.message);
  return m;
}

OperationError DecodeOperationError(const mgmt_op_error& m) {
  return {static_cast<std::size_t>(m.index), FromC(m.message)};
}

mgmt_request_stats EncodeRequestStats(const RequestStats& r) {
  mgmt_request_stats m{};
  m.name = Mutable(r.name);
  m.count = r.count;
  m.errors = r.errors;
  m.p50_us = r.p50_us;
  m.p99_us = r.p99_us;
  return m;
}

RequestStats DecodeRequestStats(const mgmt_request_stats& m) {
  return {FromC(m.name), m.count, m.errors, m.p50_us, m.p99_us};
}

mgmt_followed_status EncodeFollowedStatus(const FollowedFileStatus& f) {
  mgmt_followed_status m{};
  m.path = Mutable(f.path);
  m.group = Mutable(f.group);
  m.applied_generation = f.applied_generation;
  m.in_step = f.in_step;
  m.error = Mutable(f.error);
  m.error_since = f.error_since;
  return m;
}

FollowedFileStatus DecodeFollowedStatus(const mgmt_followed_status& m) {
  FollowedFileStatus f;
  f.path = FromC(m.path);
  f.group = FromC(m.group);
  f.applied_generation = m.applied_generation;
  f.in_step = m.in_step;
  f.error = FromC(m.error);
  f.error_since = m.error_since;
  return f;
}

}  // namespace

BatchResultView::BatchResultView(const BatchResult& r)
    : errors_(EncodeAll(r.errors, EncodeOperationError)) {
  result_.errors.errors_len = static_cast<u_int>(errors_.size());
  result_.errors.errors_val = errors_.data();
  result_.commit_error = Mutable(r.commit_error);
  result_.store_unreachable = r.store_unreachable;
  result_.generation = r.generation;
  result_.applied = r.applied;
}

BatchResult DecodeBatchResult(const mgmt_batch_result& m) {
  BatchResult r;
  r.errors =
      DecodeAll(m.errors.errors_val, m.errors.errors_len, DecodeOperationError);
  r.commit_error = FromC(m.commit_error);
  r.store_unreachable = m.store_unreachable;
  r.generation = m.generation;
  r.applied = static_cast<std::size_t>(m.applied);
  return r;
}

FollowSyncView::FollowSyncView(const FollowSyncResult& r)
    : patterns_(EncodeAll(r.patterns, EncodeText)),
      files_(EncodeAll(r.files, EncodeFollowedFile)) {
  result_.patterns.patterns_len = static_cast<u_int>(patterns_.size());
  result_.patterns.patterns_val = patterns_.data();
  result_.files.files_len = static_cast<u_int>(files_.size());
  result_.files.files_val = files_.data();
  result_.generation = r.generation;
}

FollowSyncResult DecodeFollowSyncResult(const mgmt_follow_sync_result& m) {
  FollowSyncResult r;
  r.patterns =
      DecodeAll(m.patterns.patterns_val, m.patterns.patterns_len, DecodeText);
  r.files = DecodeAll(m.files.files_val, m.files.files_len, DecodeFollowedFile);
  r.generation = m.generation;
  return r;
}

DaemonStatsView::DaemonStatsView(const DaemonStats& d)
    : requests_(EncodeAll(d.requests, EncodeRequestStats)),
      followed_(EncodeAll(d.followed, EncodeFollowedStatus)) {
  mgmt_stats& s = stats_;
  s.shares = d.shares;
  s.groups = d.groups;
  s.generation = d.generation;
  s.load_ms = d.load_ms;
  s.load_threads = d.load_threads;
  s.mounts = d.mounts;
  s.mounts_dropped = d.mounts_dropped;
  s.mount_limit = d.mount_limit;
  s.mount_client_limit = d.mount_client_limit;
  s.cache = EncodeCacheStats(d.cache);
  s.requests.requests_len = static_cast<u_int>(requests_.size());
  s.requests.requests_val = requests_.data();
  s.sharetab_error = Mutable(d.sharetab_error);
  s.kernel.mode = Mutable(d.kernel.mode);
  s.kernel.upcalls = d.kernel.upcalls;
  s.kernel.negative = d.kernel.negative;
  s.kernel.pushed = d.kernel.pushed;
  s.kernel.flushes = d.kernel.flushes;
  s.kernel.answer_p99_us = d.kernel.answer_p99_us;
  s.store.kind = Mutable(d.store.kind);
  s.store.engine = Mutable(d.store.engine);
  s.store.head = Mutable(d.store.head);
  s.store.applied = d.store.applied;
  s.store.cluster = d.store.cluster;
  s.store.reachable = d.store.reachable;
  s.store.unreachable_since = d.store.unreachable_since;
  s.store.error = Mutable(d.store.error);
  s.store.resyncs = d.store.resyncs;
  s.followed.followed_len = static_cast<u_int>(followed_.size());
  s.followed.followed_val = followed_.data();
  s.insecure = d.insecure;
  s.shares_served = d.shares_served;
  s.shares_not_served = d.shares_not_served;
  s.shares_disabled = d.shares_disabled;
}

DaemonStats DecodeDaemonStats(const mgmt_stats& m) {
  DaemonStats d;
  d.shares = m.shares;
  d.groups = m.groups;
  d.generation = m.generation;
  d.load_ms = m.load_ms;
  d.load_threads = m.load_threads;
  d.mounts = m.mounts;
  d.mounts_dropped = m.mounts_dropped;
  d.mount_limit = m.mount_limit;
  d.mount_client_limit = m.mount_client_limit;
  d.cache = DecodeCacheStats(m.cache);
  d.requests = DecodeAll(m.requests.requests_val, m.requests.requests_len,
                         DecodeRequestStats);
  d.sharetab_error = FromC(m.sharetab_error);
  d.kernel.mode = FromC(m.kernel.mode);
  d.kernel.upcalls = m.kernel.upcalls;
  d.kernel.negative = m.kernel.negative;
  d.kernel.pushed = m.kernel.pushed;
  d.kernel.flushes = m.kernel.flushes;
  d.kernel.answer_p99_us = m.kernel.answer_p99_us;
  d.store.kind = FromC(m.store.kind);
  d.store.engine = FromC(m.store.engine);
  d.store.head = FromC(m.store.head);
  d.store.applied = m.store.applied;
  d.store.cluster = m.store.cluster;
  d.store.reachable = m.store.reachable;
  d.store.unreachable_since = m.store.unreachable_since;
  d.store.error = FromC(m.store.error);
  d.store.resyncs = m.store.resyncs;
  d.followed = DecodeAll(m.followed.followed_val, m.followed.followed_len,
                         DecodeFollowedStatus);
  d.insecure = m.insecure;
  d.shares_served = m.shares_served;
  d.shares_not_served = m.shares_not_served;
  d.shares_disabled = m.shares_disabled;
  return d;
}

mgmt_status MgmtStatusOf(const absl::Status& s) {
  for (const StatusPair& p : kStatusPairs) {
    if (p.code == s.code()) return p.wire;
  }
  return MGMT_ERR_INTERNAL;
}

absl::Status StatusFromMgmt(mgmt_status st, const char* message) {
  if (st == MGMT_OK) return absl::OkStatus();
  std::string m = FromC(message);
  for (const StatusPair& p : kStatusPairs) {
    if (p.wire == st) return absl::Status(p.code, m);
  }
  return absl::InternalError(absl::StrCat("unknown status ", st, ": ", m));
}

}  // namespace libshare
