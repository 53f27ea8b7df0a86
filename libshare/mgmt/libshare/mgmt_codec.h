// The management protocol's records (mgmt_prot.x) to and from libshare's
// types, written once for both ends: the client API (libshare/src/
// client.cc) and the daemon's management service (sharemgrd/
// mgmt_service.cc). Part of the mgmt_prot target, not of libshare(3).
//
//   ChangeBatchesView v(answer.batches);      // server: views, no copies
//   r.batches.batches_val = v.data();  r.batches.batches_len = v.size();
//   ChangeRecord c = DecodeChangeBatch(r.batches.batches_val[i]);  // client
//   s.cache = EncodeCacheStats(cache->counters());   // and DecodeCacheStats
//   std::vector<mgmt_share> v = EncodeAll(shares, EncodeShare);  // views
//   std::vector<ShareInfo> s = DecodeAll(val, len, DecodeShare);  // copies
//   DaemonStatsView v(stats);  res.mgmt_stats_res_u.stats = v.get();
//   EncodeFailure(MgmtStatusOf(status), ...);          // server's refusal
//   return StatusFromMgmt(res->status, res->..._u.message);  // client's
//
// Thread-compatible.
#ifndef LIBSHARE_MGMT_CODEC_H_
#define LIBSHARE_MGMT_CODEC_H_

#include <rpc/rpc.h>

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "libshare/client.h"
#include "libshare/mgmt_prot.h"

namespace libshare {

// Ownership, for every Encode* below: the XDR record's texts point into
// the libshare record (no copy), which must outlive it and stay unchanged
// while it is encoded; never xdr_free an encoded record. Every Decode*
// copies, so the rpcgen-decoded result may be xdr_free'd after it.

// An XDR array of records, element by element (encode's ownership).
template <typename Wire, typename Record>
std::vector<Wire> EncodeAll(const std::vector<Record>& records,
                            Wire (*encode)(const Record&)) {
  std::vector<Wire> out;
  out.reserve(records.size());
  for (const Record& r : records) out.push_back(encode(r));
  return out;
}
template <typename Record, typename Wire>
std::vector<Record> DecodeAll(const Wire* val, u_int len,
                              Record (*decode)(const Wire&)) {
  std::vector<Record> out;
  out.reserve(len);
  for (u_int i = 0; i < len; ++i) out.push_back(decode(val[i]));
  return out;
}

// A text (the protocol's strings, NUL-free): a view, and a copy (a null
// string reads as "").
char* EncodeText(const std::string& s);
std::string DecodeText(char* const& s);

// A list of texts as an XDR array, views into `texts` (LIST_SHARES'
// groups, RERECORD's paths and the lines of its answer):
//   TextsView v(paths);  args.paths = {v.size(), v.data()};
class TextsView {
 public:
  explicit TextsView(const std::vector<std::string>& texts)
      : view_(EncodeAll(texts, EncodeText)) {}
  u_int size() const { return static_cast<u_int>(view_.size()); }
  char** data() { return view_.data(); }

 private:
  std::vector<char*> view_;
};
std::vector<std::string> DecodeTexts(char* const* val, u_int len);

// CHECK's arguments: the client (an address or a name), the path, and the
// security flavor ("" is sys).
struct CheckArgs {
  std::string client;
  std::string path;
  std::string sec;
};
mgmt_check_args EncodeCheckArgs(const CheckArgs& a);
CheckArgs DecodeCheckArgs(const mgmt_check_args& m);

// LIST_SHARES: every field of mgmt_share. The daemon's own fields
// (dev, mount_root, mountpoint) stay home: decoded, they are defaults.
mgmt_share EncodeShare(const ShareInfo& s);
ShareInfo DecodeShare(const mgmt_share& m);

// LIST_GROUPS: every field of mgmt_group.
mgmt_group EncodeGroup(const GroupInfo& g);
GroupInfo DecodeGroup(const mgmt_group& m);

// SHARETAB: every field of mgmt_sharetab_entry (mountpoint stays home).
mgmt_sharetab_entry EncodeSharetabEntry(const SharetabEntry& e);
SharetabEntry DecodeSharetabEntry(const mgmt_sharetab_entry& m);

// CHECK's answer: has_share says whether `share` is there (absent, it
// crosses as ""); every other field as it is.
mgmt_check_result EncodeCheckResult(const CheckResult& c);
CheckResult DecodeCheckResult(const mgmt_check_result& m);

// MOUNTS: one mount record (the client's address as text).
mgmt_mount EncodeMount(const MountInfo& m);
MountInfo DecodeMount(const mgmt_mount& m);

// BATCH's answer: an mgmt_batch_result that points into `result` (its
// texts; its errors through an array the view holds), which must outlive
// the view and stay unchanged while it is encoded. What the daemon keeps
// for itself (changed, changes, changes_complete, times) does not cross:
// decoded, it is the defaults.
class BatchResultView {
 public:
  explicit BatchResultView(const BatchResult& result);
  BatchResultView(const BatchResultView&) = delete;
  BatchResultView& operator=(const BatchResultView&) = delete;
  const mgmt_batch_result& get() const { return result_; }

