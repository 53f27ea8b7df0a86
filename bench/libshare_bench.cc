// libshare_bench: the share-table change paths of issue 2, old and new.
//
//   build/bin/libshare_bench [--benchmark_filter=REGEX]
//
// Legacy/N      the seed algorithm: for each share, open the sharetab file,
//               take a whole-file write lock (fcntl), read and scan it
//               linearly for the path, rewrite the line or append one,
//               close. In-process, so the process start that share(1M) paid
//               per share is NOT counted: the figures flatter the old way.
// BatchAdd/N    Catalog::Apply of one batch adding N shares (plus the group),
//               committed to a SQLite file on disk.
// AddRemove/N   one add and one remove, each its own committed batch, with N
//               shares already loaded; per_op_ms is the mean of one of them.
// ReaderWait/N  BatchAdd/N while a thread calls FindNearest in a loop;
//               max_reader_wait_ms is the longest single call.
// Load/T        Catalog::Open of a store with 15,000 shares in 16 groups,
//               loaded with T threads.
//
// The shared folders are created on a tmpfs (/dev/shm) when there is one,
// because creating and removing 100,000 folders on the disk costs minutes;
// the SQLite file and the legacy sharetab live on disk (TMPDIR or /tmp), so
// commits pay real fsyncs.
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "benchmark/benchmark.h"
#include "libshare/batch.h"
#include "libshare/catalog.h"

namespace {

using libshare::Batch;
using libshare::BatchResult;
using libshare::Catalog;
using libshare::Operation;

std::string MakeTemp(const std::string& base) {
  std::string tmpl = base + "/libshare_bench.XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr) {
    perror(tmpl.c_str());
    exit(1);
  }
  return tmpl;
}

// Folders to share and files to write, removed at exit.
class Env {
 public:
  Env() {
    const char* env = getenv("TMPDIR");
    disk_ = MakeTemp(env && *env ? env : "/tmp");
    struct stat st;
    shares_ = stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode)
                  ? MakeTemp("/dev/shm")
                  : MakeTemp(disk_);
  }
  ~Env() {
    std::error_code ec;
    std::filesystem::remove_all(shares_, ec);
    std::filesystem::remove_all(disk_, ec);
  }

  // The path of share i; its folder exists once Ensure(n > i) ran.
  std::string SharePath(int i) const {
    return shares_ + "/home/u" + std::to_string(i);
  }
  void Ensure(int n) {
    if (made_ == 0) mkdir((shares_ + "/home").c_str(), 0755);
    for (; made_ < n; ++made_) mkdir(SharePath(made_).c_str(), 0755);
  }
  const std::string& disk() const { return disk_; }

  // A fresh database path (the old one's files removed).
  std::string FreshDb(const std::string& name) {
    std::string db = disk_ + "/" + name + ".db";
    for (const char* suffix : {"", "-wal", "-shm"}) {
      unlink((db + suffix).c_str());
    }
    return db;
  }

 private:
  std::string disk_;
  std::string shares_;
  int made_ = 0;
};

// Destroyed at exit, which removes the folders.
Env& TheEnv() {
  static Env env;
  return env;
}

// ---- The seed algorithm.

