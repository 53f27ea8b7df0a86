// scale_probe: the floors and small timings of scripts/bench --scale
// (issue 12), each printed as one JSON line on stdout.
//
//   scale_probe sqlite-floor DB N PREFIX [ROWS]
//       One SQLite transaction inserting N rows into a table shaped like
//       the store's shares table (schema 5: same columns, keyed by id
//       alone; WAL, synchronous=FULL) through one prepared statement of
//       ROWS rows (default 1; the store writes 32), then COMMIT: what any
//       store of N shares must pay at least.
//   scale_probe stat-floor PATHS_FILE ROUNDS
//       Per path of the file: one statx, and the daemon's check (openat2
//       refusing symlinks, statx of the descriptor, close); then one
//       listing (getdents64) of each run of paths' parent: the least "the
//       paths exist and are directories" can cost is the cheaper of the
//       statx and the listing. Alternated ROUNDS times.
//   scale_probe spawn ROUNDS CMD_A... -- CMD_B...
//       Process start to exit of CMD_A and CMD_B (posix_spawn, waitpid),
//       alternated ROUNDS times, output to /dev/null.
//   scale_probe client-add SOCKET PATH GROUP ROUNDS
//       Through the client API on one connection: add PATH to GROUP, then
//       remove it, ROUNDS times; the time of each call.
//   scale_probe fault-cost MIB ROUNDS
//       Per 4 KiB page of a fresh anonymous mapping of MIB MiB: the first
//       write taking one page fault each, against one madvise
//       (MADV_POPULATE_WRITE) making the whole mapping resident and then
//       the same writes, and against the mapping's whole huge pages made
//       huge pages first (MADV_COLLAPSE after one page of each is written;
//       "huge_per_page_us" is null where the kernel cannot); alternated
//       ROUNDS times. The cost a batch's heap pays per page touched.
//   scale_probe populate-cost MIB ROUNDS IDLE_S
//       A fresh region of MIB MiB made ready for a batch three ways: its
//       pages faulted in by its writes, a libshare::BatchArena (mmap with
//       MAP_POPULATE), and as huge pages (from a huge page's boundary,
//       MADV_HUGEPAGE, then MADV_POPULATE_WRITE); each after IDLE_S
//       seconds of sleep, so
//       that the memory freed before has gone back to the host (free page
//       reporting) as it has for an idle daemon; alternated ROUNDS times.
//       Each time includes the mapping and one write per page afterwards
//       (what a first write costs where the pages are not resident or not
//       huge pages).
//
// Times are medians (and p90, max) in microseconds unless named _ms.
#include <fcntl.h>
#include <linux/openat2.h>
#include <spawn.h>
#include <sqlite3.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "libshare/batch.h"
#include "libshare/batch_arena.h"
#include "libshare/client.h"

extern char** environ;

namespace {

double NowUs() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Summary {
  double p50 = 0, p90 = 0, max = 0;
};

Summary Summarize(std::vector<double> v) {
  Summary s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.p50 = v[v.size() / 2];
  s.p90 = v[std::min(v.size() - 1, v.size() * 9 / 10)];
  s.max = v.back();
  return s;
}

int Fail(const std::string& what) {
  std::fprintf(stderr, "scale_probe: %s\n", what.c_str());
  return 1;
}

bool Exec(sqlite3* db, const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::fprintf(stderr, "scale_probe: %s: %s\n", sql, err ? err : "?");
    sqlite3_free(err);
    return false;
  }
  return true;
}

