#include "libshare/share_table.h"

#include <errno.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "libshare/catalog.h"
#include "share_test_dirs.h"

namespace libshare {
namespace {

using ::libshare::testing::AddShare;
using ::libshare::testing::CreateGroup;
using ::libshare::testing::TempDir;

class ShareTableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto g = std::make_unique<ShareGroup>();
    g->name = "g";
    g->compiled = std::make_shared<const ShareOptions>(*ParseOptions(""));
    group_ = g.get();
    table_.AddGroup(std::move(g));
  }

  void Add(const std::string& path, uint64_t dev = 1) {
    auto s = std::make_unique<Share>();
    s->path = path;
    s->dev = dev;
    s->group = group_;
    table_.Insert(std::move(s));
  }

  ShareTable table_;
  ShareGroup* group_ = nullptr;
};

TEST_F(ShareTableTest, FindsInsertedShareByPath) {
  Add("/export/a");
  const Share* s = table_.Find("/export/a");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->path, "/export/a");
  EXPECT_EQ(table_.Find("/export"), nullptr);
  EXPECT_EQ(table_.Find("/export/a/b"), nullptr);
  EXPECT_EQ(table_.size(), 1u);
  EXPECT_EQ(group_->shares.size(), 1u);
}

// A table told it is destroyed as its process exits frees nothing: its
// shares and groups stay as they were, linked (the AddressSanitizer build
// would stop here on a share freed).
TEST(ShareTableAtExit, KeptMemoryOutlivesTheTable) {
  auto table = std::make_unique<ShareTable>();
  auto g = std::make_unique<ShareGroup>();
  g->name = "a group whose name is longer than a short string";
  g->compiled = std::make_shared<const ShareOptions>(*ParseOptions(""));
  ShareGroup* group = g.get();
  table->AddGroup(std::move(g));
  std::vector<const Share*> shares;
  for (int i = 0; i < 3; ++i) {
    auto s = std::make_unique<Share>();
    s->path =
        "/export/home/a-path-longer-than-a-short-string-" + std::to_string(i);
    s->group = group;
    shares.push_back(s.get());
    ASSERT_EQ(table->Insert(std::move(s)), nullptr);
  }
  table->KeepMemoryAtExit();
  table.reset();
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(
        shares[i]->path,
        "/export/home/a-path-longer-than-a-short-string-" + std::to_string(i));
    EXPECT_TRUE(shares[i]->group_hook.is_linked());
    EXPECT_TRUE(shares[i]->path_hook.is_linked());
    EXPECT_EQ(shares[i]->group, group);
  }
  EXPECT_EQ(group->name, "a group whose name is longer than a short string");
  EXPECT_EQ(group->shares.size(), 3u);
}

TEST_F(ShareTableTest, InsertOfAPathTheTableHasHandsTheShareBack) {
  Add("/export/a", 1);
  auto again = std::make_unique<Share>();
  again->path = "/export/a";
  again->dev = 2;
  again->group = group_;
  Share* raw = again.get();
  std::unique_ptr<Share> back = table_.Insert(std::move(again));
  EXPECT_EQ(back.get(), raw);
  EXPECT_EQ(table_.size(), 1u);
  EXPECT_EQ(group_->shares.size(), 1u);
  EXPECT_EQ(table_.Find("/export/a")->dev, 1u);
  EXPECT_EQ(table_.CountBelow("/export", 1), 1);
  EXPECT_EQ(table_.CountBelow("/export", 2), 0);
}

TEST_F(ShareTableTest, RemoveReturnsOwnershipAndUnlinks) {
  Add("/export/a");
  std::unique_ptr<Share> s = table_.Remove("/export/a");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->path, "/export/a");
  EXPECT_EQ(table_.Find("/export/a"), nullptr);
  EXPECT_EQ(table_.size(), 0u);
  EXPECT_TRUE(group_->shares.empty());
  EXPECT_EQ(table_.Remove("/export/a"), nullptr);
}

