#include "share_access.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "authcache/auth_cache.h"
#include "authcache/resolver.h"
#include "fs_watch.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "libshare/batch.h"
#include "libshare/catalog.h"

namespace sharemgrd {
namespace {

using ::testing::HasSubstr;

// ShareAccess with resolve over a real Catalog and a tree in a temporary
// folder: dir_/share (shared), dir_/share/priv (0700, the test's own uid),
// dir_/share/priv/in, dir_/outside. Owner and modes are the test
// process's, so the tests run as root or not.
class ShareAccessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/sharemgrd_access_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    char* real = realpath(tmpl, nullptr);
    ASSERT_NE(real, nullptr);
    dir_ = real;
    free(real);
    share_ = dir_ + "/share";
    for (const char* d : {"/share", "/share/priv", "/share/priv/in",
                          "/share/open", "/outside"}) {
      ASSERT_EQ(mkdir((dir_ + d).c_str(), 0755), 0);
    }
    ASSERT_EQ(chmod((share_ + "/priv").c_str(), 0700), 0);
    auto catalog = libshare::Catalog::Open({dir_ + "/db", 1});
    ASSERT_TRUE(catalog.ok()) << catalog.status();
    catalog_ = std::move(*catalog);
    auto resolver = authcache::MakeFilesResolver("", "");
    ASSERT_TRUE(resolver.ok());
    cache_ = std::make_unique<authcache::AuthCache>(
        std::shared_ptr<authcache::Resolver>(std::move(*resolver)),
        authcache::AuthCacheConfig{});
  }
  void TearDown() override {
    cache_.reset();
    catalog_.reset();
    std::string cmd = "rm -rf '" + dir_ + "'";
    ASSERT_EQ(system(cmd.c_str()), 0);
  }

  void Share(const std::string& options) {
    libshare::Batch b;
    libshare::Operation g;
    g.type = libshare::Operation::Type::kCreateGroup;
    g.group = "g";
    libshare::Operation s;
    s.type = libshare::Operation::Type::kAddShare;
    s.group = "g";
    s.path = share_;
    s.options = options;
    b.ops = {g, s};
    libshare::BatchResult r = catalog_->Apply(b);
    ASSERT_TRUE(r.ok()) << (r.errors.empty() ? r.commit_error
                                             : r.errors[0].message);
  }

  AccessResult Decide(const std::string& path, uint32_t uid = 0,
                      uint32_t gid = 0, bool anonymous = false,
                      absl::Span<const uint32_t> groups = {}) {
    return ShareAccess(catalog_.get(), cache_.get())
        .Decide({.client = libshare::IpAddress::FromV4(0x7f000001),
                 .path = path,
                 .uid = uid,
                 .gid = gid,
                 .groups = groups,
                 .anonymous = anonymous,
                 .resolve = true});
  }

  std::string Me() const { return std::to_string(geteuid()); }

  std::string dir_, share_;
  std::unique_ptr<libshare::Catalog> catalog_;
  std::unique_ptr<authcache::AuthCache> cache_;
};

TEST_F(ShareAccessTest, HandleSourceIsTheDirectoryWalkedTo) {
  Share("rw");
  AccessResult r = Decide(share_ + "/open");
  ASSERT_EQ(r.outcome, AccessOutcome::kGranted) << r.reason;
  struct stat st;
  ASSERT_EQ(stat((share_ + "/open").c_str(), &st), 0);
  EXPECT_TRUE(r.resolved);
  EXPECT_EQ(r.dev, st.st_dev);
  EXPECT_EQ(r.ino, st.st_ino);
}

TEST_F(ShareAccessTest, SquashedRootMayNotPassAPrivateDirectory) {
  if (geteuid() == 65534) GTEST_SKIP() << "runs as the anon uid";
  Share("rw");
  AccessResult r = Decide(share_ + "/priv/in");
  EXPECT_EQ(r.outcome, AccessOutcome::kNotShared);
  EXPECT_THAT(r.reason, HasSubstr("may not search " + share_ + "/priv"));
  // A missing name behind it answers the same, not NOENT.
  EXPECT_EQ(Decide(share_ + "/priv/nothing").outcome,
            AccessOutcome::kNotShared);
}

TEST_F(ShareAccessTest, AnonUidOwningTheDirectoryPasses) {
  Share("rw,anon=" + Me());
  EXPECT_EQ(Decide(share_ + "/priv/in").outcome, AccessOutcome::kGranted);
}

