// Kernel-mode answer times over 15,000 shares in one folder (one group),
// timed per call and reported as p50/p99 counters (us). The decisions are
// cached (the first pass fills the cache), as DESIGN.md's target says.
//
//   build/bin/kernel_bench
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "authcache/auth_cache.h"
#include "benchmark/benchmark.h"
#include "kernel/fs_probe.h"
#include "kernel/fsid.h"
#include "kernel/fsid_index.h"
#include "kernel/keyed_work_queue.h"
#include "kernel/responder.h"
#include "kernel/share_tree.h"
#include "libshare/catalog.h"
#include "share_access.h"

namespace {

using namespace sharemgrd::kernel;

constexpr int kShares = 15000;

struct World {
  std::string dir;
  std::unique_ptr<libshare::Catalog> catalog;
  std::unique_ptr<authcache::AuthCache> cache;
  std::unique_ptr<sharemgrd::ShareAccess> access;
  std::unique_ptr<FsProbe> probe = MakeSystemFsProbe();
  ShareTree tree;
  FsidIndex index;
  std::unique_ptr<Responder> responder;
  std::vector<std::string> paths;
  double index_ms = 0;

  World() {
    char tmpl[] = "/dev/shm/kernel_bench.XXXXXX";
    dir = mkdtemp(tmpl);
    libshare::Batch b;
    libshare::Operation group;
    group.type = libshare::Operation::Type::kCreateGroup;
    group.group = "homes";
    b.ops.push_back(group);
    for (int i = 0; i < kShares; ++i) {
      std::string p = absl::StrCat(dir, "/homes/u", i);
      std::filesystem::create_directories(p);
      libshare::Operation op;
      op.type = libshare::Operation::Type::kAddShare;
      op.group = "homes";
      op.path = p;
      op.options = "rw=@10.0.0.0/8,root=10.0.0.1";
      b.ops.push_back(op);
      paths.push_back(p);
    }
    libshare::Catalog::Config config;
    config.db_path = dir + "/shares.db";
    auto c = libshare::Catalog::Open(config);
    catalog = *std::move(c);
    catalog->Apply(b);
    auto r = authcache::MakeFilesResolver("", "");
    cache = std::make_unique<authcache::AuthCache>(
        std::shared_ptr<authcache::Resolver>(*std::move(r)),
        authcache::AuthCacheConfig{});
    access =
        std::make_unique<sharemgrd::ShareAccess>(catalog.get(), cache.get());
    const auto t0 = std::chrono::steady_clock::now();
    for (const std::string& p : paths) {
      index.Set(p, *probe->Probe(p));
      for (const std::string& up : tree.Add(p))
        index.Set(up, *probe->Probe(up));
    }
    index.MarkReady();
    index_ms = std::chrono::duration<double, std::milli>(
                   std::chrono::steady_clock::now() - t0)
                   .count();
    responder = std::make_unique<Responder>(
        ResponderConfig{}, catalog.get(), access.get(), &index, &tree,
        probe.get(), [] { return int64_t{1700000000}; });
  }
  ~World() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

World& TheWorld() {
  static World* w = new World();
  return *w;
}

void Report(benchmark::State& state, std::vector<double>& us) {
  std::sort(us.begin(), us.end());
  if (us.empty()) return;
  state.counters["p50_us"] = us[us.size() / 2];
  state.counters["p99_us"] = us[us.size() * 99 / 100];
}

template <typename F>
void Timed(benchmark::State& state, F f) {
  std::vector<double> us;
  us.reserve(1 << 16);
  size_t i = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(f(i++));
    us.push_back(std::chrono::duration<double, std::micro>(
                     std::chrono::steady_clock::now() - t0)
                     .count());
  }
  Report(state, us);
}

void BM_ExportShareCached(benchmark::State& state) {
  World& w = TheWorld();
  for (const std::string& p : w.paths) w.responder->Export("$10.0.0.1", p);
  Timed(state, [&](size_t i) {
    return w.responder->Export("$10.0.0.1", w.paths[i % w.paths.size()]);
  });
  state.counters["index_build_ms"] = w.index_ms;
}
BENCHMARK(BM_ExportShareCached);

void BM_ExportPseudoDirAbove15000(benchmark::State& state) {
  World& w = TheWorld();
  const std::string homes = w.dir + "/homes";
  Timed(state, [&](size_t) { return w.responder->Export("$10.0.0.1", homes); });
}
BENCHMARK(BM_ExportPseudoDirAbove15000);

// A client that may use none of the 15,000 shares below: the walk visits
// every one (cached decisions); the kernel then caches the negative answer.
void BM_ExportPseudoDirInvisible(benchmark::State& state) {
  World& w = TheWorld();
  const std::string homes = w.dir + "/homes";
  Timed(state,
        [&](size_t) { return w.responder->Export("$192.168.0.1", homes); });
}
BENCHMARK(BM_ExportPseudoDirInvisible)->Iterations(20);

void BM_FhByIndex(benchmark::State& state) {
  World& w = TheWorld();
  std::vector<FhUpcall> ups;
  for (size_t i = 0; i < w.paths.size(); i += 7) {
    std::optional<FsIdentity> id = w.index.IdentityOf(w.paths[i]);
    ups.push_back(
        {"$10.0.0.1", kFsidEncodeDev, *EncodeFsid(kFsidEncodeDev, *id)});
  }
  Timed(state, [&](size_t i) { return w.responder->Fh(ups[i % ups.size()]); });
}
BENCHMARK(BM_FhByIndex);

// The upcall queue alone: 4,096 jobs (a few hundred ns of work each, about
// an answer's formatting) from 64 client keys through a queue of 4
// threads, as the kernel mode's readers hand upcalls to it; per job.
void BM_KeyedQueueUpcalls(benchmark::State& state) {
  KeyedWorkQueue q(4);
  std::vector<std::string> keys;
  for (int k = 0; k < 64; ++k) keys.push_back(absl::StrCat("10.0.", k, ".1"));
  constexpr int kJobs = 4096;
  std::atomic<std::uint64_t> sink{0};
  for (auto _ : state) {
    for (int j = 0; j < kJobs; ++j) {
      q.Submit(keys[j % keys.size()], [&sink, j] {
        std::uint64_t h = j;
        for (int i = 0; i < 64; ++i) h = h * 6364136223846793005u + 1;
        sink.fetch_add(h, std::memory_order_relaxed);
      });
    }
    q.WaitIdle();
  }
  benchmark::DoNotOptimize(sink.load());
  state.SetItemsProcessed(state.iterations() * kJobs);
}
BENCHMARK(BM_KeyedQueueUpcalls)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
