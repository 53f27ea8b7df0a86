// Allocation failure during Catalog::Apply and AuthCache::Check: for
// N = 1, 2, ... the Nth operator new on the calling thread throws
// std::bad_alloc. Each run (in a forked child, so a crash is reported as
// such) must end in success or a clean refusal that leaves the catalog as
// it was, in memory and on disk; never a crash or a half-applied batch.
//
// SHAREMGR_ALLOC_STRIDE (default 1) tests every STRIDE-th N only;
// SHAREMGR_ALLOC_FIRST starts at that N (to debug one failure).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <new>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "authcache/auth_cache.h"
#include "authcache/resolver.h"
#include "gtest/gtest.h"
#include "libshare/catalog.h"
#include "libshare/options.h"

namespace {

// Countdown to the failing allocation on this thread; 0 = disarmed.
thread_local long t_countdown = 0;
thread_local long t_allocations = 0;
thread_local bool t_fired = false;

void* Allocate(std::size_t n) {
  if (t_countdown > 0) {
    ++t_allocations;
    if (--t_countdown == 0) {
      t_fired = true;
      throw std::bad_alloc();
    }
  }
  void* p = std::malloc(n == 0 ? 1 : n);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

void* AllocateAligned(std::size_t n, std::align_val_t al) {
  if (t_countdown > 0) {
    ++t_allocations;
    if (--t_countdown == 0) {
      t_fired = true;
      throw std::bad_alloc();
    }
  }
  std::size_t a = static_cast<std::size_t>(al);
  void* p = std::aligned_alloc(a, (n + a - 1) / a * a);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

}  // namespace

void* operator new(std::size_t n) { return Allocate(n); }
void* operator new[](std::size_t n) { return Allocate(n); }
void* operator new(std::size_t n, std::align_val_t a) {
  return AllocateAligned(n, a);
}
void* operator new[](std::size_t n, std::align_val_t a) {
  return AllocateAligned(n, a);
}
// The nothrow forms too (std::stable_sort's buffer uses them): every
// allocation goes through the countdown and is freed by free().
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return Allocate(n);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return Allocate(n);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}

namespace {

namespace fs = std::filesystem;
using libshare::Operation;

// Child exit codes.
constexpr int kSucceeded = 0;        // the failing allocation never came
constexpr int kSucceededAnyway = 1;  // it came, and the call still succeeded
constexpr int kCleanError = 2;       // returned an error; nothing changed
constexpr int kCaughtUnchanged = 3;  // bad_alloc escaped; nothing changed
constexpr int kBroken = 20;  // 20: changed state; 21: unusable after; 22:
                             // memory != disk

constexpr unsigned kChildSeconds = 5;

long Stride() {
  const char* s = std::getenv("SHAREMGR_ALLOC_STRIDE");
  long v = s ? std::atol(s) : 1;
  return v < 1 ? 1 : v;
}

std::string Snapshot(const libshare::Catalog& c, bool with_generation) {
  std::string out;
  if (with_generation) absl::StrAppend(&out, "gen ", c.generation(), "\n");
  for (const libshare::GroupInfo& g : c.ListGroups()) {
    absl::StrAppend(&out, "group ", g.name, " ", g.enabled, " ", g.options, " ",
                    g.share_count, "\n");
  }
  absl::StatusOr<std::vector<libshare::ShareInfo>> shares = c.ListShares({});
  if (!shares.ok()) return "ListShares failed";
  for (const libshare::ShareInfo& s : *shares) {
    absl::StrAppend(&out, "share ", s.id, " ", s.path, " ", s.group, " ",
                    s.resource, " ", s.description, " ", s.options, " ",
                    s.effective_options, " ", s.active, "\n");
  }
  for (const libshare::SharetabEntry& e : c.SharetabEntries()) {
    absl::StrAppend(&out, "tab ", e.path, "\n");
  }
  return out;
}

class AllocFailureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           absl::StrCat(
               "alloc_failure_", ::getpid(), "_",
               ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "template");
    for (int i = 0; i < 20; ++i) {
      fs::create_directories(dir_ / "export" / absl::StrCat("d", i));
    }
    template_db_ = (dir_ / "template" / "shares.db").string();
    auto c = libshare::Catalog::Open({template_db_, 1});
    ASSERT_TRUE(c.ok()) << c.status();
    libshare::Batch setup;
    setup.ops.push_back(Op(Operation::Type::kCreateGroup, "g", "", "ro"));
    setup.ops.push_back(Op(Operation::Type::kCreateGroup, "off", "", ""));
    for (int i = 0; i < 5; ++i) {
      setup.ops.push_back(Op(Operation::Type::kAddShare, "g", Dir(i), ""));
    }
    setup.ops.push_back(Op(Operation::Type::kDisableGroup, "off", "", ""));
    libshare::BatchResult r = (*c)->Apply(setup);
    ASSERT_TRUE(r.ok()) << r.commit_error;
  }
  void TearDown() override { fs::remove_all(dir_); }