// The kernel squashes root to anonuid = anongid = anon (export_entry.cc):
// a directory only anon's group may search lets a squashed root pass.
TEST_F(ShareAccessTest, SquashedRootWalksWithTheAnonIdAsItsGroup) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give the folder away";
  ASSERT_EQ(chown((share_ + "/priv").c_str(), 4242, 5151), 0);
  ASSERT_EQ(chmod((share_ + "/priv").c_str(), 0710), 0);
  Share("rw,anon=5151");
  AccessResult r = Decide(share_ + "/priv/in");
  EXPECT_EQ(r.outcome, AccessOutcome::kGranted) << r.reason;
  // The anonymous caller is squashed alike.
  EXPECT_EQ(Decide(share_ + "/priv/in", 0, 0, /*anonymous=*/true).outcome,
            AccessOutcome::kGranted);
}

TEST_F(ShareAccessTest, SquashedRootIsNotInTheGroupOfAnotherAnon) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give the folder away";
  ASSERT_EQ(chown((share_ + "/priv").c_str(), 4242, 5151), 0);
  ASSERT_EQ(chmod((share_ + "/priv").c_str(), 0710), 0);
  Share("rw,anon=5152");
  EXPECT_EQ(Decide(share_ + "/priv/in").outcome, AccessOutcome::kNotShared);
}

TEST_F(ShareAccessTest, RootKeptByRootListPasses) {
  Share("rw,root=@127.0.0.1/32");
  AccessResult r = Decide(share_ + "/priv/in");
  EXPECT_TRUE(r.decision.root);
  EXPECT_EQ(r.outcome, AccessOutcome::kGranted) << r.reason;
}

TEST_F(ShareAccessTest, UserWalksAsItsOwnUid) {
  // The owner: 4242 when the test can give it away (root), else the test.
  uint32_t owner = geteuid();
  if (owner == 0) {
    ASSERT_EQ(chown((share_ + "/priv").c_str(), 4242, 4242), 0);
    owner = 4242;
  }
  Share("rw");
  EXPECT_EQ(Decide(share_ + "/priv/in", owner, 7).outcome,
            AccessOutcome::kGranted);
  EXPECT_EQ(Decide(share_ + "/priv/in", owner + 1, 7).outcome,
            AccessOutcome::kNotShared);
}

TEST_F(ShareAccessTest, OtherUserIsStoppedAtThePrivateDirectory) {
  Share("rw");
  EXPECT_EQ(Decide(share_ + "/priv/in", 4242, 4242).outcome,
            AccessOutcome::kNotShared);
  EXPECT_EQ(Decide(share_ + "/open", 4242, 4242).outcome,
            AccessOutcome::kGranted);
}

// AUTH_SYS carries gids<16> (RFC 5531); the kernel grants through them.
TEST_F(ShareAccessTest, UserPassesThroughASupplementaryGroup) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give the folder away";
  ASSERT_EQ(chown((share_ + "/priv").c_str(), 4242, 5151), 0);
  ASSERT_EQ(chmod((share_ + "/priv").c_str(), 0710), 0);
  Share("rw");
  const uint32_t groups[] = {20, 5151};
  AccessResult r = Decide(share_ + "/priv/in", 4243, 7, false, groups);
  EXPECT_EQ(r.outcome, AccessOutcome::kGranted) << r.reason;
}

TEST_F(ShareAccessTest, UserOutsideEveryGroupIsStopped) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give the folder away";
  ASSERT_EQ(chown((share_ + "/priv").c_str(), 4242, 5151), 0);
  ASSERT_EQ(chmod((share_ + "/priv").c_str(), 0710), 0);
  Share("rw");
  const uint32_t groups[] = {20, 5152};
  EXPECT_EQ(Decide(share_ + "/priv/in", 4243, 7, false, groups).outcome,
            AccessOutcome::kNotShared);
}

TEST_F(ShareAccessTest, AnonymousCallerWalksAsAnon) {
  Share("rw,anon=" + Me());
  EXPECT_EQ(Decide(share_ + "/priv/in", 4242, 4242, /*anonymous=*/true).outcome,
            AccessOutcome::kGranted);
}