TEST_F(ShareTableTest, NearestFindsExactThenAncestor) {
  Add("/export/home", 1);
  Add("/export/home/u1", 2);
  auto any = [](const Share&) { return true; };
  EXPECT_EQ(table_.FindNearest("/export/home/u1/sub/deeper", any)->path,
            "/export/home/u1");
  EXPECT_EQ(table_.FindNearest("/export/home/u1", any)->path,
            "/export/home/u1");
  EXPECT_EQ(table_.FindNearest("/export/home/u2", any)->path, "/export/home");
  EXPECT_EQ(table_.FindNearest("/export/home2", any), nullptr);
  EXPECT_EQ(table_.FindNearest("/export", any), nullptr);
}

TEST_F(ShareTableTest, NearestSkipsSharesThePredicateRefuses) {
  Add("/export/home", 1);
  Add("/export/home/u1", 2);
  const Share* s = table_.FindNearest(
      "/export/home/u1/x", [](const Share& s) { return s.dev == 1; });
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->path, "/export/home");
}

TEST_F(ShareTableTest, RootShareIsAnAncestorOfEverything) {
  Add("/", 1);
  auto any = [](const Share&) { return true; };
  EXPECT_EQ(table_.FindNearest("/a/b", any)->path, "/");
  EXPECT_EQ(table_.CheckNesting("/a/b", 1).message(),
            "/a/b: path is inside share /");
}

TEST_F(ShareTableTest, PathInsideShareOnSameDeviceIsRefused) {
  Add("/export", 7);
  absl::Status s = table_.CheckNesting("/export/a/b", 7);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "/export/a/b: path is inside share /export");
}

TEST_F(ShareTableTest, PathAboveShareOnSameDeviceIsRefused) {
  Add("/export/a/b", 7);
  absl::Status s = table_.CheckNesting("/export", 7);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "/export: path contains share /export/a/b");
  EXPECT_FALSE(table_.CheckNesting("/", 7).ok());
}

TEST_F(ShareTableTest, NestingAcrossDevicesIsAllowed) {
  Add("/export/home", 1);
  EXPECT_TRUE(table_.CheckNesting("/export/home/u1", 2).ok());
  Add("/export/home/u1", 2);
  EXPECT_TRUE(table_.CheckNesting("/export", 3).ok());
  EXPECT_FALSE(table_.CheckNesting("/export", 1).ok());
  EXPECT_FALSE(table_.CheckNesting("/export/home/u1/x", 2).ok());
}

TEST_F(ShareTableTest, SiblingWithCommonPrefixIsNotNested) {
  Add("/export/a", 1);
  EXPECT_TRUE(table_.CheckNesting("/export/ab", 1).ok());
  EXPECT_TRUE(table_.CheckNesting("/export/b", 1).ok());
}

TEST_F(ShareTableTest, RemovalLiftsTheNestingRestriction) {
  Add("/export/a/b", 1);
  EXPECT_EQ(table_.CountBelow("/export", 1), 1u);
  table_.Remove("/export/a/b");
  EXPECT_EQ(table_.CountBelow("/export", 1), 0u);
  EXPECT_TRUE(table_.CheckNesting("/export", 1).ok());
}

TEST_F(ShareTableTest, CountBelowIsPerDevice) {
  Add("/e/a", 1);
  Add("/e/b", 1);
  Add("/e/c", 2);
  EXPECT_EQ(table_.CountBelow("/e", 1), 2u);
  EXPECT_EQ(table_.CountBelow("/e", 2), 1u);
  EXPECT_EQ(table_.CountBelow("/", 1), 2u);
  EXPECT_EQ(table_.CountBelow("/e/a", 1), 0u);
}

