// AuthCache benchmarks (issue 3). Google Benchmark reports means; the
// DESIGN.md target for a hit is a p99, so the hit benchmarks time every
// call themselves and report p50/p99/p999 as counters (ns).
//
//   build/bin/authcache_bench
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "authcache/auth_cache.h"
#include "benchmark/benchmark.h"

namespace {

using authcache::Access;
using authcache::AuthCache;
using authcache::AuthCacheConfig;
using authcache::Decision;
using libshare::IpAddress;
using libshare::SecFlavor;

// Answers at once (or after `stall` for one address): every address
// a.b.c.d is named "h-a-b-c-d.example.com", and that name maps back.
class InstantResolver : public authcache::Resolver {
 public:
  absl::StatusOr<std::vector<std::string>> NamesOf(
      const IpAddress& address) override {
    calls.fetch_add(1, std::memory_order_relaxed);
    if (stall_address.has_value() && address == *stall_address) {
      absl::SleepFor(stall);
    }
    return std::vector<std::string>{absl::StrCat(
        "h-", absl::StrReplaceAll(address.ToString(), {{".", "-"}}),
        ".example.com")};
  }
  absl::StatusOr<std::vector<IpAddress>> AddressesOf(
      std::string_view name) override {
    calls.fetch_add(1, std::memory_order_relaxed);
    std::string n(name);
    if (n.rfind("h-", 0) != 0) return std::vector<IpAddress>{};
    std::string dotted = n.substr(2, n.find(".example.com") - 2);
    std::optional<IpAddress> a =
        IpAddress::Parse(absl::StrReplaceAll(dotted, {{"-", "."}}));
    if (!a) return std::vector<IpAddress>{};
    return std::vector<IpAddress>{*a};
  }
  absl::StatusOr<bool> InNetgroup(std::string_view, std::string_view) override {
    calls.fetch_add(1, std::memory_order_relaxed);
    return false;
  }

  std::atomic<uint64_t> calls{0};
  std::optional<IpAddress> stall_address;
  absl::Duration stall;
};

IpAddress Client(uint32_t i) { return IpAddress::FromV4((10u << 24) | i); }

// Compiled options, as a share holds them (the cache keeps decisions per
// options object).
std::shared_ptr<const libshare::ShareOptions> Options(const char* text) {
  absl::StatusOr<libshare::ShareOptions> o = libshare::ParseOptions(text);
  if (!o.ok()) abort();
  return std::make_shared<const libshare::ShareOptions>(*std::move(o));
}

// Sets p50/p99/p999 counters (ns) from one thread's per-call samples; with
// several threads the counters are the mean over threads (kAvgThreads).
void ReportPercentiles(benchmark::State& state, std::vector<int64_t>& ns) {
  if (ns.empty()) return;
  std::sort(ns.begin(), ns.end());
  auto at = [&](double q) {
    size_t k = static_cast<size_t>(q * static_cast<double>(ns.size()));
    return static_cast<double>(ns[std::min(ns.size() - 1, k)]);
  };
  state.counters["p50_ns"] =
      benchmark::Counter(at(0.50), benchmark::Counter::kAvgThreads);
  state.counters["p99_ns"] =
      benchmark::Counter(at(0.99), benchmark::Counter::kAvgThreads);
  state.counters["p999_ns"] =
      benchmark::Counter(at(0.999), benchmark::Counter::kAvgThreads);
}

constexpr int kHitClients = 1024;

// Shared between the threads of one multi-threaded run.
std::unique_ptr<AuthCache> g_cache;
std::shared_ptr<InstantResolver> g_resolver;
const std::shared_ptr<const libshare::ShareOptions>& HitOptions() {
  static const auto* o = new std::shared_ptr<const libshare::ShareOptions>(
      Options("rw=.example.com,root=admin"));
  return *o;
}

// Check on a hit. Each thread reuses one Decision, as a server worker
// would; the cached clients were resolved (names, forward check) before.
void BM_CheckHit(benchmark::State& state) {
  if (state.thread_index() == 0) {
    g_resolver = std::make_shared<InstantResolver>();
    g_cache = std::make_unique<AuthCache>(g_resolver, AuthCacheConfig{});
    for (uint32_t i = 0; i < kHitClients; ++i) {
      g_cache->Check(Client(i), HitOptions(), SecFlavor::kSys, 1000);
    }
  }
  std::vector<int64_t> lat;
  lat.reserve(1 << 22);
  Decision d;
  uint32_t i = static_cast<uint32_t>(state.thread_index()) * 97;
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    g_cache->Check(Client(i % kHitClients), HitOptions(), SecFlavor::kSys,
                   1000, &d);
    auto t1 = std::chrono::steady_clock::now();
    if (lat.size() < lat.capacity()) {
      lat.push_back(
          std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0)
              .count());
    }
    benchmark::DoNotOptimize(d.access);
    ++i;
  }
  ReportPercentiles(state, lat);
  if (state.thread_index() == 0) {
    if (d.access != Access::kRw) state.SkipWithError("hit gave no rw");
    authcache::AuthCacheCounters c = g_cache->counters();
    state.counters["hits"] = static_cast<double>(c.hits);
    state.counters["lookups"] = static_cast<double>(c.lookups);
  }
}
BENCHMARK(BM_CheckHit)->Threads(1)->Threads(2)->UseRealTime();

