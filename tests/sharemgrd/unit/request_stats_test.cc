#include "request_stats.h"

#include "gtest/gtest.h"

namespace sharemgrd {
namespace {

TEST(LatencyHistogramTest, BucketUpperBoundsContainTheirValues) {
  for (uint64_t v :
       {0ull, 1ull, 7ull, 8ull, 9ull, 100ull, 1000ull, 123456ull}) {
    int b = LatencyHistogram::BucketOf(v);
    EXPECT_GT(LatencyHistogram::BucketUpper(b), static_cast<double>(v)) << v;
    EXPECT_LE(LatencyHistogram::BucketUpper(b), v * 1.125 + 1) << v;
  }
}

TEST(LatencyHistogramTest, PercentilesFollowTheDistribution) {
  LatencyHistogram h;
  for (int i = 0; i < 98; ++i) h.Record(10, false);
  h.Record(1000, true);
  h.Record(1000, false);
  EXPECT_EQ(h.count(), 100u);
  EXPECT_EQ(h.errors(), 1u);
  EXPECT_LE(h.Percentile(0.5), 12);
  EXPECT_GE(h.Percentile(0.99), 1000);
}

TEST(LatencyHistogramTest, EmptyHistogramHasZeroPercentiles) {
  LatencyHistogram h;
  EXPECT_EQ(h.Percentile(0.99), 0);
}

TEST(RequestStatsTest, IndexPastTheNamesIsNotCounted) {
  RequestStats s({"NULL", "MNT"});
  s.Record(2, 10, false);
  s.Record(9, 10, false);
  EXPECT_TRUE(s.Snapshot().empty());
}

TEST(RequestStatsTest, SnapshotListsOnlyCalledProcedures) {
  RequestStats s({"NULL", "MNT"});
  s.Record(1, 5, false);
  std::vector<ProcedureStats> snap = s.Snapshot();
  ASSERT_EQ(snap.size(), 1u);
  EXPECT_EQ(snap[0].name, "MNT");
  EXPECT_EQ(snap[0].count, 1u);
}

}  // namespace
}  // namespace sharemgrd
