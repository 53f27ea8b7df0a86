#include "exports_follow.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "libshare/batch.h"
#include "libshare/catalog.h"

namespace sharemgrd {
namespace {

using ::libshare::Operation;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(FollowGroupNameTest, ExportsFileNamesGiveGroupNames) {
  EXPECT_EQ(*FollowGroupName("/etc/exports"), "exports");
  EXPECT_EQ(*FollowGroupName("/etc/exports.d/zfs.exports"), "exports-zfs");
  EXPECT_EQ(*FollowGroupName("/srv/lab"), "exports-lab");
  EXPECT_EQ(*FollowGroupName("/e/my.host.exports"), "exports-my_host");
}

TEST(ParseFollowPatternTest, GlobOnlyInTheFileName) {
  absl::StatusOr<FollowPattern> p =
      ParseFollowPattern("/etc/exports.d/*.exports");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->folder, "/etc/exports.d");
  EXPECT_EQ(p->name, "*.exports");
  EXPECT_TRUE(p->glob);
  EXPECT_FALSE(ParseFollowPattern("/etc/exports")->glob);
  EXPECT_THAT(ParseFollowPattern("/etc/*/zfs.exports").status().message(),
              HasSubstr("not its folder"));
  EXPECT_THAT(ParseFollowPattern("exports").status().message(),
              HasSubstr("not an absolute path"));
  EXPECT_THAT(ParseFollowPattern("/etc/exports.d/").status().message(),
              HasSubstr("names a folder"));
}

Operation Add(const std::string& path, const std::string& options) {
  Operation op;
  op.type = Operation::Type::kAddShare;
  op.path = path;
  op.options = options;
  return op;
}

libshare::ShareInfo Have(const std::string& path, const std::string& options) {
  libshare::ShareInfo s;
  s.path = path;
  s.options = options;
  return s;
}

TEST(FollowDiffTest, RemovesThenOptionChangesThenAdds) {
  std::vector<int> origin;
  std::vector<Operation> ops =
      FollowDiff("g", {Have("/a", "rw"), Have("/b", "ro"), Have("/c", "rw")},
                 {Add("/d", "rw"), Add("/b", "rw"), Add("/c", "rw")}, &origin);
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_EQ(ops[0].type, Operation::Type::kRemoveShare);
  EXPECT_EQ(ops[0].path, "/a");
  EXPECT_EQ(ops[1].type, Operation::Type::kSetOptions);
  EXPECT_EQ(ops[1].path, "/b");
  EXPECT_EQ(ops[1].options, "rw");
  EXPECT_EQ(ops[2].type, Operation::Type::kAddShare);
  EXPECT_EQ(ops[2].path, "/d");
  for (const Operation& op : ops) EXPECT_EQ(op.group, "g");
  EXPECT_THAT(origin, ElementsAre(-1, 1, 0));
}

TEST(FollowDiffTest, SameFileGivesNoOperation) {
  std::vector<int> origin;
  EXPECT_THAT(FollowDiff("g", {Have("/a", "rw")}, {Add("/a", "rw")}, &origin),
              IsEmpty());
}

// A follower over a real Catalog and real files in a temporary folder.
class ExportsFollowerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/sharemgrd_follow_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    char* real = realpath(tmpl, nullptr);
    ASSERT_NE(real, nullptr);
    dir_ = real;
    free(real);
    for (const char* d : {"/d", "/ex", "/ex/a", "/ex/b", "/ex/c"}) {
      ASSERT_EQ(mkdir((dir_ + d).c_str(), 0755), 0);
    }
    OpenCatalog();
  }
  void TearDown() override {
    follower_.reset();
    catalog_.reset();
    std::string cmd = "rm -rf '" + dir_ + "'";
    ASSERT_EQ(system(cmd.c_str()), 0);
  }

  void OpenCatalog() {
    follower_.reset();
    catalog_.reset();
    auto catalog = libshare::Catalog::Open({dir_ + "/db", 1});
    ASSERT_TRUE(catalog.ok()) << catalog.status();
    catalog_ = std::move(*catalog);
  }

  absl::Status StartFollower(std::vector<std::string> patterns,
                             absl::Duration settle = absl::Milliseconds(50)) {
    ExportsFollower::Config c;
    c.patterns = std::move(patterns);
    c.settle = settle;
    c.catalog = catalog_.get();
    c.apply = [this](const libshare::Batch& b) {
      absl::MutexLock l(&mu_);
      batches_.push_back(b);
      return catalog_->Apply(b);
    };
    absl::StatusOr<std::unique_ptr<ExportsFollower>> f =
        ExportsFollower::Start(std::move(c));
    if (!f.ok()) return f.status();
    follower_ = *std::move(f);
    return absl::OkStatus();
  }

  // Writes a file as OpenZFS does: a temporary file renamed over it.
  void Replace(const std::string& name, const std::string& text) {
    std::string tmp = dir_ + "/d/.tmp";
    {
      std::ofstream o(tmp);
      o << text;
    }
    ASSERT_EQ(rename(tmp.c_str(), (dir_ + "/d/" + name).c_str()), 0);
  }

  // Waits (up to 10 s) until the group's shares, as "PATH OPTIONS" lines,
  // are `want`.
  std::vector<std::string> WaitFor(const std::string& group,
                                   const std::vector<std::string>& want) {
    std::vector<std::string> got;
    for (int i = 0; i < 1000; ++i) {
      got = Shares(group);
      if (got == want) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return got;
  }

  std::vector<std::string> Shares(const std::string& group) {
    std::vector<std::string> out;
    auto shares = catalog_->ListShares({group});
    if (!shares.ok()) return {"(no group)"};
    for (const libshare::ShareInfo& s : *shares) {
      out.push_back(s.path.substr(dir_.size()) + " " + s.options);
    }
    return out;
  }

  std::string ManagedBy(const std::string& group) {
    for (const libshare::GroupInfo& g : catalog_->ListGroups()) {
      if (g.name == group) return g.managed_by;
    }
    return "(no group)";
  }

  std::string dir_;
  std::unique_ptr<libshare::Catalog> catalog_;
  std::unique_ptr<ExportsFollower> follower_;
  absl::Mutex mu_;
  std::vector<libshare::Batch> batches_;
};