TEST_F(ShareAccessTest, AnonMinusOneLeavesOnlyTheOtherBits) {
  Share("rw,anon=-1");
  ASSERT_EQ(chmod((share_ + "/priv").c_str(), 0771), 0);
  EXPECT_EQ(Decide(share_ + "/priv/in").outcome, AccessOutcome::kGranted);
  ASSERT_EQ(chmod((share_ + "/priv").c_str(), 0770), 0);
  EXPECT_EQ(Decide(share_ + "/priv/in").outcome, AccessOutcome::kNotShared);
}

TEST_F(ShareAccessTest, LinkOutAnswersAsAnUnsharedPath) {
  Share("rw");
  ASSERT_EQ(symlink("../outside", (share_ + "/esc").c_str()), 0);
  AccessResult r = Decide(share_ + "/esc/nothing");
  EXPECT_EQ(r.outcome, Decide(dir_ + "/outside/nothing").outcome);
  EXPECT_EQ(r.outcome, AccessOutcome::kNotShared);
  EXPECT_THAT(r.reason, HasSubstr("symlink"));
}

TEST_F(ShareAccessTest, NamesInsideGetNoentAndNotdir) {
  Share("rw");
  ASSERT_EQ(close(creat((share_ + "/file").c_str(), 0644)), 0);
  EXPECT_EQ(Decide(share_ + "/missing").outcome, AccessOutcome::kNoent);
  EXPECT_EQ(Decide(share_ + "/file").outcome, AccessOutcome::kNotdir);
}

TEST_F(ShareAccessTest, ShareWhosePathBecameALinkIsNotServed) {
  Share("rw");
  ASSERT_EQ(rename(share_.c_str(), (dir_ + "/moved").c_str()), 0);
  ASSERT_EQ(symlink("moved", share_.c_str()), 0);
  AccessResult r = Decide(share_);
  EXPECT_EQ(r.outcome, AccessOutcome::kNotShared);
  EXPECT_THAT(r.reason, HasSubstr("is not served"));
}

TEST_F(ShareAccessTest, ShareWhoseDirectoryIsGoneIsNoent) {
  Share("rw");
  ASSERT_EQ(rename(share_.c_str(), (dir_ + "/moved").c_str()), 0);
  EXPECT_EQ(Decide(share_).outcome, AccessOutcome::kNoent);
}

TEST_F(ShareAccessTest, WithoutResolveNothingIsReadFromDisk) {
  Share("rw");
  ASSERT_EQ(symlink("/etc", (share_ + "/esc").c_str()), 0);
  AccessResult r = ShareAccess(catalog_.get(), cache_.get())
                       .Decide({.client = libshare::IpAddress::FromV4(1),
                                .path = share_ + "/esc"});
  EXPECT_FALSE(r.resolved);
}

// A mountinfo line for a mount at `point`.
std::string MountLine(const std::string& point, const std::string& source) {
  return "30 1 0:40 / " + point + " rw,relatime shared:1 - tmpfs " + source +
         " rw\n";
}

class ServedShareAccessTest : public ShareAccessTest {
 protected:
  void WriteMountinfo(const std::string& text) {
    std::ofstream(dir_ + "/mountinfo") << text;
  }
  void OpenWatch() {
    FsWatch::Config c;
    c.mountinfo = dir_ + "/mountinfo";
    auto w = FsWatch::Open(c, catalog_.get(), catalog_->fs_places());
    ASSERT_TRUE(w.ok()) << w.status();
    watch_ = std::move(*w);
  }
  AccessResult DecideServed(const std::string& path, bool explain = false) {
    return ShareAccess(catalog_.get(), cache_.get(), watch_.get())
        .Decide({.client = libshare::IpAddress::FromV4(0x7f000001),
                 .path = path,
                 .uid = 0,
                 .gid = 0,
                 .resolve = true,
                 .explain = explain});
  }
  void TearDown() override {
    watch_.reset();
    ShareAccessTest::TearDown();
  }
  // The reason of a share recorded on "/" whose own file system was
  // mounted since: it names the remedy.
  std::string MountedSinceReason() const {
    return "recorded on a file system mounted at /, now " + share_ +
           " (mounted since the share was added; if the share is meant to "
           "be on it, sharectl rerecord -s " +
           share_ + " records it)";
  }
  // The share recorded on "/" by a round, the watch closed, and a file
  // system mounted at the share since: no round has seen it yet.
  void RecordOnRootThenMountAtTheShare() {
    Share("rw");
    WriteMountinfo(MountLine("/", "root"));
    OpenWatch();
    watch_->ProbeAll();  // recorded on /
    watch_.reset();
    WriteMountinfo(MountLine("/", "root") + MountLine(share_, "data"));
  }
  std::unique_ptr<FsWatch> watch_;
};

