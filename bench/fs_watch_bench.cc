// fs_watch_bench: cost of "shares follow their file systems" at 15,000
// shares (bench/fs_watch.cmake says what is measured). Each measured
// operation has a baseline of the syscalls it cannot avoid, so the report
// is a ratio taken in one run:
//   BM_ParseMountinfo  vs BM_ReadMountinfo  (read the same file only)
//   BM_ProbeAll        vs BM_LstatEveryShare (lstat of every share path)
//   BM_LiveCheck       vs BM_LstatOneShare   (one decision's extra check)
// The mountinfo is synthetic (one zfs mount per share, as a 15,000-dataset
// home server has); the shares are real folders on the machine's /tmp.
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "authcache/auth_cache.h"
#include "benchmark/benchmark.h"
#include "fs_watch.h"
#include "libshare/batch.h"
#include "libshare/catalog.h"

namespace {

constexpr int kShares = 15000;

struct Fixture {
  std::string dir;
  std::string mountinfo;
  std::vector<std::string> paths;
  std::unique_ptr<libshare::Catalog> catalog;
  std::unique_ptr<sharemgrd::FsWatch> watch;

  Fixture() {
    char tmpl[] = "/tmp/fs_watch_bench_XXXXXX";
    char* made = mkdtemp(tmpl);
    if (made == nullptr) abort();
    char* real = realpath(made, nullptr);
    dir = real;
    free(real);
    static std::string* const kDir = new std::string(dir);
    atexit([] { (void)!system(("rm -rf '" + *kDir + "'").c_str()); });
    mkdir((dir + "/home").c_str(), 0755);
    std::ostringstream mi;
    mi << "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n";
    libshare::Batch b;
    libshare::Operation g;
    g.type = libshare::Operation::Type::kCreateGroup;
    g.group = "homes";
    b.ops.push_back(g);
    for (int i = 0; i < kShares; ++i) {
      std::string p = dir + "/home/u" + std::to_string(i);
      mkdir(p.c_str(), 0755);
      paths.push_back(p);
      mi << (100 + i) << " 40 0:" << (100 + i) << " / " << p
         << " rw,relatime shared:" << (100 + i) << " - zfs tank/home/u" << i
         << " rw,xattr,noacl\n";
      libshare::Operation s;
      s.type = libshare::Operation::Type::kAddShare;
      s.group = "homes";
      s.path = p;
      b.ops.push_back(s);
    }
    mountinfo = dir + "/mountinfo";
    std::ofstream(mountinfo) << mi.str();
    auto c = libshare::Catalog::Open({dir + "/db", 2});
    if (!c.ok()) abort();
    catalog = std::move(*c);
    if (!catalog->Apply(b).ok()) abort();
    sharemgrd::FsWatch::Config config;
    config.mountinfo = mountinfo;
    auto w =
        sharemgrd::FsWatch::Open(config, catalog.get(), catalog->fs_places());
    if (!w.ok()) abort();
    watch = std::move(*w);
  }
};

Fixture& F() {
  static Fixture* f = new Fixture();
  return *f;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void BM_ReadMountinfo(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(ReadFile(F().mountinfo));
}
BENCHMARK(BM_ReadMountinfo)->Unit(benchmark::kMillisecond);

void BM_ParseMountinfo(benchmark::State& state) {
  for (auto _ : state) {
    libshare::MountTable m =
        libshare::MountTable::Parse(ReadFile(F().mountinfo));
    benchmark::DoNotOptimize(m.size());
  }
}
BENCHMARK(BM_ParseMountinfo)->Unit(benchmark::kMillisecond);

void BM_LstatEveryShare(benchmark::State& state) {
  for (auto _ : state) {
    for (const std::string& p : F().paths) {
      struct stat st;
      benchmark::DoNotOptimize(lstat(p.c_str(), &st));
    }
  }
}
BENCHMARK(BM_LstatEveryShare)->Unit(benchmark::kMillisecond);

void BM_ProbeAll(benchmark::State& state) {
  for (auto _ : state) F().watch->ProbeAll();
}
BENCHMARK(BM_ProbeAll)->Unit(benchmark::kMillisecond);

void BM_LstatOneShare(benchmark::State& state) {
  std::size_t i = 0;
  for (auto _ : state) {
    struct stat st;
    benchmark::DoNotOptimize(
        lstat(F().paths[i++ % F().paths.size()].c_str(), &st));
  }
}
BENCHMARK(BM_LstatOneShare);

void BM_LiveCheck(benchmark::State& state) {
  std::size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        F().watch->NotServed(F().paths[i++ % F().paths.size()], true));
  }
}
BENCHMARK(BM_LiveCheck);

}  // namespace

// The fixture (15,000 folders and shares) is built before any timing.
int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  F();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