// The same, returning the Decision by value (allocates for long strings).
void BM_CheckHitByValue(benchmark::State& state) {
  auto resolver = std::make_shared<InstantResolver>();
  AuthCache cache(resolver, AuthCacheConfig{});
  for (uint32_t i = 0; i < kHitClients; ++i) {
    cache.Check(Client(i), HitOptions(), SecFlavor::kSys, 1000);
  }
  uint32_t i = 0;
  for (auto _ : state) {
    Decision d = cache.Check(Client(i++ % kHitClients), HitOptions(),
                             SecFlavor::kSys, 1000);
    benchmark::DoNotOptimize(d);
  }
}
BENCHMARK(BM_CheckHitByValue);

// A miss with an instant resolver: names, forward check, evaluation and
// two inserts (decision, name answer) per call, through the lookup pool.
void BM_CheckMissInstantResolver(benchmark::State& state) {
  auto resolver = std::make_shared<InstantResolver>();
  AuthCacheConfig config;
  config.max_entries = 1 << 22;
  AuthCache cache(resolver, config);
  uint32_t i = 0;
  Decision d;
  for (auto _ : state) {
    cache.Check(Client(i++), HitOptions(), SecFlavor::kSys, 1000, &d);
  }
  state.counters["resolver_calls_per_miss"] =
      static_cast<double>(resolver->calls.load()) / static_cast<double>(i);
}
BENCHMARK(BM_CheckMissInstantResolver);

// A miss of a share granted to a network (no names needed), as each
// client's first MNT of a share in a mount storm: the entry made, the
// lists evaluated, the decision interned.
void BM_CheckMissNetworkList(benchmark::State& state) {
  auto resolver = std::make_shared<InstantResolver>();
  AuthCacheConfig config;
  config.max_entries = 1 << 22;
  AuthCache cache(resolver, config);
  const std::shared_ptr<const libshare::ShareOptions> opts =
      Options("rw=@10.0.0.0/8");
  uint32_t i = 0;
  Decision d;
  for (auto _ : state) {
    cache.Check(Client(i++), opts, SecFlavor::kSys, 1000, &d);
  }
  if (d.access != Access::kRw) state.SkipWithError("not granted rw");
}
BENCHMARK(BM_CheckMissNetworkList);