  static Operation Op(Operation::Type t, std::string group, std::string path,
                      std::string options) {
    Operation o;
    o.type = t;
    o.group = std::move(group);
    o.path = std::move(path);
    o.options = std::move(options);
    return o;
  }
  std::string Dir(int i) const {
    return (dir_ / "export" / absl::StrCat("d", i)).string();
  }

  // 20 operations of every kind.
  libshare::Batch TwentyOps() const {
    libshare::Batch b;
    b.ops.push_back(
        Op(Operation::Type::kCreateGroup, "h", "", "rw=@10.0.0.0/8"));
    for (int i = 5; i < 13; ++i) {
      Operation o = Op(Operation::Type::kAddShare, "h", Dir(i), "");
      o.description = absl::StrCat("share ", i);
      o.resource = absl::StrCat("r", i);
      b.ops.push_back(o);
    }
    for (int i = 13; i < 16; ++i) {
      b.ops.push_back(
          Op(Operation::Type::kAddShare, "g", Dir(i), "rw,root=@10.1.0.0/16"));
    }
    b.ops.push_back(Op(Operation::Type::kRemoveShare, "g", Dir(0), ""));
    b.ops.push_back(Op(Operation::Type::kRemoveShare, "", Dir(1), ""));
    b.ops.push_back(Op(Operation::Type::kMoveShare, "h", Dir(2), ""));
    b.ops.push_back(Op(Operation::Type::kSetOptions, "g", "", "rw,nosuid"));
    b.ops.push_back(
        Op(Operation::Type::kSetOptions, "g", Dir(3), "ro=@192.168.0.0/16"));
    b.ops.push_back(Op(Operation::Type::kEnableGroup, "off", "", ""));
    return b;
  }

  // Runs one Apply with the Nth allocation failing, in a child; returns
  // the child's exit code (or 100 + signal).
  int RunApplyFailingAt(long n) {
    const fs::path run = dir_ / absl::StrCat("run", n);
    fs::create_directories(run);
    for (const auto& e : fs::directory_iterator(dir_ / "template")) {
      if (e.path().filename().string().rfind("shares.db", 0) == 0 &&
          e.path().extension() != ".lock") {
        fs::copy_file(e.path(), run / e.path().filename());
      }
    }
    const std::string db = (run / "shares.db").string();
    const libshare::Batch batch = TwentyOps();
    std::fflush(nullptr);
    pid_t pid = ::fork();
    if (pid == 0) {
      ::alarm(kChildSeconds);  // a hang is reported as SIGALRM
      ::_exit(ApplyInChild(db, batch, n));
    }
    int st = 0;
    ::waitpid(pid, &st, 0);
    fs::remove_all(run);
    if (WIFSIGNALED(st)) return 100 + WTERMSIG(st);
    return WEXITSTATUS(st);
  }