// Siblings linked in a row reuse the last parent's counters; a removal
// (which may erase them) or another device or parent must not.
TEST_F(ShareTableTest, SiblingsCountedInARowStayRightAcrossRemovalsAndDevices) {
  Add("/e/h/a", 1);
  Add("/e/h/b", 1);
  Add("/e/h/c", 2);  // the same parent, another device
  Add("/e/h/d", 1);
  Add("/e/x", 1);  // another parent
  Add("/e/h/f", 1);
  EXPECT_EQ(table_.CountBelow("/e/h", 1), 4u);
  EXPECT_EQ(table_.CountBelow("/e/h", 2), 1u);
  EXPECT_EQ(table_.CountBelow("/e", 1), 5u);
  EXPECT_EQ(table_.CountBelow("/", 2), 1u);
  for (const char* p : {"/e/h/a", "/e/h/b", "/e/h/d", "/e/h/f", "/e/x"}) {
    table_.Remove(p);
  }
  EXPECT_EQ(table_.CountBelow("/e/h", 1), 0u);
  EXPECT_EQ(table_.CountBelow("/e", 1), 0u);
  // The counters the row used are gone; linking there again counts anew.
  Add("/e/h/g", 1);
  Add("/e/h/i", 1);
  EXPECT_EQ(table_.CountBelow("/e/h", 1), 2u);
  EXPECT_EQ(table_.CountBelow("/", 1), 2u);
  EXPECT_EQ(table_.CountBelow("/e/h", 2), 1u);
  EXPECT_FALSE(table_.CheckNesting("/e", 1).ok());
  table_.Remove("/e/h/g");
  table_.Remove("/e/h/i");
  EXPECT_TRUE(table_.CheckNesting("/e", 1).ok());
  EXPECT_FALSE(table_.CheckNesting("/e", 2).ok());
}

TEST_F(ShareTableTest, MoveToGroupRelinksGroupLists) {
  auto h = std::make_unique<ShareGroup>();
  h->name = "h";
  ShareGroup* hp = h.get();
  table_.AddGroup(std::move(h));
  Add("/a");
  table_.MoveToGroup(table_.FindMutable("/a"), hp);
  EXPECT_TRUE(group_->shares.empty());
  EXPECT_EQ(hp->shares.size(), 1u);
  EXPECT_EQ(table_.Find("/a")->group, hp);
}

TEST_F(ShareTableTest, PreparedCapacityDoublesAndInstallsWithoutLoss) {
  std::size_t before = table_.bucket_count();
  for (int i = 0; i < 10; ++i) Add("/s" + std::to_string(i));
  ShareTable::Buckets b = table_.PrepareCapacity(before * 3);
  ASSERT_FALSE(b.empty());
  EXPECT_EQ(b.size(), before * 4);
  table_.InstallCapacity(std::move(b));
  EXPECT_EQ(table_.bucket_count(), before * 4);
  for (int i = 0; i < 10; ++i) {
    EXPECT_NE(table_.Find("/s" + std::to_string(i)), nullptr);
  }
  EXPECT_TRUE(table_.PrepareCapacity(before).empty());
}

TEST_F(ShareTableTest, HoldsOneHundredThousandShares) {
  constexpr int kShares = 100000;
  table_.InstallCapacity(table_.PrepareCapacity(kShares));
  std::size_t buckets = table_.bucket_count();
  for (int i = 0; i < kShares; ++i) {
    Add("/export/home/u" + std::to_string(i), 1000 + i);
  }
  EXPECT_EQ(table_.size(), static_cast<std::size_t>(kShares));
  EXPECT_EQ(table_.bucket_count(), buckets);  // pre-sized: no rehash
  for (int i = 0; i < kShares; i += 997) {
    std::string p = "/export/home/u" + std::to_string(i);
    ASSERT_NE(table_.Find(p), nullptr) << p;
    EXPECT_EQ(table_.Find(p)->dev, static_cast<uint64_t>(1000 + i));
  }
  EXPECT_EQ(table_.CountBelow("/export/home", 1000), 1u);
  EXPECT_FALSE(table_.CheckNesting("/export/home/u5/x", 1005).ok());
  EXPECT_TRUE(table_.CheckNesting("/export/home/u5/x", 1).ok());
  for (int i = 0; i < kShares; i += 2) {
    ASSERT_NE(table_.Remove("/export/home/u" + std::to_string(i)), nullptr);
  }
  EXPECT_EQ(table_.size(), static_cast<std::size_t>(kShares / 2));
  EXPECT_EQ(table_.Find("/export/home/u0"), nullptr);
  EXPECT_NE(table_.Find("/export/home/u1"), nullptr);
}