 private:
  std::vector<mgmt_op_error> errors_;
  mgmt_batch_result result_{};
};

BatchResult DecodeBatchResult(const mgmt_batch_result& m);

// FOLLOW_SYNC's answer: an mgmt_follow_sync_result that points into
// `result` (its texts; its patterns and files through arrays the view
// holds), which must outlive the view and stay unchanged while it is
// encoded.
class FollowSyncView {
 public:
  explicit FollowSyncView(const FollowSyncResult& result);
  FollowSyncView(const FollowSyncView&) = delete;
  FollowSyncView& operator=(const FollowSyncView&) = delete;
  const mgmt_follow_sync_result& get() const { return result_; }

 private:
  std::vector<char*> patterns_;
  std::vector<mgmt_followed_file> files_;
  mgmt_follow_sync_result result_{};
};

FollowSyncResult DecodeFollowSyncResult(const mgmt_follow_sync_result& m);

// STATS: an mgmt_stats that points into `stats` (its texts; its requests
// and followed files through arrays the view holds), which must outlive
// the view and stay unchanged while it is encoded. Not copyable: the
// record points into the view.
class DaemonStatsView {
 public:
  explicit DaemonStatsView(const DaemonStats& stats);
  DaemonStatsView(const DaemonStatsView&) = delete;
  DaemonStatsView& operator=(const DaemonStatsView&) = delete;
  const mgmt_stats& get() const { return stats_; }

 private:
  std::vector<mgmt_request_stats> requests_;
  std::vector<mgmt_followed_status> followed_;
  mgmt_stats stats_{};
};

DaemonStats DecodeDaemonStats(const mgmt_stats& m);

// mgmt_change_batch records that point into `records`, which must outlive
// the view and stay unchanged while it is encoded.
class ChangeBatchesView {
 public:
  explicit ChangeBatchesView(const std::vector<ChangeRecord>& records);
  mgmt_change_batch* data() { return batches_.data(); }
  u_int size() const { return static_cast<u_int>(batches_.size()); }

 private:
  std::vector<mgmt_change_batch> batches_;
  std::vector<std::vector<mgmt_changed_share>> shares_;
};

// A decoded record as libshare's type. A kind other than "added" or
// "removed" is a change.
ChangeRecord DecodeChangeBatch(const mgmt_change_batch& b);

// The authorization cache's counters (STATS), field for field: the one
// place they cross between authcache::AuthCacheCounters (the same type)
// and the wire.
mgmt_cache_stats EncodeCacheStats(const CacheStats& c);
CacheStats DecodeCacheStats(const mgmt_cache_stats& m);

// The status of a refused call, one table both ways: PermissionDenied,
// InvalidArgument and NotFound cross as MGMT_ERR_PERM, MGMT_ERR_INVAL and
// MGMT_ERR_NOENT; every other code (the daemon failed) as
// MGMT_ERR_INTERNAL, which comes back as Internal. `s` is a failure (an
// OK status is MGMT_ERR_INTERNAL too: a caller never sends it).
mgmt_status MgmtStatusOf(const absl::Status& s);
// MGMT_OK is OkStatus; a refusal keeps its message (null reads as ""); a
// status this side does not know is Internal, naming its value.
absl::Status StatusFromMgmt(mgmt_status st, const char* message);

}  // namespace libshare

#endif  // LIBSHARE_MGMT_CODEC_H_
