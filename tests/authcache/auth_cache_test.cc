// The authorization cache: coalescing, stale-while-refresh, timeouts,
// reclaim and generations, against a fake resolver and a fake clock.
#include "authcache/auth_cache.h"

#include <atomic>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "fakes.h"
#include "gtest/gtest.h"

namespace authcache {
namespace {

using libshare::IpAddress;
using libshare::SecFlavor;
using libshare::ShareOptions;
using testing::FakeClock;
using testing::FakeResolver;
using testing::Ip;
using testing::Opts;

class AuthCacheTest : public ::testing::Test {
 protected:
  AuthCacheTest() : resolver_(std::make_shared<FakeResolver>()) {
    config_.positive_ttl = absl::Minutes(1);
    config_.negative_ttl = absl::Minutes(1);
    config_.failure_ttl = absl::Seconds(10);
    config_.hard_limit = absl::Minutes(10);
    // Long, so that storms on a slow (sanitized, loaded) machine never
    // time out; the timeout tests set their own short one.
    config_.lookup_timeout = absl::Seconds(60);
    config_.lookup_threads = 4;
    config_.shards = 8;
  }
  ~AuthCacheTest() override {
    resolver_->OpenGate();
    cache_.reset();
  }
  AuthCache& Cache() {
    if (!cache_)
      cache_ = std::make_unique<AuthCache>(resolver_, config_, &clock_);
    return *cache_;
  }
  Decision CheckSys(std::string_view addr,
                    const std::shared_ptr<const ShareOptions>& opts,
                    uint32_t uid = 1000) {
    return Cache().Check(Ip(addr), opts, SecFlavor::kSys, uid);
  }