TEST_F(ExportsFollowerTest, FileAtStartBecomesManagedGroup) {
  Replace("zfs.exports", dir_ + "/ex/a *(rw,no_subtree_check)\n");
  ASSERT_TRUE(StartFollower({dir_ + "/d/zfs.exports"}).ok());
  EXPECT_THAT(Shares("exports-zfs"), ElementsAre("/ex/a rw"));
  EXPECT_EQ(ManagedBy("exports-zfs"), dir_ + "/d/zfs.exports");
  EXPECT_EQ(follower_->ErrorFor("exports-zfs"), "");
}

TEST_F(ExportsFollowerTest, RenameReplaceAppliedAsOneBatch) {
  Replace("zfs.exports",
          dir_ + "/ex/a *(rw)\n" + dir_ + "/ex/b 10.0.0.1(ro)\n");
  ASSERT_TRUE(StartFollower({dir_ + "/d/*.exports"}).ok());
  {
    absl::MutexLock l(&mu_);
    batches_.clear();
  }
  // One removed, one changed, one added.
  Replace("zfs.exports",
          dir_ + "/ex/b 10.0.0.1(rw)\n" + dir_ + "/ex/c *(ro)\n");
  EXPECT_THAT(WaitFor("exports-zfs", {"/ex/b rw=10.0.0.1", "/ex/c ro"}),
              ElementsAre("/ex/b rw=10.0.0.1", "/ex/c ro"));
  absl::MutexLock l(&mu_);
  ASSERT_EQ(batches_.size(), 1u);
  ASSERT_EQ(batches_[0].ops.size(), 3u);
  EXPECT_EQ(batches_[0].ops[0].type, Operation::Type::kRemoveShare);
  EXPECT_EQ(batches_[0].ops[1].type, Operation::Type::kSetOptions);
  EXPECT_EQ(batches_[0].ops[2].type, Operation::Type::kAddShare);
  EXPECT_EQ(batches_[0].manager, dir_ + "/d/zfs.exports");
}

TEST_F(ExportsFollowerTest, GlobPicksUpANewFile) {
  ASSERT_TRUE(StartFollower({dir_ + "/d/*.exports"}).ok());
  Replace("lab.exports", dir_ + "/ex/a *(ro)\n");
  EXPECT_THAT(WaitFor("exports-lab", {"/ex/a ro"}), ElementsAre("/ex/a ro"));
  EXPECT_EQ(ManagedBy("exports-lab"), dir_ + "/d/lab.exports");
}