int SqliteFloor(const std::string& path, long n, const std::string& prefix,
                long rows) {
  ::unlink(path.c_str());
  ::unlink((path + "-wal").c_str());
  ::unlink((path + "-shm").c_str());
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) return Fail("open " + path);
  // The store's pragmas (libshare/src/store.cc), its page size first.
  if (!Exec(db, "PRAGMA page_size=16384") ||
      !Exec(db, "PRAGMA journal_mode=WAL") ||
      !Exec(db, "PRAGMA synchronous=FULL") ||
      !Exec(db, "PRAGMA cache_size=-32768") ||
      !Exec(db,
            "CREATE TABLE shares(id INTEGER PRIMARY KEY, path TEXT NOT NULL, "
            "\"group\" TEXT NOT NULL, resource TEXT NOT NULL DEFAULT "
            "'', description TEXT NOT NULL DEFAULT '', options TEXT NOT NULL "
            "DEFAULT '', dev INTEGER NOT NULL, fs_mount TEXT, fs_type TEXT, "
            "fs_source TEXT, replaces_group INTEGER NOT NULL DEFAULT 0);")) {
    return 1;
  }
  // Rows made before the clock starts: what is timed is SQLite.
  std::vector<std::string> paths(n), groups(n);
  for (long i = 0; i < n; ++i) {
    char b[32];
    std::snprintf(b, sizeof b, "/u%06ld", i);
    paths[i] = prefix + b;
    std::snprintf(b, sizeof b, "g%02ld", i * 16 / n);
    groups[i] = b;
  }
  // One statement of `rows` rows, and one of a single row for the rest.
  auto prepare = [&](long k, sqlite3_stmt** out) {
    std::string sql =
        "INSERT INTO shares(id, path, \"group\", resource, description, "
        "options, dev) VALUES";
    for (long r = 0; r < k; ++r) sql += r == 0 ? "(?,?,?,?,?,?,?)" : ",(?,?,?,?,?,?,?)";
    return sqlite3_prepare_v3(db, sql.c_str(), -1, SQLITE_PREPARE_PERSISTENT,
                              out, nullptr) == SQLITE_OK;
  };
  sqlite3_stmt* many = nullptr;
  sqlite3_stmt* one = nullptr;
  if (!prepare(rows, &many) || !prepare(1, &one)) return Fail("prepare");
  const double t0 = NowUs();
  if (!Exec(db, "BEGIN IMMEDIATE")) return 1;
  for (long i = 0; i < n;) {
    sqlite3_stmt* st = n - i >= rows ? many : one;
    const long k = st == many ? rows : 1;
    for (long r = 0; r < k; ++r, ++i) {
      const int b = static_cast<int>(r) * 7;
      sqlite3_bind_int64(st, b + 1, i + 1);
      sqlite3_bind_text(st, b + 2, paths[i].data(), paths[i].size(),
                        SQLITE_STATIC);
      sqlite3_bind_text(st, b + 3, groups[i].data(), groups[i].size(),
                        SQLITE_STATIC);
      sqlite3_bind_text(st, b + 4, "", 0, SQLITE_STATIC);
      sqlite3_bind_text(st, b + 5, "", 0, SQLITE_STATIC);
      sqlite3_bind_text(st, b + 6, "", 0, SQLITE_STATIC);
      sqlite3_bind_int64(st, b + 7, 42);
    }
    if (sqlite3_step(st) != SQLITE_DONE) return Fail("insert");
    sqlite3_reset(st);
  }
  const double t1 = NowUs();
  if (!Exec(db, "COMMIT")) return 1;
  const double t2 = NowUs();
  sqlite3_finalize(many);
  sqlite3_finalize(one);
  sqlite3_close(db);
  std::printf(
      "{\"rows\": %ld, \"ms\": %.2f, \"insert_ms\": %.2f, \"commit_ms\": "
      "%.2f, \"rows_per_s\": %.0f}\n",
      n, (t2 - t0) / 1000, (t1 - t0) / 1000, (t2 - t1) / 1000,
      n / ((t2 - t0) / 1e6));
  ::unlink(path.c_str());
  ::unlink((path + "-wal").c_str());
  ::unlink((path + "-shm").c_str());
  return 0;
}

