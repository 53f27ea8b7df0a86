// The codec shared by the client API and the daemon (libshare/
// mgmt_codec.h): each record encoded as the daemon sends it and decoded as
// the client reads it comes back field for field.
#include "libshare/mgmt_codec.h"

#include <rpc/rpc.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "libshare/mgmt_prot.h"

namespace libshare {
namespace {

// `in` encoded as the daemon sends it (its XDR views), then decoded as the
// client reads it (rpcgen's decoder, which allocates); freed at the end.
template <typename T>
class OverTheWire {
 public:
  OverTheWire(bool_t (*fn)(XDR*, T*), T* in)
      : fn_(reinterpret_cast<xdrproc_t>(fn)) {
    std::string bytes(::xdr_sizeof(fn_, in), '\0');
    XDR x;
    ::xdrmem_create(&x, bytes.data(), static_cast<u_int>(bytes.size()),
                    XDR_ENCODE);
    ok_ = fn(&x, in);
    xdr_destroy(&x);
    std::memset(&got_, 0, sizeof got_);
    ::xdrmem_create(&x, bytes.data(), static_cast<u_int>(bytes.size()),
                    XDR_DECODE);
    ok_ = ok_ && fn(&x, &got_);
    xdr_destroy(&x);
  }
  ~OverTheWire() { ::xdr_free(fn_, reinterpret_cast<char*>(&got_)); }
  OverTheWire(const OverTheWire&) = delete;
  OverTheWire& operator=(const OverTheWire&) = delete;
  bool ok() const { return ok_; }
  const T& operator*() const { return got_; }
  const T* operator->() const { return &got_; }