TEST_F(ExportsFollowerTest, BadLineKeepsLastGoodStateAndNamesTheLine) {
  Replace("zfs.exports", dir_ + "/ex/a *(rw)\n");
  ASSERT_TRUE(StartFollower({dir_ + "/d/zfs.exports"}).ok());
  const uint64_t before = follower_->applied();
  Replace("zfs.exports", dir_ + "/ex/b *(ro)\n" + dir_ + "/ex/c *(bogus)\n");
  std::string error;
  for (int i = 0; i < 1000 && error.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    error = follower_->ErrorFor("exports-zfs");
  }
  EXPECT_THAT(error, HasSubstr(dir_ + "/d/zfs.exports:2: "));
  EXPECT_THAT(error, HasSubstr("bogus"));
  EXPECT_THAT(Shares("exports-zfs"), ElementsAre("/ex/a rw"));
  EXPECT_EQ(follower_->applied(), before);
  // Fixed: applied, error cleared.
  Replace("zfs.exports", dir_ + "/ex/b *(ro)\n");
  EXPECT_THAT(WaitFor("exports-zfs", {"/ex/b ro"}), ElementsAre("/ex/b ro"));
  EXPECT_EQ(follower_->ErrorFor("exports-zfs"), "");
}

TEST_F(ExportsFollowerTest, SyncNowAppliesARenameBeforeTheSettleTime) {
  Replace("zfs.exports", dir_ + "/ex/a *(rw)\n");
  // A settle time no test waits for: only SyncNow can apply the change.
  ASSERT_TRUE(StartFollower({dir_ + "/d/*.exports"}, absl::Hours(1)).ok());
  Replace("zfs.exports", dir_ + "/ex/b *(ro)\n");
  Replace("lab.exports", dir_ + "/ex/c *(rw)\n");
  std::vector<ExportsFollower::FileState> files = follower_->SyncNow();
  EXPECT_THAT(Shares("exports-zfs"), ElementsAre("/ex/b ro"));
  EXPECT_THAT(Shares("exports-lab"), ElementsAre("/ex/c rw"));
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].path, dir_ + "/d/lab.exports");
  EXPECT_EQ(files[0].group, "exports-lab");
  EXPECT_TRUE(files[0].changed);
  EXPECT_EQ(files[1].group, "exports-zfs");
  EXPECT_TRUE(files[1].changed);
  EXPECT_EQ(files[1].error, "");
  // Nothing new: nothing changed.
  files = follower_->SyncNow();
  ASSERT_EQ(files.size(), 2u);
  EXPECT_FALSE(files[0].changed);
  EXPECT_FALSE(files[1].changed);
}

TEST_F(ExportsFollowerTest, SyncNowReportsTheRefusedLine) {
  Replace("zfs.exports", dir_ + "/ex/a *(rw)\n");
  ASSERT_TRUE(StartFollower({dir_ + "/d/zfs.exports"}, absl::Hours(1)).ok());
  Replace("zfs.exports", dir_ + "/ex/b *(ro)\n" + dir_ + "/ex/c *(bogus)\n");
  std::vector<ExportsFollower::FileState> files = follower_->SyncNow();
  ASSERT_EQ(files.size(), 1u);
  EXPECT_FALSE(files[0].changed);
  EXPECT_THAT(files[0].error, HasSubstr(dir_ + "/d/zfs.exports:2: "));
  EXPECT_THAT(Shares("exports-zfs"), ElementsAre("/ex/a rw"));
}

TEST_F(ExportsFollowerTest, SyncNowFromManyThreadsAppliesEachChangeOnce) {
  Replace("zfs.exports", dir_ + "/ex/a *(rw)\n");
  ASSERT_TRUE(StartFollower({dir_ + "/d/zfs.exports"}, absl::Hours(1)).ok());
  Replace("zfs.exports", dir_ + "/ex/b *(ro)\n");
  const uint64_t before = follower_->applied();
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([this] { (void)follower_->SyncNow(); });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(follower_->applied(), before + 1);
  EXPECT_THAT(Shares("exports-zfs"), ElementsAre("/ex/b ro"));
}

