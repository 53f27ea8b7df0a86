// The NFSv4 pseudo-root as the responder answers it (responder.h) from
// the share tree (share_tree.h).
#include <sys/stat.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernel/fs_probe.h"
#include "kernel/line_format.h"
#include "kernel/responder.h"
#include "kernel/share_tree.h"
#include "kernel_fixture.h"

namespace sharemgrd::kernel {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::kNow;

constexpr uint32_t kRootFlags = 0x12403;  // RO|INSECURE|NOSUBTREE|FSID|V4ROOT
constexpr uint32_t kDirFlags = 0x10403;   // the same without FSID

// " uuid \x..." of rpc.mountd's uuid for the pseudo directory `path`.
std::string PseudoUuidWord(const std::string& path) {
  const Uuid u = PseudoRootUuid(path);
  LineWriter w;
  w.Hex(std::string(reinterpret_cast<const char*>(u.data()), u.size()));
  std::string word = std::move(w).Finish();
  word.pop_back();  // the newline
  return " uuid " + word;
}

// A pseudo-root entry: "/" with fsid 0 and no uuid, the others with
// rpc.mountd's uuid of their path.
std::string Pseudo(const std::string& client, const std::string& path,
                   uint32_t flags) {
  return absl::StrCat("$", client, " ", path, " ", kNow + 1800, " ", flags,
                      " 65534 65534 0 secinfo 4 390003 ", flags, " 390004 ",
                      flags, " 390005 ", flags, " 1 ", flags,
                      path == "/" ? "" : PseudoUuidWord(path), "\n");
}

class PseudoRootTest : public testing::KernelFixture {};

TEST_F(PseudoRootTest, RootAndEveryAncestorAreV4RootForAClientThatSeesAShare) {
  const std::string p = Share("x/y/a", "rw=10.0.0.1");
  auto r = MakeResponder();
  EXPECT_EQ(r->Export("$10.0.0.1", "/").line,
            Pseudo("10.0.0.1", "/", kRootFlags));
  for (const std::string& up : ShareTree::Ancestors(p)) {
    if (up == "/") continue;
    EXPECT_EQ(r->Export("$10.0.0.1", up).line,
              Pseudo("10.0.0.1", up, kDirFlags))
        << up;
  }
}

TEST_F(PseudoRootTest, DirectoriesLeadingToNothingVisibleAreNegative) {
  const std::string p = Share("x/y/a", "rw=10.0.0.1");
  auto r = MakeResponder();
  for (const std::string& up : ShareTree::Ancestors(p)) {
    Answer a = r->Export("$10.0.0.2", up);
    EXPECT_TRUE(a.negative) << up;
    EXPECT_EQ(a.line, absl::StrCat("$10.0.0.2 ", up, " ", kNow + 60, "\n"));
  }
}

TEST_F(PseudoRootTest, SideBranchIsNegativeEvenForAClientThatSeesAShare) {
  const std::string p = Share("x/y/a", "rw=10.0.0.1");
  const std::string side = dir_.Mkdir("x/other");
  auto r = MakeResponder();
  EXPECT_TRUE(r->Export("$10.0.0.1", side).negative);
}

TEST_F(PseudoRootTest, OneVisibleShareAmongManyIsEnough) {
  std::vector<std::string> shares;
  for (int i = 0; i < 5; ++i) {
    shares.push_back(Share(absl::StrCat("homes/u", i),
                           i == 3 ? "rw=10.0.0.1" : "rw=10.0.0.7"));
  }
  auto r = MakeResponder();
  const std::string homes = ShareTree::Ancestors(shares[0])[0];
  EXPECT_EQ(r->Export("$10.0.0.1", homes).line,
            Pseudo("10.0.0.1", homes, kDirFlags));
  EXPECT_TRUE(r->Export("$10.0.0.2", homes).negative);
}

TEST_F(PseudoRootTest, TheWalkStopsAtTheFirstVisibleShare) {
  for (int i = 0; i < 50; ++i) Share(absl::StrCat("homes/u", i));
  auto r = MakeResponder();
  const authcache::AuthCacheCounters before = cache_->counters();
  EXPECT_FALSE(r->Export("$10.0.0.1", "/").negative);
  const authcache::AuthCacheCounters after = cache_->counters();
  EXPECT_EQ((after.hits + after.misses) - (before.hits + before.misses), 1u);
}

TEST_F(PseudoRootTest, APseudoDirCarriesRpcMountdsUuidOfItsPathNotItsFs) {
  const std::string p = Share("x/a");
  const std::string x = ShareTree::Ancestors(p)[0];
  FsIdentity id;
  id.inode = 5;
  id.uuid = Uuid{0xcd};
  probe_.Set(x, id);
  Answer a = MakeResponder()->Export("$10.0.0.1", x);
  EXPECT_THAT(a.line, ::testing::EndsWith(PseudoUuidWord(x) + "\n"));
  EXPECT_THAT(a.line, ::testing::Not(::testing::HasSubstr("\\xcd00")));
}

TEST_F(PseudoRootTest, NoSharesMeansNoRoot) {
  EXPECT_TRUE(MakeResponder()->Export("$10.0.0.1", "/").negative);
}

// A parent dataset the client may not use, above one it may, is a way
// through. Needs two file systems: /dev (devtmpfs) above the test folder
// (on /dev/shm) when the test folder is there.
TEST_F(PseudoRootTest, RefusedShareAboveAVisibleOneIsAPseudoDir) {
  struct stat dev, here;
  if (stat("/dev", &dev) != 0 || stat(dir_.path().c_str(), &here) != 0 ||
      dev.st_dev == here.st_dev || dir_.path().rfind("/dev/", 0) != 0) {
    GTEST_SKIP() << "needs the test folder on another file system below /dev";
  }
  Apply({libshare::testing::CreateGroup("g"),
         libshare::testing::AddShare("/dev", "g", "rw=10.0.0.9")});
  group_made_ = true;
  const std::string p = Share("u1", "rw=10.0.0.1");
  auto r = MakeResponder();
  EXPECT_EQ(r->Export("$10.0.0.1", "/dev").line,
            Pseudo("10.0.0.1", "/dev", kDirFlags));
  EXPECT_FALSE(r->Export("$10.0.0.9", "/dev").negative);
  EXPECT_FALSE(r->Export("$10.0.0.1", p).negative);
}

TEST(ShareTreeTest, AddRemoveReportDirectoriesEnteringAndLeaving) {
  ShareTree t;
  EXPECT_THAT(t.Add("/a/b/c"), ElementsAre("/a/b", "/a", "/"));
  EXPECT_THAT(t.Add("/a/d"), IsEmpty());
  EXPECT_TRUE(t.IsAbove("/a"));
  EXPECT_TRUE(t.IsShare("/a/d"));
  EXPECT_FALSE(t.IsAbove("/a/d"));
  EXPECT_THAT(t.Remove("/a/b/c"), ElementsAre("/a/b"));
  EXPECT_FALSE(t.IsAbove("/a/b"));
  EXPECT_TRUE(t.IsAbove("/a"));
  EXPECT_THAT(t.Remove("/a/d"), ElementsAre("/a", "/"));
  EXPECT_FALSE(t.IsAbove("/"));
  EXPECT_EQ(t.share_count(), 0u);
}

TEST(ShareTreeTest, NestedShareKeepsItsParentShareAbove) {
  ShareTree t;
  t.Add("/h");
  t.Add("/h/u1");
  EXPECT_TRUE(t.IsShare("/h"));
  EXPECT_TRUE(t.IsAbove("/h"));
  t.Remove("/h");
  EXPECT_FALSE(t.IsShare("/h"));
  EXPECT_TRUE(t.IsAbove("/h"));
  std::vector<std::string> seen;
  t.AnyShareBelow("/", [&](const std::string& s) {
    seen.push_back(s);
    return false;
  });
  EXPECT_THAT(seen, ElementsAre("/h/u1"));
}

TEST(ShareTreeTest, AncestorsOfPaths) {
  EXPECT_THAT(ShareTree::Ancestors("/a/b"), ElementsAre("/a", "/"));
  EXPECT_THAT(ShareTree::Ancestors("/a"), ElementsAre("/"));
  EXPECT_THAT(ShareTree::Ancestors("/"), IsEmpty());
}

}  // namespace
}  // namespace sharemgrd::kernel