 private:
  xdrproc_t fn_;
  bool ok_ = false;
  T got_;
};

// A list as the daemon sends it (EncodeAll's views, in the array `pick`
// finds in the result union, status MGMT_OK) and as the client reads it
// (DecodeAll).
template <typename Res, typename Pick, typename Record, typename Wire>
std::vector<Record> ListOverTheWire(bool_t (*fn)(XDR*, Res*), Pick pick,
                                    const std::vector<Record>& in,
                                    Wire (*encode)(const Record&),
                                    Record (*decode)(const Wire&)) {
  std::vector<Wire> view = EncodeAll(in, encode);
  Res res{};
  res.status = MGMT_OK;
  pick(res) = {static_cast<u_int>(view.size()), view.data()};
  OverTheWire got(fn, &res);
  EXPECT_TRUE(got.ok());
  const auto [len, val] = pick(*got);
  return DecodeAll(val, len, decode);
}

std::vector<ChangeRecord> Records() {
  ChangeRecord a;
  a.generation = 7;
  a.time = -5;  // hyper: signed
  a.uid = 4294967294u;
  a.pid = -1;
  a.origin = "batch /root/h\xe9.batch";  // Latin-1 byte kept
  a.operations = 3;
  a.summary = "add-share x2, remove-share";
  a.shares = {{ShareChange::Kind::kAdded, "/export/a", 11, true},
              {ShareChange::Kind::kRemoved, "/export/b", 12, false},
              {ShareChange::Kind::kChanged, "/export/c d", 1ull << 40, false}};
  ChangeRecord b;  // no shares, empty texts
  b.generation = 8;
  return {a, b};
}

TEST(MgmtCodecTest, ChangeRecordsSurviveTheWire) {
  const std::vector<ChangeRecord> in = Records();
  ChangeBatchesView view(in);
  mgmt_changes_res res{};
  res.status = MGMT_OK;
  res.mgmt_changes_res_u.result.generation = 8;
  res.mgmt_changes_res_u.result.batches.batches_len = view.size();
  res.mgmt_changes_res_u.result.batches.batches_val = view.data();
  OverTheWire got(xdr_mgmt_changes_res, &res);
  ASSERT_TRUE(got.ok());
  const auto& wire = got->mgmt_changes_res_u.result.batches;
  ASSERT_EQ(wire.batches_len, in.size());
  for (u_int i = 0; i < wire.batches_len; ++i) {
    const ChangeRecord out = DecodeChangeBatch(wire.batches_val[i]);
    EXPECT_EQ(out.generation, in[i].generation);
    EXPECT_EQ(out.time, in[i].time);
    EXPECT_EQ(out.uid, in[i].uid);
    EXPECT_EQ(out.pid, in[i].pid);
    EXPECT_EQ(out.origin, in[i].origin);
    EXPECT_EQ(out.operations, in[i].operations);
    EXPECT_EQ(out.summary, in[i].summary);
    ASSERT_EQ(out.shares.size(), in[i].shares.size());
    for (std::size_t k = 0; k < out.shares.size(); ++k) {
      EXPECT_EQ(out.shares[k].kind, in[i].shares[k].kind) << k;
      EXPECT_EQ(out.shares[k].path, in[i].shares[k].path);
      EXPECT_EQ(out.shares[k].id, in[i].shares[k].id);
      EXPECT_EQ(out.shares[k].active, in[i].shares[k].active);
    }
  }
}

TEST(MgmtCodecTest, CacheCountersSurviveTheWire) {
  CacheStats in;
  in.entries = 1;
  in.hits = 2;
  in.misses = 3;
  in.coalesced = 4;
  in.refreshes = 5;
  in.reclaims = 6;
  in.lookups = 7;
  in.lookup_failures = 8;
  in.timeouts = 1ull << 63;
  mgmt_cache_stats m = EncodeCacheStats(in);
  OverTheWire got(xdr_mgmt_cache_stats, &m);
  ASSERT_TRUE(got.ok());
  const CacheStats out = DecodeCacheStats(*got);
  EXPECT_EQ(out.entries, 1u);
  EXPECT_EQ(out.hits, 2u);
  EXPECT_EQ(out.misses, 3u);
  EXPECT_EQ(out.coalesced, 4u);
  EXPECT_EQ(out.refreshes, 5u);
  EXPECT_EQ(out.reclaims, 6u);
  EXPECT_EQ(out.lookups, 7u);
  EXPECT_EQ(out.lookup_failures, 8u);
  EXPECT_EQ(out.timeouts, 1ull << 63);
}

TEST(MgmtCodecTest, SharesSurviveTheWire) {
  ShareInfo a;
  a.id = UINT64_MAX;
  a.generation = UINT64_MAX - 1;
  a.path = "/export/a b";
  a.group = "homes";
  a.resource = "res";
  a.description = "d\xe9sc \"quoted\"";
  a.options = "rw=@10.0.0.0/8";
  a.effective_options = "rw=@10.0.0.0/8,sec=sys";
  a.active = true;
  a.not_served = "not on its recorded file system";
  a.fs_identity = "uuid:0123456789abcdef0123456789abcdef";
  a.live_fs_identity = "none";
  ShareInfo b;  // every text empty, zeros
  b.active = false;
  const std::vector<ShareInfo> in = {a, b};
  const std::vector<ShareInfo> out = ListOverTheWire(
      xdr_mgmt_list_shares_res,
      [](auto& r) -> auto& { return r.mgmt_list_shares_res_u.shares; }, in,
      EncodeShare, DecodeShare);
  ASSERT_EQ(out.size(), in.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    EXPECT_EQ(out[i].id, in[i].id) << i;
    EXPECT_EQ(out[i].generation, in[i].generation);
    EXPECT_EQ(out[i].path, in[i].path);
    EXPECT_EQ(out[i].group, in[i].group);
    EXPECT_EQ(out[i].resource, in[i].resource);
    EXPECT_EQ(out[i].description, in[i].description);
    EXPECT_EQ(out[i].options, in[i].options);
    EXPECT_EQ(out[i].effective_options, in[i].effective_options);
    EXPECT_EQ(out[i].active, in[i].active);
    EXPECT_EQ(out[i].not_served, in[i].not_served);
    EXPECT_EQ(out[i].fs_identity, in[i].fs_identity);
    EXPECT_EQ(out[i].live_fs_identity, in[i].live_fs_identity);
  }
}

TEST(MgmtCodecTest, GroupsSurviveTheWire) {
  GroupInfo a;
  a.name = "exports-zfs";
  a.enabled = false;
  a.options = "ro";
  a.share_count = SIZE_MAX;
  a.managed_by = "/etc/exports.d/zfs.exports";
  a.follow_error = "/etc/exports.d/zfs.exports:3: bad option";
  GroupInfo b;  // enabled, no shares, every text empty
  const std::vector<GroupInfo> in = {a, b};
  const std::vector<GroupInfo> out = ListOverTheWire(
      xdr_mgmt_list_groups_res,
      [](auto& r) -> auto& { return r.mgmt_list_groups_res_u.groups; }, in,
      EncodeGroup, DecodeGroup);
  ASSERT_EQ(out.size(), in.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    EXPECT_EQ(out[i].name, in[i].name) << i;
    EXPECT_EQ(out[i].enabled, in[i].enabled);
    EXPECT_EQ(out[i].options, in[i].options);
    EXPECT_EQ(out[i].share_count, in[i].share_count);
    EXPECT_EQ(out[i].managed_by, in[i].managed_by);
    EXPECT_EQ(out[i].follow_error, in[i].follow_error);
  }
}

TEST(MgmtCodecTest, SharetabEntriesSurviveTheWire) {
  SharetabEntry a;
  a.path = "/export/a";
  a.resource = "-";
  a.options = "rw,sec=krb5";
  a.description = "tab\there";
  SharetabEntry b;  // empty texts, and an empty fstype (not "nfs")
  b.fstype = "";
  const std::vector<SharetabEntry> in = {a, b};
  const std::vector<SharetabEntry> out = ListOverTheWire(
      xdr_mgmt_sharetab_res,
      [](auto& r) -> auto& { return r.mgmt_sharetab_res_u.entries; }, in,
      EncodeSharetabEntry, DecodeSharetabEntry);
  ASSERT_EQ(out.size(), in.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    EXPECT_EQ(out[i].path, in[i].path) << i;
    EXPECT_EQ(out[i].resource, in[i].resource);
    EXPECT_EQ(out[i].fstype, in[i].fstype);
    EXPECT_EQ(out[i].options, in[i].options);
    EXPECT_EQ(out[i].description, in[i].description);
  }
}

// A CHECK answer encoded as the daemon does, decoded as the client does.
CheckResult CheckOverTheWire(const CheckResult& in) {
  mgmt_check_res res{};
  res.status = MGMT_OK;
  res.mgmt_check_res_u.result = EncodeCheckResult(in);
  OverTheWire got(xdr_mgmt_check_res, &res);
  EXPECT_TRUE(got.ok());
  return DecodeCheckResult(got->mgmt_check_res_u.result);
}

TEST(MgmtCodecTest, CheckAnswerSurvivesTheWire) {
  CheckResult in;
  in.client = "host.example";
  in.address = "2001:db8::1";
  in.access = "rw";
  in.root = true;
  in.share = "/export/a";
  in.option = "rw=";
  in.entry = "@2001:db8::/32";
  in.reason = "rw= lists @2001:db8::/32";
  in.sec = "krb5p";
  in.fs_identity = "uuid:0123456789abcdef0123456789abcdef";
  in.live_fs_identity = "none";
  const CheckResult out = CheckOverTheWire(in);
  EXPECT_EQ(out.client, in.client);
  EXPECT_EQ(out.address, in.address);
  EXPECT_EQ(out.access, in.access);
  EXPECT_EQ(out.root, in.root);
  EXPECT_EQ(out.share, in.share);
  EXPECT_EQ(out.option, in.option);
  EXPECT_EQ(out.entry, in.entry);
  EXPECT_EQ(out.reason, in.reason);
  EXPECT_EQ(out.sec, in.sec);
  EXPECT_EQ(out.fs_identity, in.fs_identity);
  EXPECT_EQ(out.live_fs_identity, in.live_fs_identity);
}

TEST(MgmtCodecTest, CheckAnswerKeepsAnEmptyShareApartFromNone) {
  CheckResult none;  // not shared: no share, every text empty
  none.access = "none";
  const CheckResult out = CheckOverTheWire(none);
  EXPECT_FALSE(out.share.has_value());
  EXPECT_EQ(out.access, "none");
  EXPECT_FALSE(out.root);
  EXPECT_EQ(out.client, "");
  EXPECT_EQ(out.reason, "");
  CheckResult empty;  // a share whose path is "" (has_share, share "")
  empty.share = "";
  EXPECT_EQ(CheckOverTheWire(empty).share, std::optional<std::string>(""));
}

TEST(MgmtCodecTest, MountRecordsSurviveTheWire) {
  const std::vector<MountInfo> in = {
      {"192.0.2.7", "/export/a", INT64_MAX},
      {"2001:db8::1", "/export/b c", -1},  // hyper: signed
      {"", "", 0}};                        // recorded before the daemon's start
  const std::vector<MountInfo> out = ListOverTheWire(
      xdr_mgmt_mounts_res,
      [](auto& r) -> auto& { return r.mgmt_mounts_res_u.mounts; }, in,
      EncodeMount, DecodeMount);
  ASSERT_EQ(out.size(), in.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    EXPECT_EQ(out[i].client, in[i].client) << i;
    EXPECT_EQ(out[i].path, in[i].path);
    EXPECT_EQ(out[i].since, in[i].since);
  }
}

// A BATCH answer encoded as the daemon does, decoded as the client does.
BatchResult BatchResultOverTheWire(const BatchResult& in) {
  BatchResultView view(in);
  mgmt_batch_res res{};
  res.status = MGMT_OK;
  res.mgmt_batch_res_u.result = view.get();
  OverTheWire got(xdr_mgmt_batch_res, &res);
  EXPECT_TRUE(got.ok());
  return DecodeBatchResult(got->mgmt_batch_res_u.result);
}

TEST(MgmtCodecTest, RefusedBatchSurvivesTheWire) {
  BatchResult in;
  in.errors = {{0, "/export/a: path is inside share /export"}, {SIZE_MAX, ""}};
  in.commit_error = "database is locked";
  in.store_unreachable = true;
  in.generation = UINT64_MAX;
  in.applied = SIZE_MAX;
  const BatchResult out = BatchResultOverTheWire(in);
  ASSERT_EQ(out.errors.size(), in.errors.size());
  for (std::size_t i = 0; i < out.errors.size(); ++i) {
    EXPECT_EQ(out.errors[i].index, in.errors[i].index) << i;
    EXPECT_EQ(out.errors[i].message, in.errors[i].message);
  }
  EXPECT_EQ(out.commit_error, in.commit_error);
  EXPECT_EQ(out.store_unreachable, in.store_unreachable);
  EXPECT_EQ(out.generation, in.generation);
  EXPECT_EQ(out.applied, in.applied);
}

TEST(MgmtCodecTest, CommittedBatchKeepsTheDaemonsOwnFieldsHome) {
  BatchResult in;
  in.generation = 5;
  in.applied = 2;
  in.changed = true;
  in.changes = {{ShareChange::Kind::kAdded, "/export/a", 1, true}};
  in.changes_complete = false;
  const BatchResult out = BatchResultOverTheWire(in);
  EXPECT_TRUE(out.ok());
  EXPECT_EQ(out.commit_error, "");
  EXPECT_EQ(out.generation, 5u);
  EXPECT_EQ(out.applied, 2u);
  EXPECT_FALSE(out.changed);
  EXPECT_TRUE(out.changes.empty());
  EXPECT_TRUE(out.changes_complete);
}

// A FOLLOW_SYNC answer encoded as the daemon does, decoded as the client
// does.
FollowSyncResult FollowSyncOverTheWire(const FollowSyncResult& in) {
  FollowSyncView view(in);
  mgmt_follow_sync_res res{};
  res.status = MGMT_OK;
  res.mgmt_follow_sync_res_u.result = view.get();
  OverTheWire got(xdr_mgmt_follow_sync_res, &res);
  EXPECT_TRUE(got.ok());
  return DecodeFollowSyncResult(got->mgmt_follow_sync_res_u.result);
}

TEST(MgmtCodecTest, FollowSyncAnswerSurvivesTheWire) {
  FollowSyncResult in;
  in.patterns = {"/etc/exports", "/etc/exports.d/*.exports", ""};
  in.files = {{"/etc/exports", "exports", "", true},
              {"/etc/exports.d/zfs.exports", "exports-zfs",
               "/etc/exports.d/zfs.exports:3: bad option", false}};
  in.generation = UINT64_MAX;
  const FollowSyncResult out = FollowSyncOverTheWire(in);
  EXPECT_EQ(out.patterns, in.patterns);
  ASSERT_EQ(out.files.size(), in.files.size());
  for (std::size_t i = 0; i < out.files.size(); ++i) {
    EXPECT_EQ(out.files[i].path, in.files[i].path) << i;
    EXPECT_EQ(out.files[i].group, in.files[i].group);
    EXPECT_EQ(out.files[i].error, in.files[i].error);
    EXPECT_EQ(out.files[i].changed, in.files[i].changed);
  }
  EXPECT_EQ(out.generation, in.generation);
}

TEST(MgmtCodecTest, FollowSyncAnswerWithNothingFollowedIsEmpty) {
  const FollowSyncResult out = FollowSyncOverTheWire(FollowSyncResult());
  EXPECT_TRUE(out.patterns.empty());
  EXPECT_TRUE(out.files.empty());
  EXPECT_EQ(out.generation, 0u);
}

// STATS encoded as the daemon does, decoded as the client does.
DaemonStats StatsOverTheWire(const DaemonStats& in) {
  DaemonStatsView view(in);
  mgmt_stats_res res{};
  res.status = MGMT_OK;
  res.mgmt_stats_res_u.stats = view.get();
  OverTheWire got(xdr_mgmt_stats_res, &res);
  EXPECT_TRUE(got.ok());
  return DecodeDaemonStats(got->mgmt_stats_res_u.stats);
}

TEST(MgmtCodecTest, DaemonStatsSurviveTheWire) {
  DaemonStats in;
  in.shares = UINT64_MAX;
  in.groups = 2;
  in.generation = 3;
  in.load_ms = 12.5;
  in.load_threads = -1;
  in.mounts = 4;
  in.mounts_dropped = 5;
  in.mount_limit = 6;
  in.mount_client_limit = 7;
  in.cache.hits = 8;
  in.cache.timeouts = UINT64_MAX;
  in.requests = {{"MNT", 9, 1, 10.25, 99.5}, {"", 0, 0, 0, 0}};
  in.sharetab_error = "rename /etc/dfs/sharetab: EROFS";
  in.kernel = {"on", 11, 12, 13, 14, 15.75};
  in.store.kind = "postgresql";
  in.store.engine = "PostgreSQL at db:5432, database sharemgr";
  in.store.head = "head-a";
  in.store.applied = 16;
  in.store.cluster = 17;
  in.store.reachable = false;
  in.store.unreachable_since = INT64_MIN;
  in.store.error = "connection refused";
  in.store.resyncs = 18;
  FollowedFileStatus f;
  f.path = "/etc/exports";
  f.group = "exports";
  f.applied_generation = 19;
  f.in_step = true;
  f.error = "";
  f.error_since = INT64_MAX;
  in.followed = {f, FollowedFileStatus()};
  in.insecure = true;
  in.shares_served = 20;
  in.shares_not_served = 21;
  in.shares_disabled = 22;
  const DaemonStats out = StatsOverTheWire(in);
  EXPECT_EQ(out.shares, in.shares);
  EXPECT_EQ(out.groups, in.groups);
  EXPECT_EQ(out.generation, in.generation);
  EXPECT_EQ(out.load_ms, in.load_ms);
  EXPECT_EQ(out.load_threads, in.load_threads);
  EXPECT_EQ(out.mounts, in.mounts);
  EXPECT_EQ(out.mounts_dropped, in.mounts_dropped);
  EXPECT_EQ(out.mount_limit, in.mount_limit);
  EXPECT_EQ(out.mount_client_limit, in.mount_client_limit);
  // Every counter: CacheCountersSurviveTheWire.
  EXPECT_EQ(out.cache.hits, in.cache.hits);
  EXPECT_EQ(out.cache.timeouts, in.cache.timeouts);
  ASSERT_EQ(out.requests.size(), in.requests.size());
  for (std::size_t i = 0; i < out.requests.size(); ++i) {
    EXPECT_EQ(out.requests[i].name, in.requests[i].name) << i;
    EXPECT_EQ(out.requests[i].count, in.requests[i].count);
    EXPECT_EQ(out.requests[i].errors, in.requests[i].errors);
    EXPECT_EQ(out.requests[i].p50_us, in.requests[i].p50_us);
    EXPECT_EQ(out.requests[i].p99_us, in.requests[i].p99_us);
  }
  EXPECT_EQ(out.sharetab_error, in.sharetab_error);
  EXPECT_EQ(out.kernel.mode, in.kernel.mode);
  EXPECT_EQ(out.kernel.upcalls, in.kernel.upcalls);
  EXPECT_EQ(out.kernel.negative, in.kernel.negative);
  EXPECT_EQ(out.kernel.pushed, in.kernel.pushed);
  EXPECT_EQ(out.kernel.flushes, in.kernel.flushes);
  EXPECT_EQ(out.kernel.answer_p99_us, in.kernel.answer_p99_us);
  EXPECT_EQ(out.store.kind, in.store.kind);
  EXPECT_EQ(out.store.engine, in.store.engine);
  EXPECT_EQ(out.store.head, in.store.head);
  EXPECT_EQ(out.store.applied, in.store.applied);
  EXPECT_EQ(out.store.cluster, in.store.cluster);
  EXPECT_EQ(out.store.reachable, in.store.reachable);
  EXPECT_EQ(out.store.unreachable_since, in.store.unreachable_since);
  EXPECT_EQ(out.store.error, in.store.error);
  EXPECT_EQ(out.store.resyncs, in.store.resyncs);
  ASSERT_EQ(out.followed.size(), in.followed.size());
  for (std::size_t i = 0; i < out.followed.size(); ++i) {
    EXPECT_EQ(out.followed[i].path, in.followed[i].path) << i;
    EXPECT_EQ(out.followed[i].group, in.followed[i].group);
    EXPECT_EQ(out.followed[i].applied_generation,
              in.followed[i].applied_generation);
    EXPECT_EQ(out.followed[i].in_step, in.followed[i].in_step);
    EXPECT_EQ(out.followed[i].error, in.followed[i].error);
    EXPECT_EQ(out.followed[i].error_since, in.followed[i].error_since);
  }
  EXPECT_EQ(out.insecure, in.insecure);
  EXPECT_EQ(out.shares_served, in.shares_served);
  EXPECT_EQ(out.shares_not_served, in.shares_not_served);
  EXPECT_EQ(out.shares_disabled, in.shares_disabled);
}

TEST(MgmtCodecTest, DaemonStatsOfAnIdleDaemonSurviveTheWire) {
  const DaemonStats out = StatsOverTheWire(DaemonStats());
  EXPECT_TRUE(out.requests.empty());
  EXPECT_TRUE(out.followed.empty());
  EXPECT_EQ(out.kernel.mode, "off");
  EXPECT_EQ(out.store.kind, "sqlite");
  EXPECT_TRUE(out.store.reachable);
  EXPECT_EQ(out.sharetab_error, "");
  EXPECT_FALSE(out.insecure);
}

// A refusal as the daemon encodes it (EncodeFailure: any result union's
// status and message) and the status the client makes of it.
absl::Status RefusalOverTheWire(const absl::Status& refusal) {
  std::string message(refusal.message());
  mgmt_flush_res r{};
  r.status = MgmtStatusOf(refusal);
  r.mgmt_flush_res_u.message = message.data();
  OverTheWire got(xdr_mgmt_flush_res, &r);
  EXPECT_TRUE(got.ok());
  return StatusFromMgmt(got->status, got->mgmt_flush_res_u.message);
}

// The calls' arguments, as the client sends them and the daemon reads
// them: LIST_SHARES' groups, CHECK's three texts, RERECORD's paths (and
// its answer's lines, the same list of texts).
TEST(MgmtCodecTest, CallArgumentsSurviveTheWire) {
  const std::vector<std::string> groups = {"homes", "", "caf\xe9 d"};
  TextsView names(groups);
  mgmt_list_shares_args list{};
  list.groups.groups_len = names.size();
  list.groups.groups_val = names.data();
  OverTheWire got_list(xdr_mgmt_list_shares_args, &list);
  ASSERT_TRUE(got_list.ok());
  EXPECT_EQ(
      DecodeTexts(got_list->groups.groups_val, got_list->groups.groups_len),
      groups);

  const CheckArgs asked{"client.example.com", "/export/a b", ""};
  mgmt_check_args check = EncodeCheckArgs(asked);
  OverTheWire got_check(xdr_mgmt_check_args, &check);
  ASSERT_TRUE(got_check.ok());
  const CheckArgs read = DecodeCheckArgs(*got_check);
  EXPECT_EQ(read.client, asked.client);
  EXPECT_EQ(read.path, asked.path);
  EXPECT_EQ(read.sec, "");

  const std::vector<std::string> none;
  TextsView empty(none);
  mgmt_rerecord_args rerecord{};
  rerecord.paths.paths_len = empty.size();
  rerecord.paths.paths_val = empty.data();
  OverTheWire got_rerecord(xdr_mgmt_rerecord_args, &rerecord);
  ASSERT_TRUE(got_rerecord.ok());
  EXPECT_TRUE(
      DecodeTexts(got_rerecord->paths.paths_val, got_rerecord->paths.paths_len)
          .empty());
}

TEST(MgmtCodecTest, RefusalsKeepTheirCodeAndMessage) {
  for (const absl::Status& in :
       {absl::PermissionDeniedError("permission denied: changing shares"),
        absl::InvalidArgumentError("sec \"x\": not a flavor"),
        absl::NotFoundError("group \"g\" does not exist"),
        absl::InternalError(""), absl::InternalError("disk full")}) {
    EXPECT_EQ(RefusalOverTheWire(in), in);
  }
}

TEST(MgmtCodecTest, OtherFailuresComeBackAsInternal) {
  EXPECT_EQ(RefusalOverTheWire(absl::UnavailableError("no watch")),
            absl::InternalError("no watch"));
  EXPECT_EQ(RefusalOverTheWire(absl::OutOfRangeError("")),
            absl::InternalError(""));
}

TEST(MgmtCodecTest, OkIsOkAndAnUnknownStatusIsNamed) {
  EXPECT_TRUE(StatusFromMgmt(MGMT_OK, "ignored").ok());
  EXPECT_TRUE(StatusFromMgmt(MGMT_OK, nullptr).ok());
  EXPECT_EQ(StatusFromMgmt(MGMT_ERR_NOENT, nullptr), absl::NotFoundError(""));
  EXPECT_EQ(StatusFromMgmt(static_cast<mgmt_status>(9), "x"),
            absl::InternalError("unknown status 9: x"));
}

}  // namespace
}  // namespace libshare