  std::shared_ptr<FakeResolver> resolver_;
  FakeClock clock_;
  AuthCacheConfig config_;
  std::unique_ptr<AuthCache> cache_;
};

TEST_F(AuthCacheTest, ConfirmedNameGetsAccess) {
  resolver_->AddHost("10.0.0.5", "trusted.example.com");
  Decision d = CheckSys("10.0.0.5", Opts("rw=trusted.example.com"));
  EXPECT_EQ(d.access, Access::kRw) << d.reason;
}

TEST_F(AuthCacheTest, ForgedPtrGetsNothing) {
  resolver_->AddHost("10.0.0.5", "trusted.example.com");
  // The attacker's PTR claims the trusted name; forward says otherwise.
  resolver_->AddPtr("10.9.9.9", "trusted.example.com");
  Decision d = CheckSys("10.9.9.9", Opts("rw=trusted.example.com"));
  EXPECT_EQ(d.access, Access::kNone) << d.reason;
  EXPECT_EQ(resolver_->forward_calls("trusted.example.com"), 1);
}

TEST_F(AuthCacheTest, ForgedPtrIsNotANetgroupMember) {
  resolver_->AddHost("10.0.0.5", "trusted");
  resolver_->AddPtr("10.9.9.9", "trusted");
  resolver_->AddToNetgroup("ng", "trusted");
  Decision d = CheckSys("10.9.9.9", Opts("rw=ng"));
  EXPECT_EQ(d.access, Access::kNone) << d.reason;
  // The name was a member, so its forward records were asked (and gave
  // another address).
  EXPECT_EQ(resolver_->forward_calls("trusted"), 1);
}

TEST_F(AuthCacheTest, PtrNamesAreComparedInLowerCase) {
  resolver_->AddPtr("10.0.0.5", "Host1.Example.COM");
  resolver_->AddForward("host1.example.com", "10.0.0.5");
  Decision d = CheckSys("10.0.0.5", Opts("rw=host1.example.com"));
  EXPECT_EQ(d.access, Access::kRw) << d.reason;
}

TEST_F(AuthCacheTest, HitMakesNoResolverCall) {
  resolver_->AddHost("10.0.0.5", "h1");
  std::shared_ptr<const ShareOptions> opts = Opts("rw=h1");
  CheckSys("10.0.0.5", opts);
  const int calls = resolver_->total_calls();
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(CheckSys("10.0.0.5", opts).access, Access::kRw);
  }
  EXPECT_EQ(resolver_->total_calls(), calls);
  EXPECT_EQ(Cache().counters().hits, 10u);
}

TEST_F(AuthCacheTest, AddressOnlyListsMakeNoResolverCall) {
  CheckSys("10.0.0.5", Opts("rw=@10.0.0.0/8,root=10.0.0.5"), 0);
  EXPECT_EQ(resolver_->total_calls(), 0);
  EXPECT_EQ(Cache().counters().lookups, 0u);
}

TEST_F(AuthCacheTest, CheckIntoReusedDecisionGivesSameAnswer) {
  std::shared_ptr<const ShareOptions> opts = Opts("rw=@10.0.0.0/8");
  Decision d;
  Cache().Check(Ip("10.1.1.1"), opts, SecFlavor::kSys, 1000, &d);
  Cache().Check(Ip("10.1.1.1"), opts, SecFlavor::kSys, 1000, &d);
  EXPECT_EQ(d.access, Access::kRw);
  EXPECT_EQ(d.entry, "@10.0.0.0/8");
}

TEST_F(AuthCacheTest, RootDecisionIsKeptApartFromNonRoot) {
  std::shared_ptr<const ShareOptions> opts = Opts("rw,root=10.0.0.5");
  EXPECT_FALSE(CheckSys("10.0.0.5", opts, 1000).root);
  EXPECT_TRUE(CheckSys("10.0.0.5", opts, 0).root);
  EXPECT_FALSE(CheckSys("10.0.0.5", opts, 1000).root);
}

// Options that change are a new object: never answered from the decision
// of another object, equal or not.
TEST_F(AuthCacheTest, OtherOptionsAreNeverAnsweredFromAnotherObjectsDecision) {
  std::shared_ptr<const ShareOptions> rw = Opts("rw");
  std::shared_ptr<const ShareOptions> ro = Opts("ro");
  std::shared_ptr<const ShareOptions> other = Opts("rw=10.0.0.6");
  EXPECT_EQ(CheckSys("10.0.0.5", rw).access, Access::kRw);
  EXPECT_EQ(CheckSys("10.0.0.5", ro).access, Access::kRo);
  EXPECT_EQ(CheckSys("10.0.0.5", other).access, Access::kNone);
  EXPECT_EQ(CheckSys("10.0.0.5", rw).access, Access::kRw);
  EXPECT_EQ(Cache().counters().misses, 3u);
  EXPECT_EQ(Cache().counters().hits, 1u);
  // Equal options in another object: decided again.
  EXPECT_EQ(CheckSys("10.0.0.5", Opts("rw")).access, Access::kRw);
  EXPECT_EQ(Cache().counters().misses, 4u);
}

// The shares that hold one options object (a group's, for its shares with
// no options of their own) share the decisions: a client's first check
// of another of them is a hit and asks the resolver nothing.
TEST_F(AuthCacheTest, OneOptionsObjectIsOneDecisionPerClient) {
  resolver_->AddHost("10.0.0.5", "h1");
  std::shared_ptr<const ShareOptions> group = Opts("rw=h1");
  const std::shared_ptr<const ShareOptions> share_a = group;
  const std::shared_ptr<const ShareOptions> share_b = group;
  EXPECT_EQ(CheckSys("10.0.0.5", share_a).access, Access::kRw);
  const int calls = resolver_->total_calls();
  EXPECT_EQ(CheckSys("10.0.0.5", share_b).access, Access::kRw);
  EXPECT_EQ(resolver_->total_calls(), calls);
  EXPECT_EQ(Cache().counters().hits, 1u);
  EXPECT_EQ(Cache().counters().entries, 3u);  // the decision, names, confirm
}

// Options freed and others made at their address: the entry of the dead
// ones is not a hit for the new ones.
TEST_F(AuthCacheTest, OptionsAtAFreedAddressAreDecidedAgain) {
  alignas(ShareOptions) unsigned char place[sizeof(ShareOptions)];
  auto at_place = [&](std::string_view text) {
    ShareOptions* o = new (place) ShareOptions(*Opts(text));
    // Destroys the object and leaves the place for the next one.
    return std::shared_ptr<const ShareOptions>(
        o, [](const ShareOptions* p) { p->~ShareOptions(); });
  };
  std::shared_ptr<const ShareOptions> first = at_place("rw");
  EXPECT_EQ(CheckSys("10.0.0.5", first).access, Access::kRw);
  first.reset();
  std::shared_ptr<const ShareOptions> second = at_place("rw=10.0.0.6");
  ASSERT_EQ(static_cast<const void*>(second.get()),
            static_cast<const void*>(place));
  EXPECT_EQ(CheckSys("10.0.0.5", second).access, Access::kNone);
  EXPECT_EQ(Cache().counters().misses, 2u);
  EXPECT_EQ(Cache().counters().hits, 0u);
  EXPECT_EQ(Cache().counters().entries, 1u);  // the dead one went
  EXPECT_EQ(CheckSys("10.0.0.5", second).access, Access::kNone);
  EXPECT_EQ(Cache().counters().hits, 1u);
  second.reset();
  Cache().Flush();
}

TEST_F(AuthCacheTest, DropUnusedDropsDecisionsOfOptionsNoShareHolds) {
  std::shared_ptr<const ShareOptions> removed = Opts("rw");
  std::shared_ptr<const ShareOptions> kept = Opts("ro");
  CheckSys("10.0.0.5", removed);
  CheckSys("10.0.0.6", removed);
  CheckSys("10.0.0.5", kept);
  ASSERT_EQ(Cache().counters().entries, 3u);
  EXPECT_EQ(Cache().DropUnused(), 0u);
  removed.reset();
  EXPECT_EQ(Cache().DropUnused(), 2u);
  EXPECT_EQ(Cache().counters().entries, 1u);
  EXPECT_EQ(CheckSys("10.0.0.5", kept).access, Access::kRo);
  EXPECT_EQ(Cache().counters().hits, 1u);
  EXPECT_EQ(Cache().counters().misses, 3u);
}

// The sweep holds a shard's lock for a few hundred buckets at a time; it
// still finds every dead decision of a shard of thousands.
TEST_F(AuthCacheTest, DropUnusedSweepsABigShardPieceByPiece) {
  config_.shards = 1;
  config_.max_entries = 20000;
  std::shared_ptr<const ShareOptions> removed = Opts("rw=@10.0.0.0/8");
  std::shared_ptr<const ShareOptions> kept = Opts("ro=@10.0.0.0/8");
  for (uint32_t i = 0; i < 5000; ++i) {
    const IpAddress a = IpAddress::FromV4((10u << 24) | i);
    Cache().Check(a, removed, SecFlavor::kSys, 1000);
    Cache().Check(a, kept, SecFlavor::kSys, 1000);
  }
  ASSERT_EQ(Cache().counters().entries, 10000u);
  removed.reset();
  EXPECT_EQ(Cache().DropUnused(), 5000u);
  EXPECT_EQ(Cache().counters().entries, 5000u);
  EXPECT_EQ(Cache().DropUnused(), 0u);
}

TEST_F(AuthCacheTest, FlushDropsEverything) {
  resolver_->AddHost("10.0.0.5", "h1");
  CheckSys("10.0.0.5", Opts("rw=h1"));
  ASSERT_GT(Cache().counters().entries, 0u);
  Cache().Flush();
  EXPECT_EQ(Cache().counters().entries, 0u);
}

TEST_F(AuthCacheTest, UnknownHostStormMakesOneCallPerLookupKind) {
  resolver_->AddHost("10.0.0.5", "h1");
  resolver_->AddToNetgroup("farm", "h1");
  resolver_->CloseGate("10.0.0.5", absl::Seconds(5));
  std::shared_ptr<const ShareOptions> opts = Opts("rw=farm");
  Cache();  // built before the threads share it
  std::vector<std::thread> threads;
  std::atomic<int> rw{0};
  for (int i = 0; i < 512; ++i) {
    threads.emplace_back([&] {
      if (CheckSys("10.0.0.5", opts).access == Access::kRw) ++rw;
    });
  }
  // Hold the one lookup until the callers have piled up behind it.
  resolver_->WaitUntilGateEntered();
  absl::SleepFor(absl::Milliseconds(50));
  resolver_->OpenGate();
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(rw.load(), 512);
  EXPECT_EQ(resolver_->names_calls("10.0.0.5"), 1);
  EXPECT_EQ(resolver_->forward_calls("h1"), 1);
  EXPECT_EQ(resolver_->netgroup_calls("h1"), 1);
  EXPECT_GT(Cache().counters().coalesced, 0u);
}

TEST_F(AuthCacheTest, DistinctHostStormMakesOneCallPerHostAndKind) {
  std::shared_ptr<const ShareOptions> opts = Opts("rw=farm");
  for (int i = 0; i < 512; ++i) {
    std::string addr = absl::StrCat("10.1.", i / 256, ".", i % 256);
    std::string name = absl::StrCat("node", i);
    resolver_->AddHost(addr, name);
    resolver_->AddToNetgroup("farm", name);
  }
  Cache();  // built before the threads share it
  std::vector<std::thread> threads;
  std::atomic<int> rw{0};
  for (int i = 0; i < 512; ++i) {
    threads.emplace_back([&, i] {
      std::string addr = absl::StrCat("10.1.", i / 256, ".", i % 256);
      if (CheckSys(addr, opts).access == Access::kRw) ++rw;
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(rw.load(), 512);
  for (int i = 0; i < 512; ++i) {
    std::string addr = absl::StrCat("10.1.", i / 256, ".", i % 256);
    std::string name = absl::StrCat("node", i);
    ASSERT_EQ(resolver_->names_calls(addr), 1) << addr;
    ASSERT_EQ(resolver_->forward_calls(name), 1) << name;
    ASSERT_EQ(resolver_->netgroup_calls(name), 1) << name;
  }
  // The storm again: every answer is cached.
  const int calls = resolver_->total_calls();
  for (int i = 0; i < 512; ++i) {
    CheckSys(absl::StrCat("10.1.", i / 256, ".", i % 256), opts);
  }
  EXPECT_EQ(resolver_->total_calls(), calls);
}

// Decisions are held once per shard and shared by the entries that decided
// the same: dropping and re-deciding some of them leaves the others' answers
// (and reasons) intact.
TEST_F(AuthCacheTest, SharedDecisionsSurviveDropsOfOtherEntries) {
  std::shared_ptr<const ShareOptions> opts = Opts("rw=@10.3.0.0/16,ro=@10.4.0.0/16");
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 200; ++i) {
      Decision rw = CheckSys(absl::StrCat("10.3.0.", i), opts);
      Decision ro = CheckSys(absl::StrCat("10.4.0.", i), opts);
      ASSERT_EQ(rw.access, Access::kRw);
      ASSERT_EQ(rw.reason, "client matched @10.3.0.0/16 in rw=");
      ASSERT_EQ(ro.access, Access::kRo);
      ASSERT_EQ(ro.entry, "@10.4.0.0/16");
    }
    if (round == 0) Cache().Flush();
    if (round == 1) Cache().Reclaim(50);
  }
}

// The storm of DESIGN.md's table: 512 nodes, each with a full name and a
// short alias in DNS, the full names in a netgroup. At most 3 resolver calls
// per host (PTR, the forward check of the one name the netgroup needs, the
// netgroup), none when the storm repeats.
TEST_F(AuthCacheTest, NetgroupStormMakesAtMostThreeCallsPerHostNoneOnRepeat) {
  std::shared_ptr<const ShareOptions> opts = Opts("rw=farm");
  auto addr_of = [](int i) {
    return absl::StrCat("10.2.", i / 256, ".", i % 256);
  };
  for (int i = 0; i < 512; ++i) {
    std::string full = absl::StrCat("node", i, ".farm.example");
    resolver_->AddHost(addr_of(i), full);
    resolver_->AddHost(addr_of(i), absl::StrCat("node", i));  // short alias
    // Every 4th node is not in the netgroup: both its names are asked.
    if (i % 4 != 3) resolver_->AddToNetgroup("farm", full);
  }
  Cache();  // built before the threads share it
  std::vector<std::thread> threads;
  std::atomic<int> rw{0};
  for (int i = 0; i < 512; ++i) {
    threads.emplace_back([&, i] {
      if (CheckSys(addr_of(i), opts).access == Access::kRw) ++rw;
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(rw.load(), 384);
  for (int i = 0; i < 512; ++i) {
    const std::string full = absl::StrCat("node", i, ".farm.example");
    const std::string alias = absl::StrCat("node", i);
    const int calls = resolver_->names_calls(addr_of(i)) +
                      resolver_->forward_calls(full) +
                      resolver_->forward_calls(alias) +
                      resolver_->netgroup_calls(full) +
                      resolver_->netgroup_calls(alias);
    ASSERT_LE(calls, 3) << addr_of(i);
    // The alias matches no entry: it is never looked up forward.
    ASSERT_EQ(resolver_->forward_calls(alias), 0) << alias;
  }
  EXPECT_LE(resolver_->total_calls(), 3 * 512);
  const int calls = resolver_->total_calls();
  for (int i = 0; i < 512; ++i) CheckSys(addr_of(i), opts);
  EXPECT_EQ(resolver_->total_calls(), calls);
}

// A name in the netgroup whose forward records do not give the client's
// address back (PTR alone) is not a member, even when another PTR name of
// the client is confirmed.
TEST_F(AuthCacheTest, UnconfirmedPtrNameInNetgroupGrantsNothing) {
  resolver_->AddHost("10.0.0.7", "plain.example");
  resolver_->AddPtr("10.0.0.7", "trusted.example");
  resolver_->AddForward("trusted.example", "10.0.0.99");
  resolver_->AddToNetgroup("ng", "trusted.example");
  Decision d = CheckSys("10.0.0.7", Opts("rw=ng:trusted.example"));
  EXPECT_EQ(d.access, Access::kNone) << d.reason;
  // Confirmed once (for the host entry), not again for the netgroup.
  EXPECT_EQ(resolver_->forward_calls("trusted.example"), 1);
  EXPECT_EQ(resolver_->forward_calls("plain.example"), 0);
}

// A suffix list confirms only the names with that suffix.
TEST_F(AuthCacheTest, SuffixListConfirmsOnlyNamesWithTheSuffix) {
  resolver_->AddHost("10.0.0.8", "h8.lab.example");
  resolver_->AddHost("10.0.0.8", "h8");
  Decision d = CheckSys("10.0.0.8", Opts("rw=.lab.example"));
  EXPECT_EQ(d.access, Access::kRw) << d.reason;
  EXPECT_EQ(resolver_->forward_calls("h8.lab.example"), 1);
  EXPECT_EQ(resolver_->forward_calls("h8"), 0);
}

TEST_F(AuthCacheTest, StalledLookupDoesNotDelayCachedHostOrOtherMisses) {
  config_.lookup_timeout = absl::Milliseconds(300);
  resolver_->AddHost("10.0.0.1", "hosta");
  resolver_->AddHost("10.0.0.2", "hostb");
  resolver_->AddHost("10.0.0.3", "hostc");
  std::shared_ptr<const ShareOptions> opts = Opts("rw=hosta:hostb:hostc");
  ASSERT_EQ(CheckSys("10.0.0.2", opts).access, Access::kRw);  // B cached

  resolver_->CloseGate("10.0.0.1", absl::Seconds(2));
  Decision a;
  absl::Notification a_done;
  std::thread ta([&] {
    a = CheckSys("10.0.0.1", opts);
    a_done.Notify();
  });
  resolver_->WaitUntilGateEntered();
  for (int i = 0; i < 1000; ++i) {
    ASSERT_EQ(CheckSys("10.0.0.2", opts).access, Access::kRw);
  }
  // A miss for another host is answered by another pool thread.
  EXPECT_EQ(CheckSys("10.0.0.3", opts).access, Access::kRw);
  EXPECT_TRUE(resolver_->GateHolding()) << "A's lookup should still stall";
  EXPECT_FALSE(a_done.HasBeenNotified());

  // A's caller gives up at the timeout, while the resolver still stalls.
  a_done.WaitForNotification();
  EXPECT_TRUE(resolver_->GateHolding());
  ta.join();
  EXPECT_EQ(a.access, Access::kNone);
  EXPECT_TRUE(a.lookup_failed);
  EXPECT_EQ(Cache().counters().timeouts, 1u);
  resolver_->OpenGate();
}

TEST_F(AuthCacheTest, TimeoutIsCachedOnlyForFailureTtl) {
  config_.lookup_timeout = absl::Milliseconds(100);
  resolver_->AddHost("10.0.0.1", "hosta");
  std::shared_ptr<const ShareOptions> opts = Opts("rw=hosta");
  resolver_->CloseGate("10.0.0.1", absl::Seconds(2));
  EXPECT_TRUE(CheckSys("10.0.0.1", opts).lookup_failed);
  // Within failure_ttl: the failure is answered from the cache.
  EXPECT_TRUE(CheckSys("10.0.0.1", opts).lookup_failed);
  EXPECT_EQ(resolver_->names_calls("10.0.0.1"), 1);
  resolver_->OpenGate();
  Cache().WaitForBackgroundWork();
  resolver_->CloseGate("10.0.0.99", absl::Seconds(1));  // ungate 10.0.0.1
  clock_.Advance(config_.failure_ttl + absl::Seconds(1));
  Decision d = CheckSys("10.0.0.1", opts);
  EXPECT_EQ(d.access, Access::kRw) << d.reason;
  EXPECT_EQ(resolver_->names_calls("10.0.0.1"), 2);
}

TEST_F(AuthCacheTest, FailureIsNeverCachedAsPositive) {
  resolver_->AddHost("10.0.0.1", "hosta");
  resolver_->SetFailing(true);
  std::shared_ptr<const ShareOptions> opts = Opts("rw=hosta");
  EXPECT_EQ(CheckSys("10.0.0.1", opts).access, Access::kNone);
  EXPECT_EQ(Cache().counters().lookup_failures, 1u);
  resolver_->SetFailing(false);
  clock_.Advance(config_.failure_ttl + absl::Seconds(1));
  EXPECT_EQ(CheckSys("10.0.0.1", opts).access, Access::kRw);
}

TEST_F(AuthCacheTest, StaleAnswerServedWhileOneRefreshRuns) {
  resolver_->AddHost("10.0.0.1", "hosta");
  std::shared_ptr<const ShareOptions> opts = Opts("rw=hosta");
  ASSERT_EQ(CheckSys("10.0.0.1", opts).access, Access::kRw);
  // The name changes; the refresh will see it, but is held at the gate.
  resolver_->ClearHosts();
  resolver_->AddHost("10.0.0.1", "renamed");
  resolver_->CloseGate("10.0.0.1", absl::Seconds(5));
  clock_.Advance(config_.positive_ttl + absl::Seconds(1));
  for (int i = 0; i < 50; ++i) {
    ASSERT_EQ(CheckSys("10.0.0.1", opts).access, Access::kRw);
  }
  resolver_->OpenGate();
  Cache().WaitForBackgroundWork();
  EXPECT_EQ(resolver_->names_calls("10.0.0.1"), 2);
  EXPECT_GE(Cache().counters().refreshes, 1u);
  EXPECT_EQ(CheckSys("10.0.0.1", opts).access, Access::kNone);
  EXPECT_EQ(resolver_->names_calls("10.0.0.1"), 2);
}

TEST_F(AuthCacheTest, ConcurrentStaleChecksStartOneRefresh) {
  resolver_->AddHost("10.0.0.1", "hosta");
  std::shared_ptr<const ShareOptions> opts = Opts("rw=hosta");
  ASSERT_EQ(CheckSys("10.0.0.1", opts).access, Access::kRw);
  resolver_->CloseGate("10.0.0.1", absl::Seconds(5));
  clock_.Advance(config_.positive_ttl + absl::Seconds(1));
  std::vector<std::thread> threads;
  std::atomic<int> rw{0};
  for (int t = 0; t < 32; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 20; ++i) {
        if (CheckSys("10.0.0.1", opts).access == Access::kRw) ++rw;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(rw.load(), 32 * 20);
  resolver_->OpenGate();
  Cache().WaitForBackgroundWork();
  EXPECT_EQ(resolver_->names_calls("10.0.0.1"), 2);
}

TEST_F(AuthCacheTest, FailedRefreshKeepsOldAnswerUntilHardLimit) {
  resolver_->AddHost("10.0.0.1", "hosta");
  std::shared_ptr<const ShareOptions> opts = Opts("rw=hosta");
  ASSERT_EQ(CheckSys("10.0.0.1", opts).access, Access::kRw);
  resolver_->SetFailing(true);
  clock_.Advance(config_.positive_ttl + absl::Seconds(1));
  EXPECT_EQ(CheckSys("10.0.0.1", opts).access, Access::kRw);
  Cache().WaitForBackgroundWork();
  EXPECT_EQ(CheckSys("10.0.0.1", opts).access, Access::kRw);
  clock_.Advance(config_.hard_limit / 2);
  EXPECT_EQ(CheckSys("10.0.0.1", opts).access, Access::kRw);
  Cache().WaitForBackgroundWork();
  EXPECT_EQ(CheckSys("10.0.0.1", opts).access, Access::kRw);
  clock_.Advance(config_.hard_limit);
  Decision d = CheckSys("10.0.0.1", opts);
  EXPECT_EQ(d.access, Access::kNone);
  EXPECT_TRUE(d.lookup_failed);
}

TEST_F(AuthCacheTest, ReclaimKeepsEntriesWithinBudgetAndRecentSurvive) {
  config_.max_entries = 1000;
  config_.shards = 16;
  std::shared_ptr<const ShareOptions> opts = Opts("rw=@10.0.0.0/8");
  auto addr = [](int i) {
    return IpAddress::FromV4((10u << 24) | static_cast<uint32_t>(i));
  };
  for (int i = 0; i < 100000; ++i) {
    Cache().Check(addr(i), opts, SecFlavor::kSys, 1000);
    if (i % 10000 == 0) {
      ASSERT_LE(Cache().counters().entries, 1000u);
    }
  }
  AuthCacheCounters before = Cache().counters();
  EXPECT_LE(before.entries, 1000u);
  EXPECT_GE(before.reclaims, 99000u);
  for (int i = 100000 - 100; i < 100000; ++i) {
    Cache().Check(addr(i), opts, SecFlavor::kSys, 1000);
  }
  AuthCacheCounters after = Cache().counters();
  EXPECT_EQ(after.misses, before.misses);
  EXPECT_EQ(after.hits, before.hits + 100);
}

TEST_F(AuthCacheTest, ABoundBelowTheShardCountIsKeptExactly) {
  config_.max_entries = 3;
  config_.shards = 16;
  std::shared_ptr<const ShareOptions> opts = Opts("rw=@10.0.0.0/8");
  for (int i = 0; i < 50; ++i) {
    Cache().Check(IpAddress::FromV4((10u << 24) | static_cast<uint32_t>(i)),
                  opts, SecFlavor::kSys, 1000);
    ASSERT_LE(Cache().counters().entries, 3u) << "after client " << i;
  }
  EXPECT_EQ(Cache().counters().entries, 3u);
}

TEST_F(AuthCacheTest, ReclaimOfNameAnswersKeepsRecentHostsResolved) {
  config_.max_entries = 1000;
  config_.shards = 16;
  std::shared_ptr<const ShareOptions> opts = Opts("rw=.example.com");
  auto addr = [](int i) {
    return absl::StrCat("10.2.", i / 256, ".", i % 256);
  };
  for (int i = 0; i < 3000; ++i) {
    resolver_->AddHost(addr(i), absl::StrCat("n", i, ".example.com"));
  }
  for (int i = 0; i < 3000; ++i) CheckSys(addr(i), opts);
  EXPECT_LE(Cache().counters().entries, 1000u);
  const int calls = resolver_->total_calls();
  for (int i = 3000 - 50; i < 3000; ++i) {
    EXPECT_EQ(CheckSys(addr(i), opts).access, Access::kRw);
  }
  EXPECT_EQ(resolver_->total_calls(), calls);
}

TEST_F(AuthCacheTest, ExplicitReclaimDropsToTarget) {
  std::shared_ptr<const ShareOptions> opts = Opts("rw");
  for (int i = 0; i < 200; ++i) {
    CheckSys(absl::StrCat("10.3.0.", i), opts);
  }
  std::size_t dropped = Cache().Reclaim(40);
  EXPECT_LE(Cache().counters().entries, 40u);
  EXPECT_EQ(dropped, 200u - Cache().counters().entries);
}

TEST_F(AuthCacheTest, AddressOfResolvesNamesAndLiterals) {
  resolver_->AddHost("10.0.0.5", "h1");
  absl::StatusOr<IpAddress> a = Cache().AddressOf("h1");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(*a, Ip("10.0.0.5"));
  absl::StatusOr<IpAddress> lit = Cache().AddressOf("fe80::1");
  ASSERT_TRUE(lit.ok());
  EXPECT_EQ(*lit, Ip("fe80::1"));
  absl::StatusOr<IpAddress> none = Cache().AddressOf("nosuchhost");
  EXPECT_EQ(none.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(none.status().message().find("nosuchhost"), std::string::npos);
}

TEST_F(AuthCacheTest, ReloadResolverFlushesAnswers) {
  resolver_->AddHost("10.0.0.5", "h1");
  CheckSys("10.0.0.5", Opts("rw=h1"));
  ASSERT_TRUE(Cache().ReloadResolver().ok());
  EXPECT_EQ(Cache().counters().entries, 0u);
}

}  // namespace
}  // namespace authcache