TEST_F(ExportsFollowerTest, RefusedBatchNamesTheLineOfTheShare) {
  Replace("zfs.exports", dir_ + "/ex/a *(rw)\n");
  ASSERT_TRUE(StartFollower({dir_ + "/d/zfs.exports"}).ok());
  Replace("zfs.exports", dir_ + "/ex/a *(rw)\n" + dir_ + "/ex/missing *(rw)\n");
  std::string error;
  for (int i = 0; i < 1000 && error.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    error = follower_->ErrorFor("exports-zfs");
  }
  EXPECT_THAT(error, HasSubstr(dir_ + "/d/zfs.exports:2: "));
  EXPECT_THAT(Shares("exports-zfs"), ElementsAre("/ex/a rw"));
}

TEST_F(ExportsFollowerTest, DeletedFileEmptiesItsGroup) {
  Replace("zfs.exports", dir_ + "/ex/a *(rw)\n");
  ASSERT_TRUE(StartFollower({dir_ + "/d/zfs.exports"}).ok());
  ASSERT_EQ(unlink((dir_ + "/d/zfs.exports").c_str()), 0);
  EXPECT_THAT(WaitFor("exports-zfs", {}), IsEmpty());
  EXPECT_EQ(ManagedBy("exports-zfs"), dir_ + "/d/zfs.exports");
}

TEST_F(ExportsFollowerTest, ManagedGroupRefusesEditsByHand) {
  Replace("zfs.exports", dir_ + "/ex/a *(rw)\n");
  ASSERT_TRUE(StartFollower({dir_ + "/d/zfs.exports"}).ok());
  const std::string file = dir_ + "/d/zfs.exports";
  std::vector<Operation> by_hand(5);
  by_hand[0] = Add(dir_ + "/ex/b", "rw");
  by_hand[0].group = "exports-zfs";
  by_hand[1].type = Operation::Type::kRemoveShare;
  by_hand[1].path = dir_ + "/ex/a";
  by_hand[2].type = Operation::Type::kSetOptions;
  by_hand[2].group = "exports-zfs";
  by_hand[2].options = "ro";
  by_hand[3].type = Operation::Type::kDeleteGroup;
  by_hand[3].group = "exports-zfs";
  by_hand[3].force = true;
  by_hand[4].type = Operation::Type::kManageGroup;
  by_hand[4].group = "exports-zfs";
  for (const Operation& op : by_hand) {
    libshare::Batch b;
    b.ops.push_back(op);
    libshare::BatchResult r = catalog_->Apply(b);
    ASSERT_EQ(r.errors.size(), 1u) << libshare::OperationName(op.type);
    if (op.type != Operation::Type::kManageGroup) {
      EXPECT_THAT(r.errors[0].message, HasSubstr("managed by " + file));
    }
  }
  // Disabling is not editing.
  libshare::Batch b;
  b.ops.resize(1);
  b.ops[0].type = Operation::Type::kDisableGroup;
  b.ops[0].group = "exports-zfs";
  EXPECT_TRUE(catalog_->Apply(b).ok());
  EXPECT_THAT(Shares("exports-zfs"), ElementsAre("/ex/a rw"));
}

TEST_F(ExportsFollowerTest, MarkSurvivesRestartAndIsReleasedWhenUnfollowed) {
  Replace("zfs.exports", dir_ + "/ex/a *(rw)\n");
  ASSERT_TRUE(StartFollower({dir_ + "/d/zfs.exports"}).ok());
  OpenCatalog();  // the store read again
  EXPECT_EQ(ManagedBy("exports-zfs"), dir_ + "/d/zfs.exports");
  ASSERT_TRUE(StartFollower({dir_ + "/d/other.exports"}).ok());
  EXPECT_EQ(ManagedBy("exports-zfs"), "");
  EXPECT_THAT(Shares("exports-zfs"), ElementsAre("/ex/a rw"));
}

TEST_F(ExportsFollowerTest, TwoFilesForOneGroupRefusedAtStart) {
  ASSERT_EQ(mkdir((dir_ + "/e").c_str(), 0755), 0);
  absl::Status s =
      StartFollower({dir_ + "/d/x.exports", dir_ + "/e/x.exports"});
  EXPECT_THAT(s.message(), HasSubstr("both be mirrored into group exports-x"));
}

TEST_F(ExportsFollowerTest, MissingFolderRefusedAtStart) {
  absl::Status s = StartFollower({dir_ + "/nope/*.exports"});
  EXPECT_THAT(s.message(),
              HasSubstr("folder " + dir_ + "/nope does not exist"));
}

}  // namespace
}  // namespace sharemgrd
