// A cache hit through Check(..., Decision* out) allocates nothing: the hit
// path is meant to stay well under a microsecond (DESIGN.md), and an
// allocation per call would also contend on the allocator across threads.
#include <cstdlib>
#include <memory>
#include <new>

#include "authcache/auth_cache.h"
#include "fakes.h"
#include "gtest/gtest.h"

namespace {
thread_local bool g_counting = false;
thread_local int g_allocations = 0;
}  // namespace

// Replaced for the whole test binary; counts only while a test asks. GCC
// sees the malloc/free pairing through inlining and warns; it is intended.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void* operator new(std::size_t n) {
  if (g_counting) ++g_allocations;
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace authcache {
namespace {

TEST(HitAllocation, ReusedDecisionHitAllocatesNothing) {
  auto resolver = std::make_shared<testing::FakeResolver>();
  resolver->AddHost("10.0.0.1", "host1.example.com");
  AuthCache cache(resolver, AuthCacheConfig{});
  libshare::ShareOptions opts =
      testing::Opts("rw=.example.com,root=host1.example.com");
  const libshare::IpAddress client = testing::Ip("10.0.0.1");
  Decision d;
  cache.Check(client, 1, 1, opts, libshare::SecFlavor::kSys, 0, &d);
  ASSERT_EQ(d.access, Access::kRw);
  cache.Check(client, 1, 1, opts, libshare::SecFlavor::kSys, 0, &d);

  g_allocations = 0;
  g_counting = true;
  for (int i = 0; i < 100; ++i) {
    cache.Check(client, 1, 1, opts, libshare::SecFlavor::kSys, 0, &d);
  }
  g_counting = false;
  EXPECT_EQ(g_allocations, 0);
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
  libshare::ShareOptions opts = testing::Opts("rw=@10.0.0.0/8");
  Decision d;
  cache.Check(testing::Ip("10.0.0.1"), 1, 1, opts, libshare::SecFlavor::kSys,
              1000, &d);
  ASSERT_EQ(d.access, Access::kRw);

  g_allocations = 0;
  g_counting = true;
  cache.Check(testing::Ip("10.0.0.2"), 1, 1, opts, libshare::SecFlavor::kSys,
              1000, &d);
  g_counting = false;
  EXPECT_EQ(d.access, Access::kRw);
  EXPECT_EQ(cache.counters().misses, 2u);
  // The entry (one block with its shared_ptr count), its map node, and the
  // reason ("client matched @10.0.0.0/8 in rw=", past the short-string
  // buffer).
  EXPECT_LE(g_allocations, 3);
}

}  // namespace
}  // namespace authcache
