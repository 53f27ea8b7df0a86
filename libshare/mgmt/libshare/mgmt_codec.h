// The management protocol's records (mgmt_prot.x) to and from libshare's
// types, written once for both ends: the client API (libshare/src/
// client.cc) and the daemon's management service (sharemgrd/
// mgmt_service.cc). Part of the mgmt_prot target, not of libshare(3).
//
//   ChangeBatchesView v(answer.batches);      // server: views, no copies
//   r.batches.batches_val = v.data();  r.batches.batches_len = v.size();
//   ChangeRecord c = DecodeChangeBatch(r.batches.batches_val[i]);  // client
//   s.cache = EncodeCacheStats(cache->counters());   // and DecodeCacheStats
//
// Thread-compatible.
#ifndef LIBSHARE_MGMT_CODEC_H_
#define LIBSHARE_MGMT_CODEC_H_

#include <rpc/rpc.h>

#include <vector>

#include "libshare/client.h"
#include "libshare/mgmt_prot.h"

namespace libshare {

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

}  // namespace libshare

#endif  // LIBSHARE_MGMT_CODEC_H_