  static int ApplyInChild(const std::string& db, const libshare::Batch& batch,
                          long n) {
    auto c = libshare::Catalog::Open({db, 1});
    if (!c.ok()) return 50;
    const std::string before = Snapshot(**c, true);
    const std::string before_disk = Snapshot(**c, false);
    libshare::BatchResult r;
    bool escaped = false;
    t_fired = false;
    t_countdown = n;
    try {
      r = (*c)->Apply(batch);
    } catch (const std::bad_alloc&) {
      escaped = true;
    }
    t_countdown = 0;
    const bool fired = t_fired;
    const std::string after = Snapshot(**c, true);
    const std::string after_disk = Snapshot(**c, false);
    const bool failed = escaped || !r.ok();
    if (failed && (after != before || after_disk != before_disk)) {
      std::fprintf(stderr, "N=%ld: failed Apply (%s) changed the catalog\n", n,
                   escaped ? "bad_alloc escaped" : r.commit_error.c_str());
      return kBroken;
    }
    // The catalog stays usable: the same batch, without the failure, commits
    // (a transaction left open by the failure would refuse it).
    if (failed) {
      libshare::BatchResult again = (*c)->Apply(batch);
      if (!again.ok()) {
        std::fprintf(
            stderr, "N=%ld: after the failure%s, a retry is refused: %s%s\n", n,
            escaped ? " (bad_alloc escaped Apply)" : "",
            again.commit_error.c_str(),
            again.errors.empty() ? "" : again.errors[0].message.c_str());
        return kBroken + 1;
      }
    }
    const std::string final_disk = Snapshot(**c, false);
    c->reset();
    auto reopened = libshare::Catalog::Open({db, 1});
    if (!reopened.ok()) {
      std::fprintf(stderr, "N=%ld: cannot reopen: %s\n", n,
                   std::string(reopened.status().message()).c_str());
      return kBroken;
    }
    const std::string disk = Snapshot(**reopened, false);
    if (disk != final_disk) {
      std::fprintf(stderr,
                   "N=%ld: memory and disk differ after Apply\n%s---\n%s", n,
                   final_disk.c_str(), disk.c_str());
      return kBroken + 2;
    }
    if (!escaped && r.ok()) {
      if (after == before) {
        std::fprintf(stderr, "N=%ld: Apply succeeded but changed nothing\n", n);
        return kBroken;
      }
      return fired ? kSucceededAnyway : kSucceeded;
    }
    return escaped ? kCaughtUnchanged : kCleanError;
  }

  fs::path dir_;
  std::string template_db_;
};

std::string Describe(int code) {
  switch (code) {
    case kSucceeded:
      return "succeeded";
    case kSucceededAnyway:
      return "succeeded despite the failure";
    case kCleanError:
      return "clean error, nothing changed";
    case kCaughtUnchanged:
      return "bad_alloc escaped, nothing changed";
    case kBroken:
      return "BROKEN: the failed call changed the state";
    case kBroken + 1:
      return "BROKEN: later calls refused";
    case kBroken + 2:
      return "BROKEN: memory and disk differ";
    case 100 + SIGALRM:
      return "BROKEN: hung (killed after 5 s)";
    default:
      return code >= 100 ? absl::StrCat("BROKEN: crashed, signal ", code - 100)
                         : absl::StrCat("BROKEN: exit code ", code);
  }
}

// Runs `run(n)` for n = 1, 1 + stride, ... until it returns kSucceeded;
// returns the outcomes (description -> first few n) and sets *total.
template <typename Run>
std::map<std::string, std::vector<long>> Sweep(Run run, long limit,
                                               long* runs) {
  std::map<std::string, std::vector<long>> outcomes;
  *runs = 0;
  const char* first = std::getenv("SHAREMGR_ALLOC_FIRST");
  for (long n = first ? std::max(1L, std::atol(first)) : 1; n < limit;
       n += Stride()) {
    int code = run(n);
    ++*runs;
    std::vector<long>& v = outcomes[Describe(code)];
    v.push_back(n);
    if (code == kSucceeded) return outcomes;
  }
  outcomes["never succeeded"].push_back(limit);
  return outcomes;
}

// Prints the outcomes and fails the test for every broken one.
void Report(const char* what, long runs,
            const std::map<std::string, std::vector<long>>& outcomes) {
  std::printf("%s: %ld runs (stride %ld)\n", what, runs, Stride());
  for (const auto& [outcome, ns] : outcomes) {
    std::string first;
    for (std::size_t i = 0; i < ns.size() && i < 8; ++i) {
      absl::StrAppend(&first, i ? ", " : "", ns[i]);
    }
    std::printf("  %6zu x %s (N = %s%s)\n", ns.size(), outcome.c_str(),
                first.c_str(), ns.size() > 8 ? ", ..." : "");
    EXPECT_EQ(outcome.rfind("BROKEN", 0), std::string::npos)
        << what << ": " << ns.size() << " runs " << outcome << ", first N "
        << ns[0];
    EXPECT_NE(outcome, "never succeeded") << what;
  }
}