// 20,000 distinct clients, all unknown, asked by 64 threads at once; then
// the same storm again (all cached).
void BM_Storm20000(benchmark::State& state) {
  constexpr uint32_t kClients = 20000;
  constexpr int kThreads = 64;
  for (auto _ : state) {
    auto resolver = std::make_shared<InstantResolver>();
    AuthCache cache(resolver, AuthCacheConfig{});
    auto storm = [&] {
      std::atomic<uint32_t> next{0};
      std::vector<std::thread> threads;
      for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&] {
          Decision d;
          for (uint32_t i = next++; i < kClients; i = next++) {
            cache.Check(Client(i), HitOptions(), SecFlavor::kSys, 1000,
                        &d);
          }
        });
      }
      for (std::thread& t : threads) t.join();
    };
    auto t0 = std::chrono::steady_clock::now();
    storm();
    auto t1 = std::chrono::steady_clock::now();
    const uint64_t first_calls = resolver->calls.load();
    storm();
    auto t2 = std::chrono::steady_clock::now();
    state.counters["first_storm_ms"] =
        std::chrono::duration<double, std::milli>(t1 - t0).count();
    state.counters["repeat_storm_ms"] =
        std::chrono::duration<double, std::milli>(t2 - t1).count();
    state.counters["resolver_calls_per_host"] =
        static_cast<double>(first_calls) / kClients;
    state.counters["repeat_resolver_calls"] =
        static_cast<double>(resolver->calls.load() - first_calls);
  }
}
BENCHMARK(BM_Storm20000)
    ->Iterations(1)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// One pass of DropUnused over a cache of state.range(0) decisions, none of
// them dead: what a change that removes or changes shares pays for the
// cache (the pass InvalidateShares made before decisions were kept per
// options object cost the same).
void BM_DropUnusedFullCache(benchmark::State& state) {
  auto resolver = std::make_shared<InstantResolver>();
  AuthCacheConfig config;
  config.max_entries = static_cast<std::size_t>(state.range(0)) * 2;
  AuthCache cache(resolver, config);
  const std::shared_ptr<const libshare::ShareOptions> opts =
      Options("rw=@10.0.0.0/8");
  Decision d;
  for (uint32_t i = 0; i < static_cast<uint32_t>(state.range(0)); ++i) {
    cache.Check(Client(i), opts, SecFlavor::kSys, 1000, &d);
  }
  std::size_t dropped = 0;
  for (auto _ : state) dropped += cache.DropUnused();
  if (dropped != 0) state.SkipWithError("dropped live decisions");
}
BENCHMARK(BM_DropUnusedFullCache)
    ->Arg(15000)
    ->Arg(100000)
    ->Unit(benchmark::kMillisecond);

// Hits for cached clients while one client's lookup stalls for 2 s
// (DESIGN.md: "resolver stalled 20 s for one client: other clients' p99
// unchanged"; 2 s here to keep the run short).
void BM_CheckHitWhileOneLookupStalls(benchmark::State& state) {
  auto resolver = std::make_shared<InstantResolver>();
  AuthCache cache(resolver, AuthCacheConfig{});
  for (uint32_t i = 0; i < kHitClients; ++i) {
    cache.Check(Client(i), HitOptions(), SecFlavor::kSys, 1000);
  }
  resolver->stall_address = Client(1u << 20);
  resolver->stall = absl::Seconds(2);
  std::atomic<bool> stalled_done{false};
  std::thread stalled([&] {
    cache.Check(Client(1u << 20), HitOptions(), SecFlavor::kSys, 1000);
    stalled_done = true;
  });
  absl::SleepFor(absl::Milliseconds(20));
  std::vector<int64_t> lat;
  lat.reserve(1 << 22);
  Decision d;
  uint32_t i = 0;
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    cache.Check(Client(i++ % kHitClients), HitOptions(), SecFlavor::kSys,
                1000, &d);
    auto t1 = std::chrono::steady_clock::now();
    if (lat.size() < lat.capacity()) {
      lat.push_back(
          std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0)
              .count());
    }
  }
  state.counters["stalled_call_still_running"] =
      resolver->calls.load() > 0 && !stalled_done.load() ? 1 : 0;
  stalled.join();
  ReportPercentiles(state, lat);
}
BENCHMARK(BM_CheckHitWhileOneLookupStalls)->Iterations(500000);

}  // namespace

int main(int argc, char** argv) {
  // Debian's Abseil is built with Mutex deadlock detection on, which costs
  // a graph update per lock; a server turns it off the same way.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