TEST_F(ServedShareAccessTest, RerecordServesTheShareOnItsFileSystemNow) {
  RecordOnRootThenMountAtTheShare();
  OpenWatch();
  watch_->ProbeAll();
  ASSERT_EQ(watch_->NotServed(share_, false), MountedSinceReason());
  // A path that is no share refuses the call: nothing is recorded.
  absl::StatusOr<std::vector<std::string>> bad =
      watch_->Rerecord({share_, share_ + "/none"});
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(watch_->NotServed(share_, false), MountedSinceReason());
  absl::StatusOr<std::vector<std::string>> lines = watch_->Rerecord({share_});
  ASSERT_TRUE(lines.ok()) << lines.status();
  ASSERT_EQ(lines->size(), 1u);
  EXPECT_THAT((*lines)[0], HasSubstr(share_ + ": recorded on data ("));
  EXPECT_THAT((*lines)[0], HasSubstr("mounted at " + share_ + " (was root ("));
  EXPECT_EQ(watch_->NotServed(share_, false), std::nullopt);
  EXPECT_TRUE(DecideServed(share_).granted());
  // Kept in the store: a new watch (a restart) serves it from the start.
  watch_.reset();
  OpenWatch();
  watch_->ProbeAll();
  EXPECT_EQ(watch_->NotServed(share_, false), std::nullopt);
}

TEST_F(ServedShareAccessTest, ShareOnItsRecordedMountIsServed) {
  Share("rw");
  WriteMountinfo(MountLine("/", "root") + MountLine(share_, "data"));
  OpenWatch();
  EXPECT_TRUE(DecideServed(share_).granted());
}

TEST_F(ServedShareAccessTest, UnmountedShareIsRefusedNotLeftToItsParent) {
  Share("rw");
  WriteMountinfo(MountLine("/", "root") + MountLine(share_, "data"));
  OpenWatch();
  watch_->ProbeAll();                      // records where the share is
  WriteMountinfo(MountLine("/", "root"));  // the dataset is unmounted
  watch_->ProbeAll();
  AccessResult r = DecideServed(share_ + "/open");
  EXPECT_EQ(r.outcome, AccessOutcome::kNotShared);
  EXPECT_TRUE(r.not_served);
  EXPECT_EQ(r.reason, share_ +
                          ": not served: recorded on a file system mounted "
                          "at " +
                          share_ + ", now /");
}

TEST_F(ServedShareAccessTest, RecordedPlaceSurvivesAReopen) {
  Share("rw");
  WriteMountinfo(MountLine("/", "root") + MountLine(share_, "data"));
  OpenWatch();
  watch_->ProbeAll();  // records where the share is
  watch_.reset();
  WriteMountinfo(MountLine("/", "root") + MountLine(share_, "other"));
  OpenWatch();  // no round yet: decided live from the stored place
  AccessResult r = DecideServed(share_);
  EXPECT_TRUE(r.not_served);
  EXPECT_THAT(r.reason, HasSubstr("recorded on data (tmpfs) mounted at"));
  EXPECT_THAT(r.reason, HasSubstr("now other (tmpfs)"));
}

// Open keeps by path only the places that differ from the mount holding
// the path now; a share recorded on that mount is served before the first
// round, one recorded elsewhere is not.
TEST_F(ServedShareAccessTest, PlaceOfTheCurrentMountServedBeforeTheFirstRound) {
  Share("rw");
  WriteMountinfo(MountLine("/", "root") + MountLine(share_, "data"));
  OpenWatch();
  watch_->ProbeAll();
  watch_.reset();
  OpenWatch();  // the same mounts
  EXPECT_EQ(watch_->NotServed(share_, false), std::nullopt);
  EXPECT_TRUE(DecideServed(share_).granted());
}

TEST_F(ServedShareAccessTest, RecordedOnTheParentRefusedOnceADatasetIsMounted) {
  RecordOnRootThenMountAtTheShare();
  OpenWatch();  // no round yet
  std::optional<std::string> why = watch_->NotServed(share_, false);
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(*why, MountedSinceReason());
  watch_->ProbeAll();  // the round says the same
  EXPECT_EQ(watch_->NotServed(share_, false), why);
}