// A resolver that knows one name for every address, so Check walks the
// name paths (hosts, domain suffixes) as well as networks.
class OneNameResolver : public authcache::Resolver {
 public:
  absl::StatusOr<std::vector<std::string>> NamesOf(
      const libshare::IpAddress&) override {
    return std::vector<std::string>{"client.example.com"};
  }
  absl::StatusOr<std::vector<libshare::IpAddress>> AddressesOf(
      std::string_view) override {
    return std::vector<libshare::IpAddress>{
        *libshare::IpAddress::Parse("192.0.2.7")};
  }
  absl::StatusOr<bool> InNetgroup(std::string_view, std::string_view) override {
    return false;
  }
};

int CheckInChild(long n) {
  authcache::AuthCacheConfig config;
  authcache::AuthCache cache(std::make_shared<OneNameResolver>(), config);
  absl::StatusOr<libshare::ShareOptions> parsed = libshare::ParseOptions(
      "rw=.example.com:@10.0.0.0/8,root=client.example.com");
  if (!parsed.ok()) return 50;
  const auto opts =
      std::make_shared<const libshare::ShareOptions>(*std::move(parsed));
  // Another share's options, equal but their own object.
  const auto other_opts = std::make_shared<const libshare::ShareOptions>(*opts);
  const libshare::IpAddress client = *libshare::IpAddress::Parse("192.0.2.7");
  const authcache::Decision want =
      cache.Check(client, opts, libshare::SecFlavor::kSys, 0);
  cache.Flush();
  bool escaped = false;
  authcache::Decision got;
  t_fired = false;
  t_countdown = n;
  try {
    got = cache.Check(client, opts, libshare::SecFlavor::kSys, 0);
  } catch (const std::bad_alloc&) {
    escaped = true;
  }
  t_countdown = 0;
  const bool fired = t_fired;
  // Whatever happened, the cache answers correctly afterwards, for this
  // client and for another share.
  cache.WaitForBackgroundWork();
  const authcache::Decision again =
      cache.Check(client, opts, libshare::SecFlavor::kSys, 0);
  const authcache::Decision other =
      cache.Check(client, other_opts, libshare::SecFlavor::kSys, 0);
  if (!(again == want) || !(other == want)) {
    std::fprintf(stderr, "N=%ld: wrong decision after the failure\n", n);
    return kBroken;
  }
  if (!escaped && !(got == want) && !got.lookup_failed) {
    std::fprintf(stderr, "N=%ld: wrong decision during the failure\n", n);
    return kBroken;
  }
  if (escaped) return kCaughtUnchanged;
  if (!fired) return kSucceeded;
  return got == want ? kSucceededAnyway : kCleanError;
}

TEST_F(AllocFailureTest, ApplyEndsInSuccessOrLeavesCatalogUnchanged) {
  long runs = 0;
  auto outcomes =
      Sweep([this](long n) { return RunApplyFailingAt(n); }, 200000, &runs);
  Report("Catalog::Apply of 20 operations", runs, outcomes);
}

TEST(AuthCacheAllocFailureTest, CheckEndsInRightDecisionOrCleanFailure) {
  long runs = 0;
  auto outcomes = Sweep(
      [](long n) {
        std::fflush(nullptr);
        pid_t pid = ::fork();
        if (pid == 0) {
          ::alarm(kChildSeconds);  // a hang is reported as SIGALRM
          ::_exit(CheckInChild(n));
        }
        int st = 0;
        ::waitpid(pid, &st, 0);
        return WIFSIGNALED(st) ? 100 + WTERMSIG(st) : WEXITSTATUS(st);
      },
      200000, &runs);
  Report("AuthCache::Check (cache miss, names resolved)", runs, outcomes);
}

}  // namespace