int StatFloor(const std::string& file, int rounds) {
  std::ifstream in(file);
  std::vector<std::string> paths;
  for (std::string l; std::getline(in, l);) {
    if (!l.empty()) paths.push_back(l);
  }
  if (paths.empty()) return Fail(file + ": no paths");
  std::vector<double> statx_ms, check_ms, list_ms;
  std::size_t list_entries = 0;
  for (int r = 0; r < rounds; ++r) {
    double t0 = NowUs();
    for (const std::string& p : paths) {
      struct statx sx;
      if (::statx(AT_FDCWD, p.c_str(), AT_SYMLINK_NOFOLLOW, STATX_TYPE, &sx) !=
              0 ||
          !S_ISDIR(sx.stx_mode)) {
        return Fail(p + ": not a directory");
      }
    }
    double t1 = NowUs();
    for (const std::string& p : paths) {
      open_how how{};
      how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
      how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
      long fd = ::syscall(SYS_openat2, AT_FDCWD, p.c_str(), &how, sizeof how);
      if (fd < 0) return Fail(p + ": openat2 failed");
      struct statx sx;
      if (::statx(static_cast<int>(fd), "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW,
                  STATX_TYPE | STATX_MODE | STATX_INO | 0x1000U, &sx) != 0) {
        return Fail(p + ": statx failed");
      }
      ::close(static_cast<int>(fd));
    }
    double t2 = NowUs();
    // The other way to know the paths are directories: one listing of each
    // parent (the daemon's checker lists a parent of many siblings).
    std::size_t entries = 0;
    std::string last;
    std::vector<char> buf(64 << 10);
    for (const std::string& p : paths) {
      const std::string parent = p.substr(0, std::max<std::size_t>(
                                                 p.rfind('/'), 1));
      if (parent == last) continue;
      last = parent;
      const int fd = ::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (fd < 0) return Fail(parent + ": cannot open");
      for (;;) {
        const long n = ::syscall(SYS_getdents64, fd, buf.data(), buf.size());
        if (n < 0) return Fail(parent + ": getdents64 failed");
        if (n == 0) break;
        for (long off = 0; off < n;) {
          unsigned short len;
          std::memcpy(&len, buf.data() + off + 16, sizeof len);
          off += len;
          ++entries;
        }
      }
      ::close(fd);
    }
    double t3 = NowUs();
    statx_ms.push_back((t1 - t0) / 1000);
    check_ms.push_back((t2 - t1) / 1000);
    list_ms.push_back((t3 - t2) / 1000);
    list_entries = entries;
  }
  Summary a = Summarize(statx_ms), b = Summarize(check_ms),
          c = Summarize(list_ms);
  std::printf(
      "{\"paths\": %zu, \"rounds\": %d, \"statx_ms\": %.2f, "
      "\"statx_us_per_path\": %.3f, \"check_ms\": %.2f, "
      "\"check_us_per_path\": %.3f, \"list_ms\": %.2f, "
      "\"list_entries\": %zu}\n",
      paths.size(), rounds, a.p50, a.p50 * 1000 / paths.size(), b.p50,
      b.p50 * 1000 / paths.size(), c.p50, list_entries);
  return 0;
}

double SpawnOnce(const std::vector<char*>& argv) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  const double t0 = NowUs();
  pid_t pid;
  if (posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ) != 0) {
    posix_spawn_file_actions_destroy(&fa);
    return -1;
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  const double t1 = NowUs();
  posix_spawn_file_actions_destroy(&fa);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
  return t1 - t0;
}

int Spawn(int rounds, std::vector<char*> a, std::vector<char*> b) {
  a.push_back(nullptr);
  b.push_back(nullptr);
  std::vector<double> ta, tb;
  for (int r = 0; r < rounds; ++r) {
    // ABBA order, so neither command always runs right after the other.
    const bool a_first = r % 2 == 0;
    for (int k = 0; k < 2; ++k) {
      const bool run_a = (k == 0) == a_first;
      double t = SpawnOnce(run_a ? a : b);
      if (t < 0) return Fail(std::string(run_a ? a[0] : b[0]) + ": failed");
      (run_a ? ta : tb).push_back(t);
    }
  }
  Summary sa = Summarize(ta), sb = Summarize(tb);
  std::printf(
      "{\"rounds\": %d, \"a_p50_us\": %.1f, \"a_p90_us\": %.1f, "
      "\"b_p50_us\": %.1f, \"b_p90_us\": %.1f, \"ratio_p50\": %.3f}\n",
      rounds, sa.p50, sa.p90, sb.p50, sb.p90, sa.p50 / sb.p50);
  return 0;
}