bool LegacyShare(const std::string& sharetab, const std::string& path,
                 const std::string& options) {
  int fd = open(sharetab.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  struct flock lock = {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  if (fcntl(fd, F_SETLKW, &lock) != 0) {
    close(fd);
    return false;
  }
  struct stat st;
  fstat(fd, &st);
  std::string table(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t got = 0;
  while (got < table.size()) {
    ssize_t n = pread(fd, table.data() + got, table.size() - got,
                      static_cast<off_t>(got));
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  table.resize(got);
  // Linear scan for a line whose first field is the path.
  std::size_t begin = std::string::npos, end = 0;
  for (std::size_t pos = 0; pos < table.size();) {
    std::size_t eol = table.find('\n', pos);
    std::size_t next = eol == std::string::npos ? table.size() : eol + 1;
    std::size_t tab = table.find('\t', pos);
    std::size_t field = tab == std::string::npos || tab > next ? next : tab;
    if (std::string_view(table).substr(pos, field - pos) == path) {
      begin = pos;
      end = next;
      break;
    }
    pos = next;
  }
  std::string line = path + "\t-\tnfs\t" + options + "\t\n";
  bool ok;
  if (begin == std::string::npos) {
    ok = pwrite(fd, line.data(), line.size(), static_cast<off_t>(got)) ==
         static_cast<ssize_t>(line.size());
  } else {
    table.replace(begin, end - begin, line);
    std::string_view rest = std::string_view(table).substr(begin);
    ok = pwrite(fd, rest.data(), rest.size(), static_cast<off_t>(begin)) ==
             static_cast<ssize_t>(rest.size()) &&
         ftruncate(fd, static_cast<off_t>(table.size())) == 0;
  }
  return close(fd) == 0 && ok;
}

void Legacy(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  Env& env = TheEnv();
  env.Ensure(n);
  const std::string sharetab = env.disk() + "/sharetab";
  for (auto _ : state) {
    state.PauseTiming();
    unlink(sharetab.c_str());
    state.ResumeTiming();
    for (int i = 0; i < n; ++i) {
      if (!LegacyShare(sharetab, env.SharePath(i), "rw")) {
        state.SkipWithError("legacy share failed");
        return;
      }
    }
  }
  state.counters["shares"] = n;
}

// ---- The new path.

std::unique_ptr<Catalog> OpenCatalog(const std::string& db, int threads = 1) {
  Catalog::Config config;
  config.db_path = db;
  config.load_threads = threads;
  auto c = Catalog::Open(config);
  if (!c.ok()) {
    fprintf(stderr, "%s\n", std::string(c.status().message()).c_str());
    exit(1);
  }
  return *std::move(c);
}

Operation Add(const std::string& path, const std::string& group) {
  Operation op;
  op.type = Operation::Type::kAddShare;
  op.path = path;
  op.group = group;
  return op;
}

Operation Create(const std::string& group) {
  Operation op;
  op.type = Operation::Type::kCreateGroup;
  op.group = group;
  return op;
}

bool MustApply(Catalog& c, const Batch& b, benchmark::State& state) {
  BatchResult r = c.Apply(b);
  if (r.ok()) return true;
  std::string why =
      r.errors.empty() ? r.commit_error : r.errors.front().message;
  state.SkipWithError(why.c_str());
  return false;
}

// Shares 0..n-1 in `groups` groups, as one batch.
Batch FillBatch(int n, int groups) {
  Env& env = TheEnv();
  env.Ensure(n);
  Batch b;
  for (int g = 0; g < groups; ++g)
    b.ops.push_back(Create("g" + std::to_string(g)));
  for (int i = 0; i < n; ++i) {
    b.ops.push_back(Add(env.SharePath(i), "g" + std::to_string(i % groups)));
  }
  return b;
}

void BatchAdd(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  Batch batch = FillBatch(n, 1);
  for (auto _ : state) {
    state.PauseTiming();
    std::unique_ptr<Catalog> c = OpenCatalog(TheEnv().FreshDb("batch"));
    state.ResumeTiming();
    if (!MustApply(*c, batch, state)) return;
    state.PauseTiming();
    c.reset();
    state.ResumeTiming();
  }
  state.counters["shares"] = n;
}

// How long a reader (FindNearest, as a MOUNT request does) can wait while a
// batch of N adds is applied: the exclusive section that links the batch.
void ReaderWait(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  Batch batch = FillBatch(n, 1);
  double worst_ms = 0;
  for (auto _ : state) {
    state.PauseTiming();
    std::unique_ptr<Catalog> c = OpenCatalog(TheEnv().FreshDb("reader"));
    std::atomic<bool> stop{false};
    double max_ms = 0;
    std::thread reader([&] {
      const std::string probe = TheEnv().SharePath(0) + "/x";
      while (!stop) {
        auto t0 = std::chrono::steady_clock::now();
        benchmark::DoNotOptimize(c->FindNearest(probe));
        double ms = std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - t0)
                        .count();
        max_ms = std::max(max_ms, ms);
      }
    });
    state.ResumeTiming();
    bool ok = MustApply(*c, batch, state);
    state.PauseTiming();
    stop = true;
    reader.join();
    worst_ms = std::max(worst_ms, max_ms);
    c.reset();
    state.ResumeTiming();
    if (!ok) return;
  }
  state.counters["max_reader_wait_ms"] = worst_ms;
}

void AddRemove(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  std::unique_ptr<Catalog> c = OpenCatalog(TheEnv().FreshDb("addremove"));
  if (!MustApply(*c, FillBatch(n, 16), state)) return;
  TheEnv().Ensure(n + 1);
  Batch add, remove;
  add.ops.push_back(Add(TheEnv().SharePath(n), "g0"));
  Operation rm;
  rm.type = Operation::Type::kRemoveShare;
  rm.path = TheEnv().SharePath(n);
  remove.ops.push_back(rm);
  auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    if (!MustApply(*c, add, state) || !MustApply(*c, remove, state)) return;
  }
  double ms = std::chrono::duration<double, std::milli>(
                  std::chrono::steady_clock::now() - start)
                  .count();
  state.counters["loaded"] = n;
  state.counters["per_op_ms"] = ms / (2.0 * state.iterations());
}

void Load(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  static std::string db = [] {
    std::string path = TheEnv().FreshDb("load");
    std::unique_ptr<Catalog> c = OpenCatalog(path);
    Batch b = FillBatch(15000, 16);
    BatchResult r = c->Apply(b);
    if (!r.ok()) {
      fprintf(stderr, "filling the load store failed\n");
      exit(1);
    }
    return path;
  }();
  double load_ms = 0;
  for (auto _ : state) {
    std::unique_ptr<Catalog> c = OpenCatalog(db, threads);
    state.PauseTiming();
    load_ms += c->load_stats().load_ms;
    if (c->share_count() != 15000) state.SkipWithError("wrong share count");
    c.reset();
    state.ResumeTiming();
  }
  state.counters["load_ms"] = load_ms / state.iterations();
}

BENCHMARK(Legacy)
    ->Arg(100)
    ->Arg(2900)
    ->Arg(5000)
    ->Arg(15150)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BatchAdd)
    ->Arg(100)
    ->Arg(2900)
    ->Arg(5000)
    ->Arg(15150)
    ->Iterations(3)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BatchAdd)
    ->Arg(100000)
    ->Iterations(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(ReaderWait)
    ->Arg(15150)
    ->Arg(100000)
    ->Iterations(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(AddRemove)
    ->Arg(1000)
    ->Arg(15000)
    ->Arg(100000)
    ->Iterations(300)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(Load)
    ->Arg(1)
    ->Arg(2)
    ->Arg(4)
    ->Iterations(10)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
