// The codec shared by the client API and the daemon (libshare/
// mgmt_codec.h): a change list encoded as the daemon sends it and decoded
// as the client reads it comes back field for field.
#include "libshare/mgmt_codec.h"

#include <rpc/rpc.h>

#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "libshare/mgmt_prot.h"

namespace libshare {
namespace {

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
  const xdrproc_t fn = reinterpret_cast<xdrproc_t>(xdr_mgmt_changes_res);
  std::string bytes(::xdr_sizeof(fn, &res), '\0');
  XDR x;
  ::xdrmem_create(&x, bytes.data(), static_cast<u_int>(bytes.size()),
                  XDR_ENCODE);
  ASSERT_TRUE(xdr_mgmt_changes_res(&x, &res));
  xdr_destroy(&x);

  mgmt_changes_res got;
  std::memset(&got, 0, sizeof got);
  ::xdrmem_create(&x, bytes.data(), static_cast<u_int>(bytes.size()),
                  XDR_DECODE);
  ASSERT_TRUE(xdr_mgmt_changes_res(&x, &got));
  xdr_destroy(&x);
  const auto& wire = got.mgmt_changes_res_u.result.batches;
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
  ::xdr_free(fn, reinterpret_cast<char*>(&got));
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
  const xdrproc_t fn = reinterpret_cast<xdrproc_t>(xdr_mgmt_cache_stats);
  std::string bytes(::xdr_sizeof(fn, &m), '\0');
  XDR x;
  ::xdrmem_create(&x, bytes.data(), static_cast<u_int>(bytes.size()),
                  XDR_ENCODE);
  ASSERT_TRUE(xdr_mgmt_cache_stats(&x, &m));
  xdr_destroy(&x);
  mgmt_cache_stats got{};
  ::xdrmem_create(&x, bytes.data(), static_cast<u_int>(bytes.size()),
                  XDR_DECODE);
  ASSERT_TRUE(xdr_mgmt_cache_stats(&x, &got));
  xdr_destroy(&x);
  const CacheStats out = DecodeCacheStats(got);
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

}  // namespace
}  // namespace libshare