int ClientAdd(const std::string& socket, const std::string& path,
              const std::string& group, int rounds) {
  auto c = libshare::Client::Connect(socket);
  if (!c.ok()) return Fail(std::string(c.status().message()));
  std::vector<double> adds, removes;
  for (int r = 0; r < rounds; ++r) {
    for (int k = 0; k < 2; ++k) {
      libshare::Batch b;
      libshare::Operation& op = b.ops.emplace_back();
      op.type = k == 0 ? libshare::Operation::Type::kAddShare
                       : libshare::Operation::Type::kRemoveShare;
      op.path = path;
      op.group = group;
      b.origin = "scale_probe";
      const double t0 = NowUs();
      auto res = (*c)->Apply(b);
      const double t1 = NowUs();
      if (!res.ok()) return Fail(std::string(res.status().message()));
      if (!res->ok()) {
        return Fail(res->errors.empty() ? res->commit_error
                                        : res->errors[0].message);
      }
      (k == 0 ? adds : removes).push_back(t1 - t0);
    }
  }
  Summary a = Summarize(adds), m = Summarize(removes);
  std::printf(
      "{\"rounds\": %d, \"add_p50_us\": %.1f, \"add_p90_us\": %.1f, "
      "\"add_max_us\": %.1f, \"remove_p50_us\": %.1f, \"remove_p90_us\": "
      "%.1f, \"remove_max_us\": %.1f}\n",
      rounds, a.p50, a.p90, a.max, m.p50, m.p90, m.max);
  return 0;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif

// A fresh mapping of `bytes` that starts on a huge page (mapped with one
// spare); `*m` is the mapping, to unmap with `bytes + huge`. Null (said
// on stderr) if it cannot be mapped.
volatile char* MapFromHugePage(std::size_t bytes, std::size_t huge, void** m) {
  *m = ::mmap(nullptr, bytes + huge, PROT_READ | PROT_WRITE,
              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (*m == MAP_FAILED) {
    std::perror("scale_probe: mmap");
    return nullptr;
  }
  return reinterpret_cast<volatile char*>(
      (reinterpret_cast<std::uintptr_t>(*m) + huge - 1) & ~(huge - 1));
}

int FaultCost(long mib, int rounds) {
  if (mib < 1 || rounds < 1) return 2;
  const std::size_t bytes = static_cast<std::size_t>(mib) << 20;
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const std::size_t huge = std::size_t{2} << 20;
  const double pages = static_cast<double>(bytes / page);
  enum Way { kFault, kPopulate, kHuge };
  std::vector<double> ns_per_page[3];
  bool huge_ok = true;
  for (int r = 0; r < 3 * rounds; ++r) {
    const Way way = static_cast<Way>(r % 3);
    if (way == kHuge && !huge_ok) continue;
    // The huge way's range starts on a huge page: mapped with one spare.
    void* m = nullptr;
    volatile char* p = MapFromHugePage(bytes, huge, &m);
    if (p == nullptr) return 1;
    auto* start = const_cast<char*>(p);
    const auto t0 = std::chrono::steady_clock::now();
    if (way == kPopulate && ::madvise(start, bytes, MADV_POPULATE_WRITE) != 0) {
      std::perror("scale_probe: madvise(MADV_POPULATE_WRITE)");
      return 1;
    }
    if (way == kHuge) {
      for (std::size_t i = 0; i < bytes; i += huge) p[i] = 1;
      huge_ok = ::madvise(start, bytes, MADV_COLLAPSE) == 0;
    }
    for (std::size_t i = 0; i < bytes; i += page) p[i] = 1;
    const double ns = std::chrono::duration<double, std::nano>(
                          std::chrono::steady_clock::now() - t0)
                          .count();
    if (way != kHuge || huge_ok) ns_per_page[way].push_back(ns / pages);
    ::munmap(m, bytes + huge);
  }
  Summary f = Summarize(ns_per_page[kFault]);
  Summary q = Summarize(ns_per_page[kPopulate]);
  char huge_us[32] = "null";
  if (!ns_per_page[kHuge].empty()) {
    std::snprintf(huge_us, sizeof huge_us, "%.3f",
                  Summarize(ns_per_page[kHuge]).p50 / 1000);
  }
  std::printf(
      "{\"mib\": %ld, \"rounds\": %d, \"fault_per_page_us\": %.2f, "
      "\"populated_per_page_us\": %.2f, \"ratio\": %.1f, "
      "\"huge_per_page_us\": %s}\n",
      mib, rounds, f.p50 / 1000, q.p50 / 1000, f.p50 / q.p50, huge_us);
  return 0;
}

int PopulateCost(long mib, int rounds, int idle_s) {
  if (mib < 1 || rounds < 1 || idle_s < 0) return 2;
  const std::size_t bytes = static_cast<std::size_t>(mib) << 20;
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const std::size_t huge = std::size_t{2} << 20;
  enum Way { kFault, kArena, kHuge };
  std::vector<double> ms[3];
  const auto since = [](std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(
               std::chrono::steady_clock::now() - t0)
        .count();
  };
  for (int r = 0; r < 3 * rounds; ++r) {
    // Alternated, and in the other order every other round.
    const int k = r % 3;
    const auto way = static_cast<Way>((r / 3) % 2 == 0 ? k : 2 - k);
    ::sleep(static_cast<unsigned>(idle_s));
    const auto t0 = std::chrono::steady_clock::now();
    if (way == kArena) {
      libshare::BatchArena arena(bytes);
      if (arena.mapped() < bytes) {
        std::fprintf(stderr, "scale_probe: BatchArena mapped nothing\n");
        return 1;
      }
      auto* p =
          static_cast<volatile char*>(arena.resource()->allocate(bytes, page));
      for (std::size_t i = 0; i < bytes; i += page) p[i] = 2;
      ms[way].push_back(since(t0));
      continue;
    }
    void* m = nullptr;
    volatile char* p = MapFromHugePage(bytes, huge, &m);
    if (p == nullptr) return 1;
    if (way == kHuge) {
      auto* start = const_cast<char*>(p);
      (void)::madvise(start, bytes, MADV_HUGEPAGE);
      if (::madvise(start, bytes, MADV_POPULATE_WRITE) != 0) {
        std::perror("scale_probe: madvise(MADV_POPULATE_WRITE)");
        return 1;
      }
    }
    for (std::size_t i = 0; i < bytes; i += page) p[i] = 2;
    ms[way].push_back(since(t0));
    ::munmap(m, bytes + huge);
  }
  const double fault = Summarize(ms[kFault]).p50;
  const double arena = Summarize(ms[kArena]).p50;
  const double huge_ms = Summarize(ms[kHuge]).p50;
  std::printf(
      "{\"mib\": %ld, \"rounds\": %d, \"idle_s\": %d, \"fault_ms\": %.1f, "
      "\"batch_arena_ms\": %.1f, \"huge_pages_ms\": %.1f, "
      "\"fault_over_arena\": %.2f, \"huge_pages_over_arena\": %.2f}\n",
      mib, rounds, idle_s, fault, arena, huge_ms, fault / arena,
      huge_ms / arena);
  return 0;
}

int Usage() {
  std::fprintf(stderr,
               "usage: scale_probe sqlite-floor DB N PREFIX [ROWS]\n"
               "       scale_probe stat-floor PATHS_FILE ROUNDS\n"
               "       scale_probe spawn ROUNDS CMD_A... -- CMD_B...\n"
               "       scale_probe client-add SOCKET PATH GROUP ROUNDS\n"
               "       scale_probe fault-cost MIB ROUNDS\n"
               "       scale_probe populate-cost MIB ROUNDS IDLE_S\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return Usage();
  const std::string cmd = argv[1];
  if (cmd == "sqlite-floor" && (argc == 5 || argc == 6)) {
    const long rows = argc == 6 ? std::atol(argv[5]) : 1;
    if (rows < 1 || rows > 256) return Usage();
    return SqliteFloor(argv[2], std::atol(argv[3]), argv[4], rows);
  }
  if (cmd == "stat-floor" && argc == 4) {
    return StatFloor(argv[2], std::atoi(argv[3]));
  }
  if (cmd == "client-add" && argc == 6) {
    return ClientAdd(argv[2], argv[3], argv[4], std::atoi(argv[5]));
  }
  if (cmd == "fault-cost" && argc == 4) {
    return FaultCost(std::atol(argv[2]), std::atoi(argv[3]));
  }
  if (cmd == "populate-cost" && argc == 5) {
    return PopulateCost(std::atol(argv[2]), std::atoi(argv[3]),
                        std::atoi(argv[4]));
  }
  if (cmd == "spawn" && argc >= 6) {
    std::vector<char*> a, b;
    bool second = false;
    for (int i = 3; i < argc; ++i) {
      if (!second && std::string(argv[i]) == "--") {
        second = true;
        continue;
      }
      (second ? b : a).push_back(argv[i]);
    }
    if (a.empty() || b.empty()) return Usage();
    return Spawn(std::atoi(argv[2]), a, b);
  }
  return Usage();
}