// The daemon's order: the watch is opened while the catalog loads
// (Catalog::Config::beside_load), without it, and given it after. Its
// decisions before the first round and its rounds are those of a watch
// opened after the load.
TEST_F(ServedShareAccessTest, WatchOpenedWhileTheCatalogLoadsDecidesTheSame) {
  RecordOnRootThenMountAtTheShare();
  catalog_.reset();
  FsWatch::Config c;
  c.mountinfo = dir_ + "/mountinfo";
  absl::StatusOr<std::unique_ptr<FsWatch>> opened =
      absl::UnknownError("beside_load did not run");
  libshare::Catalog::Config cc{dir_ + "/db", 1};
  cc.beside_load = [&](libshare::FsPlaceRecords* places) {
    opened = FsWatch::Open(c, nullptr, places);
  };
  auto catalog = libshare::Catalog::Open(cc);
  ASSERT_TRUE(catalog.ok()) << catalog.status();
  catalog_ = std::move(*catalog);
  ASSERT_TRUE(opened.ok()) << opened.status();
  watch_ = std::move(*opened);
  watch_->SetCatalog(catalog_.get());
  const std::string why = MountedSinceReason();
  EXPECT_EQ(watch_->NotServed(share_, false), why);  // no round yet
  AccessResult r = DecideServed(share_);
  EXPECT_TRUE(r.not_served);
  watch_->ProbeAll();  // a round over the catalog's shares says the same
  EXPECT_EQ(watch_->NotServed(share_, false), why);
}

// Opened without the catalog, the watch reserves its map by the highest
// share id, bounded by the store's size: a store whose share has a huge id
// (ids of removed shares are not reused; this one written by hand) opens
// and decides as any other. Unbounded, the reserve asked for 2^60 slots.
TEST_F(ServedShareAccessTest, WatchOpenedWithoutTheCatalogBoundsItsReserve) {
  RecordOnRootThenMountAtTheShare();
  catalog_.reset();
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((dir_ + "/db").c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "UPDATE shares SET id = 1152921504606846976",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
  }
  FsWatch::Config c;
  c.mountinfo = dir_ + "/mountinfo";
  absl::StatusOr<std::unique_ptr<FsWatch>> w =
      absl::UnknownError("beside_load did not run");
  libshare::Catalog::Config cc{dir_ + "/db", 1};
  cc.beside_load = [&](libshare::FsPlaceRecords* places) {
    w = FsWatch::Open(c, nullptr, places);
  };
  auto catalog = libshare::Catalog::Open(cc);
  ASSERT_TRUE(catalog.ok()) << catalog.status();
  catalog_ = std::move(*catalog);
  ASSERT_TRUE(w.ok()) << w.status();
  watch_ = std::move(*w);
  watch_->SetCatalog(catalog_.get());
  EXPECT_EQ(watch_->NotServed(share_, false), MountedSinceReason());
}

// A walk to the share that meets a link asks the watch for a full round
// (the last one served the share); one that fails for lack of descriptors
// (EMFILE, ENFILE) or memory does not: it says nothing of the path, and a
// round would fail the same way.
TEST_F(ServedShareAccessTest, OnlyAWalkThatMeetsAChangeWakesAFullRound) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "the sanitizers' runtime needs descriptors of its own (its "
                  "memory checks open a pipe) and reports false errors "
                  "without them";
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  GTEST_SKIP() << "the sanitizers' runtime needs descriptors of its own";
#endif
#endif
  ASSERT_EQ(mkdir((dir_ + "/p").c_str(), 0755), 0);
  share_ = dir_ + "/p/share";
  ASSERT_EQ(mkdir(share_.c_str(), 0755), 0);
  Share("rw");
  ASSERT_EQ(
      system(("cp /proc/self/mountinfo '" + dir_ + "/mountinfo'").c_str()), 0);
  OpenWatch();
  absl::Mutex mu;
  bool first = false;
  watch_->Watch([](const std::vector<std::string>&) {},
                [&] {
                  absl::MutexLock l(&mu);
                  first = true;
                });
  {
    absl::MutexLock l(&mu);
    ASSERT_TRUE(
        mu.AwaitWithTimeout(absl::Condition(&first), absl::Seconds(10)));
  }
  ASSERT_EQ(watch_->full_rounds(), 1u);
  // No descriptor left: every fd below the limit is taken.
  const int base = open("/dev/null", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(base, 0);
  rlimit old{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &old), 0);
  std::vector<int> held;
  rlimit low = old;
  low.rlim_cur = std::min<rlim_t>(256, old.rlim_max);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
  for (int fd; (fd = dup(base)) >= 0;) held.push_back(fd);
  const int dup_errno = errno;
  AccessResult r = DecideServed(share_);
  for (int fd : held) close(fd);
  close(base);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &old), 0);
  ASSERT_EQ(dup_errno, EMFILE);
  EXPECT_EQ(r.outcome, AccessOutcome::kNotShared);
  EXPECT_THAT(r.reason, HasSubstr("is not served"));
  EXPECT_THAT(r.reason, HasSubstr(strerror(EMFILE)));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_EQ(watch_->full_rounds(), 1u) << "a round for EMFILE";
  // A link above the share (its folder moved with its parent): a round
  // comes.
  ASSERT_EQ(rename((dir_ + "/p").c_str(), (dir_ + "/moved").c_str()), 0);
  ASSERT_EQ(symlink("moved", (dir_ + "/p").c_str()), 0);
  EXPECT_THAT(DecideServed(share_).reason, HasSubstr("is not served"));
  for (int i = 0; i < 1000 && watch_->full_rounds() < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(watch_->full_rounds(), 2u);
}