TEST_F(ShareTableTest, GenerationIsWhatTheOwnerSets) {
  EXPECT_EQ(table_.generation(), 0u);
  table_.set_generation(5);
  EXPECT_EQ(table_.generation(), 5u);
}

// Through the Catalog, on real folders: the device numbers come from
// stat(), so nesting across file systems needs a second file system.
class NestingOnDiskTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Catalog::Config config;
    config.db_path = dir_.path() + "/db/shares.db";
    auto c = Catalog::Open(config);
    ASSERT_TRUE(c.ok()) << c.status();
    catalog_ = *std::move(c);
    Batch b;
    b.ops.push_back(CreateGroup("g"));
    ASSERT_TRUE(catalog_->Apply(b).ok());
  }
  void TearDown() override {
    if (!mounted_.empty()) umount2(mounted_.c_str(), MNT_DETACH);
  }

  BatchResult Add(const std::string& path) {
    Batch b;
    b.ops.push_back(AddShare(path, "g"));
    return catalog_->Apply(b);
  }

  TempDir dir_;
  std::string mounted_;
  std::unique_ptr<Catalog> catalog_;
};

TEST_F(NestingOnDiskTest, GenerationChangesOnEveryCommittedChange) {
  uint64_t g0 = catalog_->generation();
  ASSERT_TRUE(Add(dir_.Mkdir("a")).ok());
  uint64_t g1 = catalog_->generation();
  EXPECT_GT(g1, g0);
  Batch b;
  b.ops.push_back(testing::RemoveShare(dir_.path() + "/a"));
  ASSERT_TRUE(catalog_->Apply(b).ok());
  EXPECT_GT(catalog_->generation(), g1);
}

TEST_F(NestingOnDiskTest, SharesOnOneFileSystemCannotNest) {
  std::string outer = dir_.Mkdir("export");
  std::string inner = dir_.Mkdir("export/home/u1");
  ASSERT_TRUE(Add(outer).ok());
  BatchResult r = Add(inner);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].message, inner + ": path is inside share " + outer);
}

TEST_F(NestingOnDiskTest, SharesOnDifferentFileSystemsMayNest) {
  std::string outer = dir_.Mkdir("export/home");
  std::string inner = dir_.Mkdir("export/home/u1");
  if (mount("tmpfs", inner.c_str(), "tmpfs", 0, "size=1m") != 0) {
    GTEST_SKIP() << "cannot mount a tmpfs on " << inner << ": "
                 << strerror(errno);
  }
  mounted_ = inner;
  ASSERT_EQ(mkdir((inner + "/sub").c_str(), 0755), 0);
  BatchResult r1 = Add(outer);
  ASSERT_TRUE(r1.ok()) << r1.errors[0].message;
  BatchResult r2 = Add(inner);
  ASSERT_TRUE(r2.ok()) << r2.errors[0].message;
  EXPECT_EQ(catalog_->share_count(), 2u);
  // Still refused inside the nested dataset itself.
  BatchResult r3 = Add(inner + "/sub");
  ASSERT_EQ(r3.errors.size(), 1u);
  EXPECT_EQ(r3.errors[0].message,
            inner + "/sub: path is inside share " + inner);
  EXPECT_EQ(catalog_->FindNearest(inner + "/sub")->path, inner);
}

}  // namespace
}  // namespace libshare
