// DESIGN.md's memory budget: at most 300 bytes per cached decision. The
// heap in use (glibc's mallinfo2, chunk headers and the map's buckets
// included) is read before and after 20,000 decisions for distinct
// clients, as a mount storm from 20,000 hosts leaves them.
#include <malloc.h>

#include <cstddef>
#include <cstdio>
#include <cstdint>
#include <memory>

#include "absl/strings/str_cat.h"
#include "authcache/auth_cache.h"
#include "fakes.h"
#include "gtest/gtest.h"

#if defined(__SANITIZE_ADDRESS__)
#define SHAREMGR_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SHAREMGR_ASAN 1
#endif
#endif

namespace authcache {
namespace {

constexpr std::size_t kBudgetPerDecision = 300;  // DESIGN.md

TEST(MemoryBudget, CachedDecisionWithinThreeHundredBytes) {
#ifdef SHAREMGR_ASAN
  GTEST_SKIP() << "the sanitizer's allocator keeps its own accounting";
#endif
  constexpr int kClients = 20000;
  auto resolver = std::make_shared<testing::FakeResolver>();
  AuthCacheConfig config;
  config.max_entries = 2 * kClients;
  AuthCache cache(resolver, config);
  const std::shared_ptr<const libshare::ShareOptions> opts =
      testing::Opts("rw=@10.0.0.0/8");
  Decision d;
  // One decision first, so the shards' first allocations are not counted.
  cache.Check(testing::Ip("10.200.0.1"), opts,
              libshare::SecFlavor::kSys, 1000, &d);
  const std::size_t before = mallinfo2().uordblks;
  for (int i = 0; i < kClients; ++i) {
    const std::string ip =
        absl::StrCat("10.1.", i / 250, ".", i % 250 + 1);
    cache.Check(testing::Ip(ip), opts, libshare::SecFlavor::kSys,
                1000, &d);
    ASSERT_EQ(d.access, Access::kRw) << ip;
  }
  const std::size_t after = mallinfo2().uordblks;
  ASSERT_EQ(cache.counters().entries, static_cast<uint64_t>(kClients) + 1);
  const double per = static_cast<double>(after - before) / kClients;
  RecordProperty("bytes_per_decision", static_cast<int>(per));
  std::printf("heap bytes per cached decision: %.1f (budget %zu)\n", per,
              kBudgetPerDecision);
  EXPECT_LE(per, kBudgetPerDecision);
  EXPECT_GT(per, 0.0);  // the decisions were kept
}

}  // namespace
}  // namespace authcache