TEST_F(ServedShareAccessTest, MovedFolderIsRefusedAtOnceNotNoent) {
  Share("rw");
  WriteMountinfo(MountLine("/", "root"));
  OpenWatch();
  ASSERT_EQ(rename(share_.c_str(), (dir_ + "/moved").c_str()), 0);
  AccessResult r = DecideServed(share_);
  EXPECT_EQ(r.outcome, AccessOutcome::kNotShared);
  EXPECT_EQ(r.reason, share_ + ": not served: the folder does not exist");
}

TEST_F(ShareAccessTest, ExplainedRefusalNamesTheDisabledGroup) {
  Share("rw");
  libshare::Batch b;
  libshare::Operation d;
  d.type = libshare::Operation::Type::kDisableGroup;
  d.group = "g";
  b.ops = {d};
  ASSERT_TRUE(catalog_->Apply(b).ok());
  AccessResult r =
      ShareAccess(catalog_.get(), cache_.get())
          .Decide({.client = libshare::IpAddress::FromV4(0x7f000001),
                   .path = share_ + "/open",
                   .explain = true});
  EXPECT_EQ(r.outcome, AccessOutcome::kNotShared);
  EXPECT_EQ(r.reason, share_ + " is in group g, which is disabled");
}

// Shares with no options of their own hold their group's options object,
// and decisions are kept by that object: a client's first MNT of a second
// share of the group is a cache hit. Options set on the group are a new
// object, decided anew.
TEST_F(ShareAccessTest, SharesOfAGroupShareTheirDecisions) {
  auto on_group = [](libshare::Operation::Type type, std::string options) {
    libshare::Operation o;
    o.type = type;
    o.group = "g";
    o.options = std::move(options);
    return o;
  };
  libshare::Batch b;
  b.ops = {on_group(libshare::Operation::Type::kCreateGroup,
                    "rw=@127.0.0.0/8")};
  for (const std::string& path : {share_, dir_ + "/outside"}) {
    libshare::Operation s;
    s.type = libshare::Operation::Type::kAddShare;
    s.group = "g";
    s.path = path;
    b.ops.push_back(s);
  }
  ASSERT_TRUE(catalog_->Apply(b).ok());
  EXPECT_EQ(Decide(share_).decision.access, authcache::Access::kRw);
  EXPECT_EQ(Decide(dir_ + "/outside").decision.access, authcache::Access::kRw);
  EXPECT_EQ(cache_->counters().misses, 1u);
  EXPECT_EQ(cache_->counters().hits, 1u);

  libshare::Batch set;
  set.ops = {
      on_group(libshare::Operation::Type::kSetOptions, "ro=@127.0.0.0/8")};
  ASSERT_TRUE(catalog_->Apply(set).ok());
  EXPECT_EQ(Decide(dir_ + "/outside").decision.access, authcache::Access::kRo);
  EXPECT_EQ(Decide(share_).decision.access, authcache::Access::kRo);
  EXPECT_EQ(cache_->counters().misses, 2u);
  EXPECT_EQ(cache_->counters().hits, 2u);
  // The group's old options are held by no share: their decision goes.
  EXPECT_EQ(cache_->DropUnused(), 1u);
}

}  // namespace
}  // namespace sharemgrd
