// A cache hit through Check(..., Decision* out) allocates nothing: the hit
// path is meant to stay well under a microsecond (DESIGN.md), and an
// allocation per call would also contend on the allocator across threads.
#include <memory>

#include "allocation_count.h"
#include "authcache/auth_cache.h"
#include "fakes.h"
#include "gtest/gtest.h"

namespace authcache {
namespace {

using ::sharemgr_testing::StartCountingAllocations;
using ::sharemgr_testing::StopCountingAllocations;

// The counter the tests below rely on sees an allocation at all.
TEST(HitAllocation, CounterSeesAnAllocation) {
  StartCountingAllocations();
  auto p = std::make_unique<int>(1);
  EXPECT_EQ(StopCountingAllocations(), 1);
  EXPECT_EQ(*p, 1);
}

TEST(HitAllocation, ReusedDecisionHitAllocatesNothing) {
  auto resolver = std::make_shared<testing::FakeResolver>();
  resolver->AddHost("10.0.0.1", "host1.example.com");
  AuthCache cache(resolver, AuthCacheConfig{});
  std::shared_ptr<const libshare::ShareOptions> opts =
      testing::Opts("rw=.example.com,root=host1.example.com");
  const libshare::IpAddress client = testing::Ip("10.0.0.1");
  Decision d;
  cache.Check(client, opts, libshare::SecFlavor::kSys, 0, &d);
  ASSERT_EQ(d.access, Access::kRw);
  cache.Check(client, opts, libshare::SecFlavor::kSys, 0, &d);

  StartCountingAllocations();
  for (int i = 0; i < 100; ++i) {
    cache.Check(client, opts, libshare::SecFlavor::kSys, 0, &d);
  }
  EXPECT_EQ(StopCountingAllocations(), 0);
  EXPECT_TRUE(d.root);
}

// A miss whose decision the shard already holds (a new client of a share
// granted by the same entry, as in a mount storm) allocates its entry and
// map node, and the reason text evaluation spells: not a Flight that no
// other caller waits for, nor a copy of the decision to intern it.
TEST(HitAllocation, MissOfAHeldDecisionAllocatesTheEntryAndTheReason) {
  AuthCacheConfig config;
  config.shards = 1;  // both clients' decisions in one shard
  AuthCache cache(std::make_shared<testing::FakeResolver>(), config);
  std::shared_ptr<const libshare::ShareOptions> opts =
      testing::Opts("rw=@10.0.0.0/8");
  Decision d;
  cache.Check(testing::Ip("10.0.0.1"), opts, libshare::SecFlavor::kSys,
              1000, &d);
  ASSERT_EQ(d.access, Access::kRw);

  StartCountingAllocations();
  cache.Check(testing::Ip("10.0.0.2"), opts, libshare::SecFlavor::kSys,
              1000, &d);
  const int allocations = StopCountingAllocations();
  EXPECT_EQ(d.access, Access::kRw);
  EXPECT_EQ(cache.counters().misses, 2u);
  // The entry (one block with its shared_ptr count), its map node, and the
  // reason ("client matched @10.0.0.0/8 in rw=", past the short-string
  // buffer).
  EXPECT_LE(allocations, 3);
}

}  // namespace
}  // namespace authcache
