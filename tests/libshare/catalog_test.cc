#include "libshare/catalog.h"

#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "libshare/store.h"
#include "share_test_dirs.h"

namespace libshare {
namespace {

using ::libshare::testing::AddShare;
using ::libshare::testing::CreateGroup;
using ::libshare::testing::GroupOp;
using ::libshare::testing::RemoveShare;
using ::libshare::testing::TempDir;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;
using Type = Operation::Type;

class CatalogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = dir_.path() + "/state/shares.db";
    Reopen();
  }

  void Reopen(int threads = 1) {
    catalog_.reset();
    Catalog::Config config;
    config.db_path = db_;
    config.load_threads = threads;
    config.busy_timeout_ms = 50;
    auto c = Catalog::Open(config);
    ASSERT_TRUE(c.ok()) << c.status();
    catalog_ = *std::move(c);
  }

  BatchResult Apply(std::vector<Operation> ops) {
    Batch b;
    b.ops = std::move(ops);
    return catalog_->Apply(b);
  }

  // Applies and expects success.
  void MustApply(std::vector<Operation> ops) {
    BatchResult r = Apply(std::move(ops));
    ASSERT_TRUE(r.ok()) << (r.errors.empty() ? r.commit_error
                                             : r.errors[0].message);
  }

  // Runs SQL on the closed store through a plain SQLite connection.
  void RawExec(const std::string& sql) {
    ::libshare::testing::RawExec(db_, sql);
  }

  std::vector<std::string> SharePaths() {
    auto shares = catalog_->ListShares({});
    EXPECT_TRUE(shares.ok());
    std::vector<std::string> out;
    for (const ShareInfo& s : *shares) out.push_back(s.path);
    return out;
  }

  TempDir dir_;
  std::string db_;
  std::unique_ptr<Catalog> catalog_;
};

TEST_F(CatalogTest, OpenCreatesFolderAndEmptyStore) {
  struct stat st;
  ASSERT_EQ(stat((dir_.path() + "/state").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0755u);
  EXPECT_EQ(catalog_->share_count(), 0u);
  EXPECT_EQ(catalog_->group_count(), 0u);
}

// Catalog::Config::beside_load runs on a thread of its own, once the
// store exists with its schema current, and Open returns after it; on a
// store created by this Open the file does not exist before that.
TEST_F(CatalogTest, BesideLoadRunsOnItsOwnThreadOnceTheStoreIsCurrent) {
  catalog_.reset();
  std::string a = dir_.Mkdir("a");
  Catalog::Config config;
  config.db_path = dir_.path() + "/fresh/shares.db";
  std::thread::id ran_on;
  int version = -1;
  std::atomic<bool> done{false};
  config.beside_load = [&] {
    ran_on = std::this_thread::get_id();
    sqlite3* db = nullptr;
    if (sqlite3_open_v2(config.db_path.c_str(), &db, SQLITE_OPEN_READONLY,
                        nullptr) == SQLITE_OK) {
      sqlite3_stmt* st = nullptr;
      if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, nullptr) ==
              SQLITE_OK &&
          sqlite3_step(st) == SQLITE_ROW) {
        version = sqlite3_column_int(st, 0);
      }
      sqlite3_finalize(st);
    }
    sqlite3_close(db);
    // Longer than the load of an empty table: Open waits for it.
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    done = true;
  };
  auto c = Catalog::Open(config);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(done.load());
  EXPECT_NE(ran_on, std::this_thread::get_id());
  EXPECT_EQ(version, Store::kSchemaVersion);
  // And the catalog it returned works as any other.
  Batch b;
  b.ops = {CreateGroup("g"), AddShare(a, "g")};
  EXPECT_TRUE((*c)->Apply(b).ok());
}

// What beside_load throws on its thread is thrown by Open, after the load,
// as if it had run on the caller's thread (not std::terminate).
TEST_F(CatalogTest, WhatBesideLoadThrowsOpenThrows) {
  catalog_.reset();
  Catalog::Config config;
  config.db_path = db_;
  config.beside_load = [] { throw std::runtime_error("beside"); };
  try {
    auto c = Catalog::Open(config);
    ADD_FAILURE() << "Open returned";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "beside");
  }
  Reopen();  // the store is left as it was
  EXPECT_EQ(catalog_->share_count(), 0u);
}

// A load that fails (a row naming no group) still waits for beside_load,
// which may use what the caller owns.
TEST_F(CatalogTest, BesideLoadIsWaitedForWhenTheLoadFails) {
  std::string a = dir_.Mkdir("a");
  MustApply({CreateGroup("g"), AddShare(a, "g")});
  catalog_.reset();
  RawExec("UPDATE shares SET \"group\" = 'gone'");
  Catalog::Config config;
  config.db_path = db_;
  std::atomic<bool> done{false};
  config.beside_load = [&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    done = true;
  };
  auto c = Catalog::Open(config);
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("group gone does not exist"));
  EXPECT_TRUE(done.load());
}

TEST_F(CatalogTest, CreateGroupAndAddShareInOneBatch) {
  std::string a = dir_.Mkdir("a");
  BatchResult r = Apply({CreateGroup("homes"), AddShare(a, "homes")});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.applied, 2u);
  EXPECT_EQ(r.generation, catalog_->generation());
  EXPECT_THAT(SharePaths(), ElementsAre(a));
  std::vector<GroupInfo> groups = catalog_->ListGroups();
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].name, "homes");
  EXPECT_EQ(groups[0].share_count, 1u);
}

TEST_F(CatalogTest, AddThenRemoveSamePathInOneBatchLeavesNoShare) {
  std::string a = dir_.Mkdir("a");
  MustApply({CreateGroup("g"), AddShare(a, "g"), RemoveShare(a)});
  EXPECT_EQ(catalog_->share_count(), 0u);
  Reopen();
  EXPECT_EQ(catalog_->share_count(), 0u);
  EXPECT_EQ(catalog_->group_count(), 1u);
}

TEST_F(CatalogTest, CreatingExistingGroupIsRefused) {
  MustApply({CreateGroup("g")});
  BatchResult r = Apply({CreateGroup("g")});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].message, "group g already exists");
}

TEST_F(CatalogTest, CreateWithBadOptionsIsRefused) {
  BatchResult r = Apply({CreateGroup("g", "bogus")});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_THAT(r.errors[0].message, HasSubstr("bogus"));
  EXPECT_EQ(catalog_->group_count(), 0u);
}

TEST_F(CatalogTest, BadGroupNameIsRefused) {
  BatchResult r = Apply({CreateGroup("9lives")});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_THAT(r.errors[0].message, HasSubstr("9lives"));
}

TEST_F(CatalogTest, DeletingNonEmptyGroupNeedsForce) {
  MustApply({CreateGroup("homes"), AddShare(dir_.Mkdir("a"), "homes"),
             AddShare(dir_.Mkdir("b"), "homes"),
             AddShare(dir_.Mkdir("c"), "homes")});
  BatchResult r = Apply({GroupOp(Type::kDeleteGroup, "homes")});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].message, "group homes has 3 shares; use -f");

  Operation del = GroupOp(Type::kDeleteGroup, "homes");
  del.force = true;
  MustApply({del});
  EXPECT_EQ(catalog_->share_count(), 0u);
  EXPECT_EQ(catalog_->group_count(), 0u);
  Reopen();
  EXPECT_EQ(catalog_->share_count(), 0u);
  EXPECT_EQ(catalog_->group_count(), 0u);
}

// A short batch deleting a big group grows the overlay far past the room
// reserved for its operations; what it removed stays removed for the rest
// of the batch, and a path removed can be shared again.
TEST_F(CatalogTest, ShortBatchDeletingABigGroupSeesEveryShareItRemoved) {
  std::vector<Operation> ops = {CreateGroup("homes")};
  std::vector<std::string> paths;
  for (int i = 0; i < 300; ++i) {
    paths.push_back(dir_.Mkdir("u" + std::to_string(i)));
    ops.push_back(AddShare(paths.back(), "homes"));
  }
  MustApply(ops);
  ASSERT_EQ(catalog_->share_count(), 300u);
  Operation del = GroupOp(Type::kDeleteGroup, "homes");
  del.force = true;
  BatchResult r = Apply({del, RemoveShare(paths[7])});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].message, paths[7] + ": not shared");
  MustApply({del, CreateGroup("homes"), AddShare(paths[7], "homes"),
             AddShare(paths[299], "homes")});
  EXPECT_THAT(SharePaths(), ElementsAre(paths[299], paths[7]));  // path order
  Reopen();
  EXPECT_EQ(catalog_->share_count(), 2u);
}

// Validation and linking remember the group the last operation named; a
// group deleted and created again in the batch is a new group.
TEST_F(CatalogTest, GroupDeletedAndCreatedAgainInOneBatchHoldsTheLaterShares) {
  const std::string a = dir_.Mkdir("a");
  const std::string b = dir_.Mkdir("b");
  const std::string c = dir_.Mkdir("c");
  Operation del = GroupOp(Type::kDeleteGroup, "homes");
  del.force = true;
  BatchResult r = Apply({CreateGroup("homes"), AddShare(a, "homes"),
                         AddShare(b, "homes"), del, AddShare(c, "homes")});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].index, 4u);
  EXPECT_EQ(r.errors[0].message, "group homes does not exist");

  MustApply({CreateGroup("homes"), AddShare(a, "homes"), AddShare(b, "homes"),
             del, CreateGroup("homes", "ro"), AddShare(c, "homes")});
  EXPECT_THAT(SharePaths(), ElementsAre(c));
  absl::StatusOr<std::vector<ShareInfo>> in = catalog_->ListShares({"homes"});
  ASSERT_TRUE(in.ok()) << in.status();
  ASSERT_EQ(in->size(), 1u);
  EXPECT_EQ((*in)[0].path, c);
  EXPECT_EQ((*in)[0].effective_options, "ro");
  Reopen();
  EXPECT_THAT(SharePaths(), ElementsAre(c));
}

TEST_F(CatalogTest, DeletingUnknownGroupIsRefused) {
  BatchResult r = Apply({GroupOp(Type::kDeleteGroup, "nope")});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].message, "group nope does not exist");
}

TEST_F(CatalogTest, DisabledGroupSharesAreNotActive) {
  std::string a = dir_.Mkdir("a");
  MustApply({CreateGroup("g"), AddShare(a, "g")});
  MustApply({GroupOp(Type::kDisableGroup, "g")});
  EXPECT_FALSE(catalog_->FindNearest(a).has_value());
  EXPECT_TRUE(catalog_->SharetabEntries().empty());
  EXPECT_FALSE((*catalog_->ListShares({}))[0].active);
  MustApply({GroupOp(Type::kEnableGroup, "g")});
  EXPECT_TRUE(catalog_->FindNearest(a).has_value());
  Reopen();
  EXPECT_TRUE(catalog_->FindNearest(a).has_value());
}

TEST_F(CatalogTest, EnablingEnabledGroupChangesNothing) {
  MustApply({CreateGroup("g")});
  uint64_t gen = catalog_->generation();
  MustApply({GroupOp(Type::kEnableGroup, "g")});
  EXPECT_EQ(catalog_->generation(), gen);
}

TEST_F(CatalogTest, EnablingUnknownGroupIsRefused) {
  BatchResult r = Apply({GroupOp(Type::kEnableGroup, "nope")});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].message, "group nope does not exist");
}

TEST_F(CatalogTest, AddingMissingDirectoryIsRefused) {
  MustApply({CreateGroup("g")});
  std::string missing = dir_.path() + "/missing";
  BatchResult r = Apply({AddShare(missing, "g")});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].message, missing + ": no such directory");
}

TEST_F(CatalogTest,
       BigBatchChecksDirectoriesAheadWithTheErrorsOfCheckingInLine) {
  // 600 adds: past DirectoryChecks::kMinPaths, so a second thread checks
  // the paths while validation runs. A missing directory, a file, a
  // symlink and an add to an unknown group (refused before its check) are
  // refused with the messages and indices of the in-line check, and
  // nothing is committed.
  MustApply({CreateGroup("g")});
  std::vector<Operation> ops;
  const int n = 600;
  std::string missing, file, link;
  for (int i = 0; i < n; ++i) {
    std::string p = dir_.path() + "/d" + std::to_string(i);
    if (i == 5) {
      missing = p;
    } else if (i == 299) {
      file = p;
      std::ofstream(p) << "x";
    } else if (i == 300) {
      link = p;
      ASSERT_EQ(symlink(dir_.Mkdir("real").c_str(), p.c_str()), 0);
    } else {
      dir_.Mkdir("d" + std::to_string(i));
    }
    ops.push_back(AddShare(p, i == 450 ? "nope" : "g"));
  }
  BatchResult r = Apply(ops);
  ASSERT_EQ(r.errors.size(), 4u);
  EXPECT_EQ(r.errors[0].index, 5u);
  EXPECT_EQ(r.errors[0].message, missing + ": no such directory");
  EXPECT_EQ(r.errors[1].index, 299u);
  EXPECT_EQ(r.errors[1].message, file + ": not a directory");
  EXPECT_EQ(r.errors[2].index, 300u);
  EXPECT_EQ(r.errors[2].message,
            "path \"" + link +
                "\": a symlink component; its canonical form is \"" +
                dir_.path() + "/real\"");
  EXPECT_EQ(r.errors[3].index, 450u);
  EXPECT_EQ(r.errors[3].message, "group nope does not exist");
  EXPECT_EQ(catalog_->share_count(), 0u);
  Reopen();
  EXPECT_EQ(catalog_->share_count(), 0u);

  // The same batch without the bad ones commits every share, with its
  // directory's device.
  std::vector<Operation> good;
  for (int i = 0; i < n; ++i) {
    if (i != 5 && i != 299 && i != 300 && i != 450) good.push_back(ops[i]);
  }
  MustApply(good);
  EXPECT_EQ(catalog_->share_count(), good.size());
  struct stat st;
  ASSERT_EQ(stat(good.back().path.c_str(), &st), 0);
  auto store = Store::Open(db_, 50);
  ASSERT_TRUE(store.ok()) << store.status();
  auto rows = (*store)->LoadAllShares();
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), good.size());
  for (const ShareRow& row : *rows) {
    ASSERT_EQ(row.dev, static_cast<uint64_t>(st.st_dev)) << row.path;
  }
}

TEST_F(CatalogTest, BigBatchOverSeveralParentsGivesTheErrorsOfCheckingInLine) {
  // Three runs of siblings (300 listed, 12, 400 listed): validation checks
  // in line what the second thread has not claimed yet (while it lists a
  // parent), the thread the rest; which side takes which path depends on
  // timing, the errors and their indices do not. Applied five times.
  MustApply({CreateGroup("g")});
  std::vector<Operation> ops;
  std::vector<std::size_t> bad;
  // About one path in ten is bad, spread over every run, so that a
  // result taken from the wrong side shows in whichever stretch it falls.
  const struct {
    const char* parent;
    int count;
  } runs[] = {{"a", 300}, {"b", 12}, {"c", 400}};
  for (const auto& run : runs) {
    const std::string parent = dir_.Mkdir(run.parent);
    for (int i = 0; i < run.count; ++i) {
      const std::string p = parent + "/d" + std::to_string(i);
      if (i % 17 == 3) {  // a file
        std::ofstream(p) << "x";
        bad.push_back(ops.size());
      } else if (i % 23 == 7) {  // missing
        bad.push_back(ops.size());
      } else {
        ASSERT_EQ(::mkdir(p.c_str(), 0755), 0) << p;
      }
      ops.push_back(AddShare(p, "g"));
    }
  }
  std::sort(bad.begin(), bad.end());
  for (int round = 0; round < 5; ++round) {
    BatchResult r = Apply(ops);
    ASSERT_EQ(r.errors.size(), bad.size()) << "round " << round;
    for (std::size_t e = 0; e < bad.size(); ++e) {
      EXPECT_EQ(r.errors[e].index, bad[e]) << "round " << round;
      struct stat st;
      const bool is_file = ::stat(ops[bad[e]].path.c_str(), &st) == 0;
      EXPECT_EQ(r.errors[e].message,
                ops[bad[e]].path +
                    (is_file ? ": not a directory" : ": no such directory"))
          << "round " << round;
    }
    EXPECT_EQ(catalog_->share_count(), 0u);
  }
  std::vector<Operation> good;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (!std::binary_search(bad.begin(), bad.end(), i)) good.push_back(ops[i]);
  }
  MustApply(good);
  EXPECT_EQ(catalog_->share_count(), good.size());
}

TEST_F(CatalogTest,
       BigBatchWrittenWhileValidatedCommitsNothingWhenRefusedLate) {
  // 600 operations (past kWriteAheadOps): rows are written while later
  // operations are validated. A refusal of the last add, and one of the
  // whole-table rules at the batch's end (a second public share), come
  // after every earlier row was written: nothing is committed, and the
  // store takes the next batch.
  MustApply({CreateGroup("g"), CreateGroup("p", "public")});
  std::vector<Operation> ops;
  for (int i = 0; i < 599; ++i) {
    ops.push_back(AddShare(dir_.Mkdir("d" + std::to_string(i)), "g"));
  }
  const std::string missing = dir_.path() + "/missing";
  ops.push_back(AddShare(missing, "g"));
  BatchResult r = Apply(ops);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].index, 599u);
  EXPECT_EQ(r.errors[0].message, missing + ": no such directory");
  EXPECT_EQ(catalog_->share_count(), 0u);

  ops.pop_back();
  ops.push_back(AddShare(dir_.Mkdir("pub1"), "p"));
  ops.push_back(AddShare(dir_.Mkdir("pub2"), "p"));
  r = Apply(ops);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_THAT(r.errors[0].message, HasSubstr("a second public share"));
  EXPECT_EQ(catalog_->share_count(), 0u);
  Reopen();
  EXPECT_EQ(catalog_->share_count(), 0u);

  ops.pop_back();
  MustApply(ops);
  EXPECT_EQ(catalog_->share_count(), 600u);
  Reopen();
  EXPECT_EQ(catalog_->share_count(), 600u);
}

TEST_F(CatalogTest, AddingFileIsRefused) {
  MustApply({CreateGroup("g")});
  std::string file = dir_.path() + "/file";
  std::ofstream(file) << "x";
  BatchResult r = Apply({AddShare(file, "g")});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].message, file + ": not a directory");
}

TEST_F(CatalogTest, AddingNonCanonicalPathIsRefused) {
  MustApply({CreateGroup("g")});
  BatchResult r = Apply({AddShare(dir_.path() + "/a/../b", "g")});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_THAT(r.errors[0].message, HasSubstr(".."));
}

TEST_F(CatalogTest, AddingToUnknownGroupIsRefused) {
  BatchResult r = Apply({AddShare(dir_.Mkdir("a"), "nope")});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].message, "group nope does not exist");
}

TEST_F(CatalogTest, AddingSharedPathIsRefused) {
  std::string a = dir_.Mkdir("a");
  MustApply({CreateGroup("g"), AddShare(a, "g")});
  BatchResult r = Apply({AddShare(a, "g")});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].message, a + ": already shared (group g)");
}

TEST_F(CatalogTest, AddingWithBadOptionsIsRefused) {
  MustApply({CreateGroup("g")});
  BatchResult r = Apply({AddShare(dir_.Mkdir("a"), "g", "rw=")});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_THAT(r.errors[0].message, HasSubstr("rw="));
}

TEST_F(CatalogTest, DescriptionWithTabIsRefused) {
  MustApply({CreateGroup("g")});
  Operation op = AddShare(dir_.Mkdir("a"), "g");
  op.description = "two\tcolumns";
  BatchResult r = Apply({op});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_THAT(r.errors[0].message, HasSubstr("description"));
}

TEST_F(CatalogTest, ResourceWithNewlineIsRefused) {
  MustApply({CreateGroup("g")});
  Operation op = AddShare(dir_.Mkdir("a"), "g");
  op.resource = "two\nlines";
  BatchResult r = Apply({op});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_THAT(r.errors[0].message, HasSubstr("resource"));
}

TEST_F(CatalogTest, ShareInsideShareOnSameFileSystemIsRefused) {
  std::string a = dir_.Mkdir("a");
  std::string b = dir_.Mkdir("a/b");
  BatchResult r = Apply({CreateGroup("g"), AddShare(a, "g"), AddShare(b, "g")});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].index, 2u);
  EXPECT_EQ(r.errors[0].message, b + ": path is inside share " + a);
}

TEST_F(CatalogTest, ShareAboveShareOnSameFileSystemIsRefused) {
  std::string a = dir_.Mkdir("a");
  std::string b = dir_.Mkdir("a/b");
  MustApply({CreateGroup("g"), AddShare(b, "g")});
  BatchResult r = Apply({AddShare(a, "g")});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].message, a + ": path contains share " + b);
}

TEST_F(CatalogTest, ShareAddedAboveEarlierSiblingsOfBatchIsRefused) {
  std::string t = dir_.Mkdir("t");
  std::string x = dir_.Mkdir("t/x");
  std::string y = dir_.Mkdir("t/y");
  BatchResult r = Apply(
      {CreateGroup("g"), AddShare(x, "g"), AddShare(y, "g"), AddShare(t, "g")});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].index, 3u);
  EXPECT_EQ(r.errors[0].message, t + ": path contains share " + x);
}

TEST_F(CatalogTest, ShareAddedInBatchGuardsLaterAddsBelowIt) {
  std::string a = dir_.Mkdir("t/a");
  std::string x = dir_.Mkdir("t/a/x");
  std::string y = dir_.Mkdir("t/a/x/y");
  std::string z = dir_.Mkdir("t/a/z");
  MustApply({CreateGroup("g"), AddShare(y, "g")});
  // Op 0 walks the ancestors of t/a/x and fails; op 2 adds t/a once y is
  // gone, so op 3, a sibling of op 0, is inside a share again.
  BatchResult r = Apply(
      {AddShare(x, "g"), RemoveShare(y), AddShare(a, "g"), AddShare(z, "g")});
  ASSERT_EQ(r.errors.size(), 2u);
  EXPECT_EQ(r.errors[0].index, 0u);
  EXPECT_EQ(r.errors[0].message, x + ": path contains share " + y);
  EXPECT_EQ(r.errors[1].index, 3u);
  EXPECT_EQ(r.errors[1].message, z + ": path is inside share " + a);
}

// Siblings in a row share their ancestors' counters in validation; a
// parent switch in between, and removals, must leave each count exact.
TEST_F(CatalogTest, SiblingsAddedAndRemovedInOneBatchKeepNestingCounts) {
  std::string t = dir_.Mkdir("t");
  std::string tx = dir_.Mkdir("t/x");
  std::string ty = dir_.Mkdir("t/y");
  std::string tz = dir_.Mkdir("t/z");
  std::string u = dir_.Mkdir("u");
  std::string uv = dir_.Mkdir("u/v");
  MustApply({CreateGroup("g")});
  // All of t's shares gone again: t itself may be shared, u may not.
  BatchResult r =
      Apply({AddShare(tx, "g"), AddShare(ty, "g"), AddShare(uv, "g"),
             AddShare(tz, "g"), RemoveShare(tx), RemoveShare(ty),
             RemoveShare(tz), AddShare(t, "g"), AddShare(u, "g")});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].index, 8u);
  EXPECT_EQ(r.errors[0].message, u + ": path contains share " + uv);
  // One of t's left: t is refused, naming it.
  r = Apply({AddShare(tx, "g"), AddShare(uv, "g"), AddShare(ty, "g"),
             RemoveShare(tx), AddShare(t, "g")});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].index, 4u);
  EXPECT_EQ(r.errors[0].message, t + ": path contains share " + ty);
  EXPECT_EQ(catalog_->share_count(), 0u);
}

TEST_F(CatalogTest, RemovingShareFreesItsPathForNesting) {
  std::string a = dir_.Mkdir("a");
  std::string b = dir_.Mkdir("a/b");
  MustApply({CreateGroup("g"), AddShare(b, "g")});
  MustApply({RemoveShare(b), AddShare(a, "g")});
  EXPECT_THAT(SharePaths(), ElementsAre(a));
}

TEST_F(CatalogTest, RemovingUnknownShareIsRefused) {
  BatchResult r = Apply({RemoveShare("/nowhere")});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].message, "/nowhere: not shared");
}

TEST_F(CatalogTest, RemovingFromWrongGroupIsRefused) {
  std::string a = dir_.Mkdir("a");
  MustApply({CreateGroup("g"), CreateGroup("h"), AddShare(a, "g")});
  BatchResult r = Apply({RemoveShare(a, "h")});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].message, a + ": share is in group g, not h");
}

TEST_F(CatalogTest, MoveShareChangesGroupAndGeneration) {
  std::string a = dir_.Mkdir("a");
  MustApply({CreateGroup("g"), CreateGroup("h", "ro"), AddShare(a, "g")});
  uint64_t before = catalog_->FindNearest(a)->generation;
  Operation mv;
  mv.type = Type::kMoveShare;
  mv.path = a;
  mv.group = "h";
  MustApply({mv});
  auto shares = catalog_->ListShares({"h"});
  ASSERT_TRUE(shares.ok());
  ASSERT_EQ(shares->size(), 1u);
  EXPECT_EQ((*shares)[0].effective_options, "ro");
  EXPECT_GT(catalog_->FindNearest(a)->generation, before);
  Reopen();
  EXPECT_EQ((*catalog_->ListShares({"h"})).size(), 1u);
}

TEST_F(CatalogTest, MoveToUnknownGroupIsRefused) {
  std::string a = dir_.Mkdir("a");
  MustApply({CreateGroup("g"), AddShare(a, "g")});
  Operation mv;
  mv.type = Type::kMoveShare;
  mv.path = a;
  mv.group = "nope";
  BatchResult r = Apply({mv});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].message, "group nope does not exist");
}

TEST_F(CatalogTest, GroupOptionsChangeReachesSharesWithOwnOptions) {
  std::string a = dir_.Mkdir("a");
  std::string b = dir_.Mkdir("b");
  MustApply({CreateGroup("g"), AddShare(a, "g"), AddShare(b, "g", "ro")});
  uint64_t gen_a = catalog_->FindNearest(a)->generation;
  uint64_t gen_b = catalog_->FindNearest(b)->generation;
  Operation set;
  set.type = Type::kSetOptions;
  set.group = "g";
  set.options = "nosuid";
  MustApply({set});
  EXPECT_GT(catalog_->FindNearest(a)->generation, gen_a);
  EXPECT_GT(catalog_->FindNearest(b)->generation, gen_b);
  EXPECT_TRUE(catalog_->FindNearest(a)->options->nosuid);
  EXPECT_TRUE(catalog_->FindNearest(b)->options->nosuid);
  EXPECT_TRUE(catalog_->FindNearest(b)->options->scopes[0].ro_all);
  Reopen();
  EXPECT_TRUE(catalog_->FindNearest(a)->options->nosuid);
  EXPECT_TRUE(catalog_->FindNearest(b)->options->nosuid);
}

TEST_F(CatalogTest, SettingTheSameOptionsAgainChangesNothing) {
  std::string a = dir_.Mkdir("a");
  std::string b = dir_.Mkdir("b");
  MustApply(
      {CreateGroup("g", "nosuid"), AddShare(a, "g"), AddShare(b, "g", "ro")});
  const uint64_t gen = catalog_->generation();
  Operation group_again;
  group_again.type = Type::kSetOptions;
  group_again.group = "g";
  group_again.options = "nosuid";
  Operation share_again = group_again;
  share_again.path = b;
  share_again.options = "ro";
  BatchResult r = Apply({group_again, share_again});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.applied, 2u);
  EXPECT_EQ(r.generation, gen);
  EXPECT_EQ(catalog_->generation(), gen);
  EXPECT_TRUE(r.changes.empty());
  EXPECT_FALSE(r.changed) << "a batch of no-ops reported as a change";
  // Another text is a change, reported for the shares that inherit it.
  Operation other = group_again;
  other.options = "nosuid,root=adminhost";
  r = Apply({other});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r.changed);
  EXPECT_GT(catalog_->generation(), gen);
  EXPECT_EQ(r.changes.size(), 2u);
  Reopen();
  absl::StatusOr<std::vector<ShareInfo>> shares = catalog_->ListShares({});
  ASSERT_TRUE(shares.ok());
  ASSERT_EQ(shares->size(), 2u);
  for (const ShareInfo& info : *shares) {
    EXPECT_THAT(info.effective_options, HasSubstr("root=adminhost"));
  }
}

TEST_F(CatalogTest, GroupChangeOfPropertyShareOverridesKeepsShareValue) {
  std::string b = dir_.Mkdir("b");
  MustApply({CreateGroup("g", "rw=a"), AddShare(b, "g", "rw=b")});
  uint64_t gen_b = catalog_->FindNearest(b)->generation;
  Operation set;
  set.type = Type::kSetOptions;
  set.group = "g";
  set.options = "rw=c";
  MustApply({set});
  EXPECT_EQ((*catalog_->ListShares({}))[0].effective_options, "rw=b");
  EXPECT_EQ(catalog_->FindNearest(b)->generation, gen_b);
}

TEST_F(CatalogTest, ShareInheritsGroupPropertiesItDoesNotSet) {
  std::string a = dir_.Mkdir("a");
  MustApply({CreateGroup("g", "root=adminhost"),
             AddShare(a, "g", "rw=@127.0.0.0/8,nosuid")});
  ShareInfo info = (*catalog_->ListShares({}))[0];
  EXPECT_EQ(info.options, "rw=@127.0.0.0/8,nosuid");
  EXPECT_EQ(info.effective_options, "rw=@127.0.0.0/8,root=adminhost,nosuid");
  std::optional<ShareMatch> m = catalog_->FindNearest(a);
  ASSERT_TRUE(m.has_value());
  EXPECT_TRUE(m->options->scopes[0].root.has_value());
  EXPECT_EQ(catalog_->SharetabEntries()[0].options,
            "rw=@127.0.0.0/8,root=adminhost,nosuid");
  Reopen(2);
  EXPECT_EQ((*catalog_->ListShares({}))[0].effective_options,
            "rw=@127.0.0.0/8,root=adminhost,nosuid");
}

TEST_F(CatalogTest, SharesFromSchemaOneKeepReplacingUntilTheirOptionsAreSet) {
  std::string a = dir_.Mkdir("a");
  MustApply({CreateGroup("g", "root=adminhost"), AddShare(a, "g", "rw=x")});
  catalog_.reset();
  {
    // What a schema-1 store holds after the v2 migration marks it.
    auto store = Store::Open(db_, 50);
    ASSERT_TRUE(store.ok());
  }
  RawExec("UPDATE shares SET replaces_group = 1");
  Reopen();
  EXPECT_EQ((*catalog_->ListShares({}))[0].effective_options, "rw=x");
  EXPECT_THAT(catalog_->load_stats().warnings,
              ElementsAre(HasSubstr("1 share keeps own options written "
                                    "before per-property inheritance")));
  Operation set;
  set.type = Type::kSetOptions;
  set.group = "g";
  set.path = a;
  set.options = "rw=x";
  MustApply({set});
  EXPECT_EQ((*catalog_->ListShares({}))[0].effective_options,
            "rw=x,root=adminhost");
  Reopen();
  EXPECT_EQ((*catalog_->ListShares({}))[0].effective_options,
            "rw=x,root=adminhost");
}

Operation Modify(std::string path) {
  Operation op;
  op.type = Type::kModifyShare;
  op.path = std::move(path);
  return op;
}

Operation Unset(std::string group, std::string property,
                std::string path = "") {
  Operation op;
  op.type = Type::kUnsetOption;
  op.group = std::move(group);
  op.options = std::move(property);
  op.path = std::move(path);
  return op;
}

TEST_F(CatalogTest,
       ShareReaddedWithoutDescriptionKeepsNoneThroughALaterSetShare) {
  // The description a set-share without -d keeps is the latest add's,
  // even when that add gave none: not the table's, nor an earlier add's.
  std::string a = dir_.Mkdir("a");
  std::string b = dir_.Mkdir("b");
  Operation add_a = AddShare(a, "g");
  add_a.description = "old";
  MustApply({CreateGroup("g"), add_a});
  Operation add_b = AddShare(b, "g");
  add_b.description = "first";
  Operation res_a = Modify(a);
  res_a.set_resource = true;
  res_a.resource = "ra";
  Operation res_b = Modify(b);
  res_b.set_resource = true;
  res_b.resource = "rb";
  MustApply({RemoveShare(a), AddShare(a, "g"), res_a, add_b, RemoveShare(b),
             AddShare(b, "g"), res_b});
  for (int round = 0; round < 2; ++round) {
    auto shares = catalog_->ListShares({});
    ASSERT_TRUE(shares.ok());
    ASSERT_EQ(shares->size(), 2u);
    EXPECT_EQ((*shares)[0].description, "");
    EXPECT_EQ((*shares)[0].resource, "ra");
    EXPECT_EQ((*shares)[1].description, "");
    EXPECT_EQ((*shares)[1].resource, "rb");
    Reopen();
  }
}

TEST_F(CatalogTest, ModifyShareKeepsIdAndChangesOnlyGivenFields) {
  std::string a = dir_.Mkdir("a");
  Operation add = AddShare(a, "g", "ro");
  add.description = "old";
  add.resource = "res";
  MustApply({CreateGroup("g", "nosuid"), add});
  const ShareInfo before = (*catalog_->ListShares({}))[0];
  Operation m = Modify(a);
  m.set_description = true;
  m.description = "new";
  MustApply({m});
  ShareInfo after = (*catalog_->ListShares({}))[0];
  EXPECT_EQ(after.id, before.id);
  EXPECT_EQ(after.description, "new");
  EXPECT_EQ(after.resource, "res");
  EXPECT_EQ(after.options, "ro");
  m = Modify(a);
  m.set_resource = true;
  m.set_options = true;
  m.options = "rw=h";
  MustApply({m});
  Reopen();
  after = (*catalog_->ListShares({}))[0];
  EXPECT_EQ(after.id, before.id);
  EXPECT_EQ(after.resource, "");
  EXPECT_EQ(after.description, "new");
  EXPECT_EQ(after.effective_options, "rw=h,nosuid");
}

TEST_F(CatalogTest, ModifyUnknownShareOrNothingIsRefused) {
  std::string a = dir_.Mkdir("a");
  MustApply({CreateGroup("g"), AddShare(a, "g")});
  BatchResult r = Apply({Modify("/nope")});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].message, "/nope: not shared");
  r = Apply({Modify(a)});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].message, a + ": nothing to change");
}

TEST_F(CatalogTest, UnsetRemovesOnePropertyFromShareOrGroup) {
  std::string a = dir_.Mkdir("a");
  MustApply(
      {CreateGroup("g", "rw=h,nosuid,root=r"), AddShare(a, "g", "ro=x,nosub")});
  MustApply({Unset("g", "nosub", a), Unset("g", "root")});
  ShareInfo info = (*catalog_->ListShares({}))[0];
  EXPECT_EQ(info.options, "ro=x");
  EXPECT_EQ(info.effective_options, "ro=x,rw=h,nosuid");
  MustApply({Unset("g", "all", a)});
  EXPECT_EQ((*catalog_->ListShares({}))[0].effective_options, "rw=h,nosuid");
}

TEST_F(CatalogTest, UnsetOfMissingPropertyIsRefused) {
  std::string a = dir_.Mkdir("a");
  MustApply({CreateGroup("g", "rw=h"), AddShare(a, "g", "ro=x")});
  BatchResult r = Apply({Unset("g", "nosuid", a)});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].message,
            a + ": option \"nosuid\": not set in the share's own options");
  r = Apply({Unset("g", "nosuid")});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].message,
            "group g: option \"nosuid\": not set in the group's options");
}

TEST_F(CatalogTest, UnsetThatWouldOpenGroupToEveryoneIsRefused) {
  MustApply({CreateGroup("g", "rw=h,nosuid")});
  BatchResult r = Apply({Unset("g", "rw")});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_THAT(r.errors[0].message,
              HasSubstr("would make its shares read-write to every client"));
  EXPECT_EQ(catalog_->ListGroups()[0].options, "rw=h,nosuid");
}

TEST_F(CatalogTest, SecondShareWithSameResourceIsRefused) {
  std::string a = dir_.Mkdir("a");
  std::string b = dir_.Mkdir("b");
  Operation add_a = AddShare(a, "g");
  add_a.resource = "proj";
  Operation add_b = AddShare(b, "g");
  add_b.resource = "proj";
  MustApply({CreateGroup("g"), add_a});
  BatchResult r = Apply({add_b});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].message,
            b + ": resource name \"proj\" is already used by " + a);
  // Freed in the same batch: allowed.
  Operation free_a = Modify(a);
  free_a.set_resource = true;
  MustApply({free_a, add_b});
  r = Apply({[&] {
    Operation m = Modify(a);
    m.set_resource = true;
    m.resource = "proj";
    return m;
  }()});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].message,
            a + ": resource name \"proj\" is already used by " + b);
}

// The rule indexes after a batch follow its shares, not their paths: a
// share added with a resource and removed in the same batch leaves the
// name free; one removed and added again with it keeps it taken.
TEST_F(CatalogTest, ResourceOfAShareAddedAndRemovedInOneBatchIsFree) {
  std::string a = dir_.Mkdir("a");
  std::string b = dir_.Mkdir("b");
  Operation add_a = AddShare(a, "g");
  add_a.resource = "proj";
  MustApply({CreateGroup("g"), add_a, RemoveShare(a)});
  Operation add_b = AddShare(b, "g");
  add_b.resource = "proj";
  MustApply({add_b});
  // Removed and added again with the name, in one batch: still b's.
  MustApply({RemoveShare(b), add_b});
  add_a.resource = "proj";
  BatchResult r = Apply({add_a});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].message,
            a + ": resource name \"proj\" is already used by " + b);
  // Removed and added again without it: free.
  MustApply({RemoveShare(b), AddShare(b, "g")});
  MustApply({add_a});
}

TEST_F(CatalogTest, SecondPublicShareIsRefusedEvenInherited) {
  std::string a = dir_.Mkdir("a");
  std::string b = dir_.Mkdir("b");
  MustApply({CreateGroup("g"), CreateGroup("p", "public"),
             AddShare(a, "g", "public")});
  BatchResult r = Apply({AddShare(b, "p")});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].message,
            b + ": a second public share (" + a +
                " is public; share_nfs allows one public share)");
  MustApply({Unset("g", "public", a), AddShare(b, "p")});
}

// The public share removed and added again without "public" is not public
// any more: the batch may make another share public.
TEST_F(CatalogTest, PublicShareAddedAgainWithoutPublicLeavesRoomForAnother) {
  std::string a = dir_.Mkdir("a");
  std::string b = dir_.Mkdir("b");
  MustApply({CreateGroup("g"), AddShare(a, "g", "public")});
  MustApply({RemoveShare(a), AddShare(a, "g"), AddShare(b, "g", "public")});
  std::vector<ShareInfo> shares = *catalog_->ListShares({});
  ASSERT_EQ(shares.size(), 2u);
  EXPECT_EQ(shares[0].effective_options, "");
  EXPECT_EQ(shares[1].effective_options, "public");
  BatchResult r = Apply({RemoveShare(a), AddShare(a, "g", "public")});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_THAT(r.errors[0].message, HasSubstr("a second public share"));
}

// A share the batch names twice (added, then changed; or changed, then
// its group's options) is one share to the whole-table rules: one public
// share is not "a second" one.
TEST_F(CatalogTest, ShareNamedTwiceInABatchIsCountedOnce) {
  std::string a = dir_.Mkdir("a");
  std::string b = dir_.Mkdir("b");
  Operation describe = Modify(a);
  describe.set_description = true;
  describe.description = "home";
  MustApply({CreateGroup("g"), AddShare(a, "g", "public"), describe});
  // A table share changed and then reached through its group's options.
  Operation again = Modify(a);
  again.set_description = true;
  again.description = "home of a";
  Operation set;
  set.type = Type::kSetOptions;
  set.group = "g";
  set.options = "rw";
  MustApply({again, set, AddShare(b, "g")});
  EXPECT_EQ(catalog_->share_count(), 2u);
  // A table share the batch does not name, reached twice through its
  // group's options.
  std::string c = dir_.Mkdir("c");
  MustApply(
      {Unset("g", "public", a), CreateGroup("p", "public"), AddShare(c, "p")});
  Operation first;
  first.type = Type::kSetOptions;
  first.group = "p";
  first.options = "public,rw";
  Operation second = first;
  second.options = "public,ro";
  MustApply({first, second});
  EXPECT_EQ(catalog_->share_count(), 3u);
}

TEST_F(CatalogTest, OverlongResourceAndDescriptionAreRefused) {
  std::string a = dir_.Mkdir("a");
  Operation add = AddShare(a, "g");
  add.resource = std::string(256, 'r');
  MustApply({CreateGroup("g")});
  BatchResult r = Apply({add});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].message, a + ": resource longer than 255 bytes (256)");
  add.resource = "";
  add.description = std::string(1025, 'd');
  r = Apply({add});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].message,
            a + ": description longer than 1024 bytes (1025)");
  add.description = std::string(1024, 'd');
  MustApply({add});
}

TEST_F(CatalogTest, StoredDuplicateResourcesLoadWithAWarning) {
  std::string a = dir_.Mkdir("a");
  std::string b = dir_.Mkdir("b");
  Operation add_a = AddShare(a, "g");
  add_a.resource = "proj";
  MustApply({CreateGroup("g"), add_a, AddShare(b, "g")});
  catalog_.reset();
  RawExec("UPDATE shares SET resource = 'proj'");
  Reopen();
  EXPECT_EQ(catalog_->share_count(), 2u);
  EXPECT_THAT(
      catalog_->load_stats().warnings,
      ElementsAre(b + ": resource name \"proj\" is already used by " + a));
}

TEST_F(CatalogTest, ShareOptionsCanBeSetAndCleared) {
  std::string a = dir_.Mkdir("a");
  MustApply({CreateGroup("g", "nosuid"), AddShare(a, "g")});
  Operation set;
  set.type = Type::kSetOptions;
  set.group = "g";
  set.path = a;
  set.options = "ro";
  MustApply({set});
  EXPECT_EQ((*catalog_->ListShares({}))[0].effective_options, "ro,nosuid");
  set.options = "";
  MustApply({set});
  EXPECT_EQ((*catalog_->ListShares({}))[0].effective_options, "nosuid");
}

TEST_F(CatalogTest, SettingShareOfOtherGroupIsRefused) {
  std::string a = dir_.Mkdir("a");
  MustApply({CreateGroup("g"), CreateGroup("h"), AddShare(a, "g")});
  Operation set;
  set.type = Type::kSetOptions;
  set.group = "h";
  set.path = a;
  set.options = "ro";
  BatchResult r = Apply({set});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].message, a + ": share is in group g, not h");
}

TEST_F(CatalogTest, EveryBadOperationIsReportedWithItsIndex) {
  std::string a = dir_.Mkdir("a");
  BatchResult r = Apply({CreateGroup("g"), AddShare(a, "nope"),
                         AddShare(a, "g"), RemoveShare("/x"),
                         GroupOp(Type::kDeleteGroup, "zz"), CreateGroup("g")});
  EXPECT_THAT(r.errors, ElementsAre(Field(&OperationError::index, 1u),
                                    Field(&OperationError::index, 3u),
                                    Field(&OperationError::index, 4u),
                                    Field(&OperationError::index, 5u)));
  EXPECT_EQ(r.applied, 0u);
  EXPECT_EQ(catalog_->group_count(), 0u);
}

TEST_F(CatalogTest, BadOperationLateInBatchLeavesEarlierOnesUnapplied) {
  std::vector<Operation> ops = {CreateGroup("g")};
  for (int i = 0; i < 4999; ++i) {
    ops.push_back(AddShare(dir_.Mkdir("s/" + std::to_string(i)), "g"));
  }
  ops.push_back(AddShare(dir_.path() + "/missing", "g"));  // the 5,000th
  uint64_t gen = catalog_->generation();
  BatchResult r = Apply(ops);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].index, 5000u);
  EXPECT_EQ(catalog_->share_count(), 0u);
  EXPECT_EQ(catalog_->group_count(), 0u);
  EXPECT_EQ(catalog_->generation(), gen);
  Reopen();
  EXPECT_EQ(catalog_->share_count(), 0u);
  EXPECT_EQ(catalog_->group_count(), 0u);
}

TEST_F(CatalogTest, ReopenGivesSameTable) {
  std::vector<Operation> ops = {CreateGroup("g", "ro"), CreateGroup("h")};
  for (int i = 0; i < 50; ++i) {
    Operation op = AddShare(dir_.Mkdir("s/" + std::to_string(i)),
                            i % 2 ? "g" : "h", i % 3 ? "" : "rw,nosuid");
    op.description = "share " + std::to_string(i);
    op.resource = i % 5 ? "" : "r" + std::to_string(i);
    ops.push_back(op);
  }
  ops.push_back(GroupOp(Type::kDisableGroup, "h"));
  MustApply(ops);
  auto before = catalog_->ListShares({});
  auto groups_before = catalog_->ListGroups();
  Reopen(3);
  auto after = catalog_->ListShares({});
  ASSERT_TRUE(before.ok() && after.ok());
  ASSERT_EQ(before->size(), after->size());
  for (std::size_t i = 0; i < before->size(); ++i) {
    const ShareInfo& x = (*before)[i];
    const ShareInfo& y = (*after)[i];
    EXPECT_EQ(x.id, y.id);
    EXPECT_EQ(x.path, y.path);
    EXPECT_EQ(x.group, y.group);
    EXPECT_EQ(x.resource, y.resource);
    EXPECT_EQ(x.description, y.description);
    EXPECT_EQ(x.options, y.options);
    EXPECT_EQ(x.effective_options, y.effective_options);
    EXPECT_EQ(x.active, y.active);
  }
  auto groups_after = catalog_->ListGroups();
  ASSERT_EQ(groups_before.size(), groups_after.size());
  for (std::size_t i = 0; i < groups_before.size(); ++i) {
    EXPECT_EQ(groups_before[i].name, groups_after[i].name);
    EXPECT_EQ(groups_before[i].enabled, groups_after[i].enabled);
    EXPECT_EQ(groups_before[i].options, groups_after[i].options);
    EXPECT_EQ(groups_before[i].share_count, groups_after[i].share_count);
  }
}

TEST_F(CatalogTest, IdsAreNotReusedAfterReopen) {
  std::string a = dir_.Mkdir("a");
  std::string b = dir_.Mkdir("b");
  MustApply({CreateGroup("g"), AddShare(a, "g")});
  uint64_t id_a = catalog_->FindNearest(a)->id;
  Reopen();
  MustApply({AddShare(b, "g")});
  EXPECT_GT(catalog_->FindNearest(b)->id, id_a);
}

TEST_F(CatalogTest, FailedCommitLeavesMemoryAndDiskUnchanged) {
  MustApply({CreateGroup("g")});
  uint64_t gen = catalog_->generation();
  // Another writer holds the store's write lock past the busy timeout.
  auto other = Store::Open(db_, 50);
  ASSERT_TRUE(other.ok()) << other.status();
  ASSERT_TRUE((*other)->Begin().ok());
  BatchResult r = Apply({AddShare(dir_.Mkdir("a"), "g")});
  EXPECT_TRUE(r.errors.empty());
  EXPECT_FALSE(r.commit_error.empty());
  EXPECT_EQ(r.applied, 0u);
  EXPECT_EQ(catalog_->share_count(), 0u);
  EXPECT_EQ(catalog_->generation(), gen);
  (*other)->Rollback();
  Reopen();
  EXPECT_EQ(catalog_->share_count(), 0u);
}

TEST_F(CatalogTest, FindNearestFindsExactShareAndAncestor) {
  std::string a = dir_.Mkdir("a");
  dir_.Mkdir("a/sub/deeper");
  MustApply({CreateGroup("g", "ro"), AddShare(a, "g")});
  auto exact = catalog_->FindNearest(a);
  ASSERT_TRUE(exact.has_value());
  EXPECT_TRUE(exact->exact);
  EXPECT_EQ(exact->path, a);
  auto below = catalog_->FindNearest(a + "/sub/deeper");
  ASSERT_TRUE(below.has_value());
  EXPECT_FALSE(below->exact);
  EXPECT_EQ(below->path, a);
  ASSERT_NE(below->options, nullptr);
  EXPECT_TRUE(below->options->scopes[0].ro_all);
  EXPECT_FALSE(catalog_->FindNearest(dir_.path()).has_value());
  EXPECT_FALSE(catalog_->FindNearest(a + "x").has_value());
}

TEST_F(CatalogTest, SharetabEntriesAreActiveSharesInPathOrder) {
  std::string b = dir_.Mkdir("b");
  std::string a = dir_.Mkdir("a");
  std::string c = dir_.Mkdir("c");
  Operation add_b = AddShare(b, "g", "nosuid");
  add_b.description = "bee";
  add_b.resource = "res";
  MustApply({CreateGroup("g", "ro"), CreateGroup("off"), add_b,
             AddShare(a, "g"), AddShare(c, "off"),
             GroupOp(Type::kDisableGroup, "off")});
  std::vector<SharetabEntry> tab = catalog_->SharetabEntries();
  ASSERT_EQ(tab.size(), 2u);
  EXPECT_EQ(tab[0].path, a);
  EXPECT_EQ(tab[0].options, "ro");
  EXPECT_EQ(tab[1].path, b);
  EXPECT_EQ(tab[1].options, "ro,nosuid");  // the effective options
  EXPECT_EQ(tab[1].description, "bee");
  EXPECT_EQ(tab[1].resource, "res");
  std::vector<std::string> seen;
  catalog_->ForEachActive(
      [&](const ShareInfo& s, const ShareOptions&) { seen.push_back(s.path); });
  EXPECT_THAT(seen, ElementsAre(a, b));
}

TEST_F(CatalogTest, ListSharesOfUnknownGroupIsNotFound) {
  auto r = catalog_->ListShares({"nope"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("nope"));
}

// The file-system probe's list: every share (a disabled group's too),
// with what ListShares says of its id, device and mount, and whether its
// effective options hold mountpoint (own or the group's).
TEST_F(CatalogTest, ListLocationsHasEveryShareAndItsMountpointOption) {
  std::string a = dir_.Mkdir("a");
  std::string b = dir_.Mkdir("b");
  std::string c = dir_.Mkdir("c");
  MustApply({CreateGroup("g", "rw,mountpoint"), CreateGroup("h", "ro"),
             AddShare(a, "g"), AddShare(b, "h", "ro,mountpoint"),
             AddShare(c, "h"), GroupOp(Type::kDisableGroup, "h")});
  std::vector<ShareLocation> got = catalog_->ListLocations();
  absl::StatusOr<std::vector<ShareInfo>> infos = catalog_->ListShares({});
  ASSERT_TRUE(infos.ok());
  ASSERT_EQ(got.size(), 3u);
  std::sort(got.begin(), got.end(),
            [](const ShareLocation& x, const ShareLocation& y) {
              return x.path < y.path;
            });
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].path, (*infos)[i].path);
    EXPECT_EQ(got[i].id, (*infos)[i].id);
    EXPECT_EQ(got[i].dev, (*infos)[i].dev);
    EXPECT_EQ(got[i].mount_root, (*infos)[i].mount_root);
  }
  EXPECT_TRUE(got[0].mountpoint) << "the group's mountpoint";
  EXPECT_TRUE(got[1].mountpoint) << "its own mountpoint, group disabled";
  EXPECT_FALSE(got[2].mountpoint);
}

// Walks over the whole table (ListLocations, SharetabEntries) hold it a
// slice at a time (Config::read_slice, 3 here): while other shares are
// added, removed and moved between the slices, every share in the table
// throughout is listed exactly once, the sharetab view lists no path
// twice and none of a disabled group, and nothing listed is a path that
// never was a share.
TEST_F(CatalogTest,
       WalksInSlicesListEveryUntouchedShareOnceWhileTheTableChanges) {
  catalog_.reset();
  std::atomic<int> changed_between{0};
  std::atomic<uint64_t> seen_generation{0};
  Catalog::Config config;
  config.db_path = db_;
  config.busy_timeout_ms = 5000;
  config.read_slice = 3;
  config.between_slices = [&] {
    const uint64_t g = catalog_->generation();
    if (seen_generation.exchange(g) != g) ++changed_between;
  };
  auto opened = Catalog::Open(config);
  ASSERT_TRUE(opened.ok()) << opened.status();
  catalog_ = *std::move(opened);
  // Stable shares in groups b, d (disabled) and f; the changing ones
  // start among them in b, and go to e and back, away and back again.
  std::vector<Operation> ops = {CreateGroup("b"), CreateGroup("d"),
                                CreateGroup("e"), CreateGroup("f")};
  std::vector<std::string> stable;
  std::vector<std::string> active;
  std::vector<std::string> changing;
  for (int i = 0; i < 300; ++i) {
    const std::string group = i % 3 == 0 ? "b" : i % 3 == 1 ? "d" : "f";
    stable.push_back(dir_.Mkdir("s/" + std::to_string(i)));
    ops.push_back(AddShare(stable.back(), group));
    if (group != "d") active.push_back(stable.back());
    if (i % 10 == 0) {
      changing.push_back(dir_.Mkdir("c/" + std::to_string(i)));
      ops.push_back(AddShare(changing.back(), "b"));
    }
  }
  ops.push_back(GroupOp(Type::kDisableGroup, "d"));
  MustApply(ops);
  auto known = [&](const std::string& path) {
    return std::find(stable.begin(), stable.end(), path) != stable.end() ||
           std::find(changing.begin(), changing.end(), path) != changing.end();
  };

  std::atomic<bool> stop{false};
  std::thread changer([&] {
    // Each changing share in turn: moved to e, back to b, removed, added
    // to b again.
    std::vector<int> step(changing.size(), 0);
    for (std::size_t i = 0; !stop.load(); ++i) {
      const std::size_t k = i % changing.size();
      Batch b;
      switch (step[k]) {
        case 2:
          b.ops.push_back(RemoveShare(changing[k]));
          break;
        case 3:
          b.ops.push_back(AddShare(changing[k], "b"));
          break;
        default: {
          Operation mv;
          mv.type = Type::kMoveShare;
          mv.path = changing[k];
          mv.group = step[k] == 0 ? "e" : "b";
          b.ops.push_back(mv);
        }
      }
      step[k] = (step[k] + 1) % 4;
      if (!catalog_->Apply(b).ok()) {
        ADD_FAILURE() << "cannot change " << changing[k];
        return;
      }
    }
  });
  struct Join {  // also when an assertion below returns early
    std::atomic<bool>& stop;
    std::thread& t;
    ~Join() {
      stop = true;
      t.join();
    }
  } join{stop, changer};
  // Until the table changed between two slices of a walk 100 times, or
  // 60 s.
  const auto until =
      std::chrono::steady_clock::now() + std::chrono::seconds(60);
  int walks = 0;
  while (changed_between.load() < 100 &&
         std::chrono::steady_clock::now() < until) {
    ++walks;
    std::map<std::string, int> seen;
    seen_generation = catalog_->generation();  // count changes within walks
    for (const ShareLocation& l : catalog_->ListLocations()) {
      ++seen[l.path];
      ASSERT_TRUE(known(l.path)) << l.path;
    }
    for (const std::string& p : stable) {
      ASSERT_EQ(seen[p], 1) << p << " in ListLocations, walk " << walks;
    }
    seen.clear();
    seen_generation = catalog_->generation();
    for (const SharetabEntry& e : catalog_->SharetabEntries()) {
      ASSERT_EQ(++seen[e.path], 1) << e.path << " twice in the view";
      ASSERT_TRUE(known(e.path)) << e.path;
    }
    for (const std::string& p : active) {
      ASSERT_EQ(seen[p], 1) << p << " in SharetabEntries, walk " << walks;
    }
    for (int i = 1; i < 300; i += 3) {
      ASSERT_EQ(seen.count(stable[static_cast<std::size_t>(i)]), 0u)
          << "a share of the disabled group in the view";
    }
  }
  EXPECT_GE(changed_between.load(), 100);
}

// A walk in slices that stopped at a share removed, or removed and added
// again, before its next slice, or during which a share moved or a group
// was added, starts again: every share still there is listed once, the
// removed one not at all. A share added or removed elsewhere does not
// make it start again (either way, it lists what is expected).
TEST_F(CatalogTest, AWalkWhoseShareWasChangedBetweenSlicesStartsAgain) {
  std::vector<std::string> paths;
  for (int i = 0; i < 6; ++i) {
    paths.push_back(dir_.Mkdir("x" + std::to_string(i)));
  }
  paths.push_back(dir_.Mkdir("x5x"));  // added during the walk
  struct Case {
    const char* what;
    std::function<std::vector<Operation>()> change;
    std::vector<std::size_t> listed;  // indexes into paths, in order
  };
  Operation mv;
  mv.type = Type::kMoveShare;
  mv.path = paths[2];
  mv.group = "h";
  const std::vector<Case> cases = {
      {"removed",
       [&] { return std::vector<Operation>{RemoveShare(paths[2])}; },
       {0, 1, 3, 4, 5}},
      {"moved", [&] { return std::vector<Operation>{mv}; }, {0, 1, 2, 3, 4, 5}},
      {"removed and added again",
       [&] {
         return std::vector<Operation>{RemoveShare(paths[2]),
                                       AddShare(paths[2], "g")};
       },
       {0, 1, 2, 3, 4, 5}},
      {"another one removed",
       [&] { return std::vector<Operation>{RemoveShare(paths[4])}; },
       {0, 1, 2, 3, 5}},
      {"another one added",
       [&] { return std::vector<Operation>{AddShare(paths[5] + "x", "g")}; },
       {0, 1, 2, 3, 4, 5, 6}},
      {"moved away and back",
       [&] {
         Operation back = mv;
         back.group = "g";
         return std::vector<Operation>{mv, back};
       },
       {0, 1, 2, 3, 4, 5}},
      {"one walked moved away and back",
       [&] {
         Operation away = mv;
         away.path = paths[1];
         Operation back = away;
         back.group = "g";
         return std::vector<Operation>{away, back};
       },
       {0, 1, 2, 3, 4, 5}},
      {"a group added",
       [&] { return std::vector<Operation>{CreateGroup("a")}; },
       {0, 1, 2, 3, 4, 5}},
      {"a group removed",
       [&] { return std::vector<Operation>{GroupOp(Type::kDeleteGroup, "h")}; },
       {0, 1, 2, 3, 4, 5}},
  };
  // Each walk on a table made afresh, the change made during it.
  using Walk = std::function<std::vector<std::string>(const Catalog&)>;
  const std::vector<std::pair<const char*, Walk>> walks = {
      {"ListLocations",
       [](const Catalog& cat) {
         std::vector<std::string> got;
         for (const ShareLocation& l : cat.ListLocations()) {
           got.push_back(l.path);
         }
         std::sort(got.begin(), got.end());
         return got;
       }},
      {"SharetabEntries", [](const Catalog& cat) {
         std::vector<std::string> got;
         for (const SharetabEntry& e : cat.SharetabEntries()) {
           got.push_back(e.path);
         }
         return got;
       }}};
  for (const Case& c : cases) {
    for (const auto& [name, walk] : walks) {
      SCOPED_TRACE(absl::StrCat(c.what, ", ", name));
      catalog_.reset();
      std::filesystem::remove_all(dir_.path() + "/state");
      int slices = 0;
      bool changed = false;
      Catalog::Config config;
      config.db_path = db_;
      config.read_slice = 1;
      // After the third share (x2), once per walk.
      config.between_slices = [&] {
        if (++slices != 3 || changed) return;
        changed = true;
        Batch b;
        b.ops = c.change();
        BatchResult r = catalog_->Apply(b);
        ASSERT_TRUE(r.ok())
            << (r.errors.empty() ? r.commit_error : r.errors[0].message);
      };
      auto opened = Catalog::Open(config);
      ASSERT_TRUE(opened.ok()) << opened.status();
      catalog_ = *std::move(opened);
      std::vector<Operation> ops = {CreateGroup("g"), CreateGroup("h")};
      for (std::size_t i = 0; i < 6; ++i) {
        ops.push_back(AddShare(paths[i], "g"));
      }
      MustApply(ops);

      std::vector<std::string> want;
      for (std::size_t i : c.listed) want.push_back(paths[i]);
      EXPECT_EQ(walk(*catalog_), want);
      EXPECT_TRUE(changed);
    }
  }
}

TEST_F(CatalogTest, LocationsOfListsTheSharesAtThePathsInTheirOrder) {
  std::string a = dir_.Mkdir("a");
  std::string b = dir_.Mkdir("b");
  MustApply({CreateGroup("g", "rw"), AddShare(a, "g"),
             AddShare(b, "g", "ro,mountpoint")});
  std::vector<ShareLocation> all = catalog_->ListLocations();
  std::vector<ShareLocation> got =
      catalog_->LocationsOf({b, dir_.path() + "/none", a, b + "/below"});
  ASSERT_EQ(got.size(), 2u) << "a path with no share is left out";
  EXPECT_EQ(got[0].path, b);
  EXPECT_TRUE(got[0].mountpoint);
  EXPECT_EQ(got[1].path, a);
  EXPECT_FALSE(got[1].mountpoint);
  for (const ShareLocation& g : got) {
    auto same =
        std::find_if(all.begin(), all.end(),
                     [&](const ShareLocation& x) { return x.path == g.path; });
    ASSERT_NE(same, all.end());
    EXPECT_EQ(g.id, same->id);
    EXPECT_EQ(g.dev, same->dev);
    EXPECT_EQ(g.mount_root, same->mount_root);
  }
  EXPECT_TRUE(catalog_->LocationsOf({}).empty());
}

TEST_F(CatalogTest, MountRecordsSurviveReopen) {
  ASSERT_TRUE(
      catalog_
          ->RecordMounts(
              {{"10.0.0.1", "/a"}, {"10.0.0.2", "/b"}, {"10.0.0.1", "/c"}}, {})
          .ok());
  ASSERT_TRUE(catalog_->RecordMounts({}, {{"10.0.0.1", "/a"}}).ok());
  Reopen();
  auto mounts = catalog_->LoadMounts();
  ASSERT_TRUE(mounts.ok());
  EXPECT_THAT(*mounts, ElementsAre(MountRecord{"10.0.0.1", "/c"},
                                   MountRecord{"10.0.0.2", "/b"}));
}

// Batches add or remove 100 shares at a time; a reader that ever saw a
// count that is not a multiple of 100 saw a part of a batch.
TEST_F(CatalogTest, ConcurrentReadersSeeWholeBatchesOnly) {
  std::vector<std::string> paths;
  for (int i = 0; i < 100; ++i) {
    paths.push_back(dir_.Mkdir("c/" + std::to_string(i)));
  }
  MustApply({CreateGroup("g")});
  std::atomic<bool> stop{false};
  std::atomic<int> torn{0};
  std::atomic<int> reads{0};
  auto reader = [&] {
    while (!stop) {
      std::size_t n = 0;
      catalog_->ForEachActive(
          [&](const ShareInfo&, const ShareOptions&) { ++n; });
      if (n % 100 != 0) ++torn;
      std::size_t tab = catalog_->SharetabEntries().size();
      if (tab % 100 != 0) ++torn;
      ++reads;
    }
  };
  std::thread r1(reader), r2(reader);
  for (int round = 0; round < 20; ++round) {
    std::vector<Operation> ops;
    for (const std::string& p : paths) {
      ops.push_back(round % 2 == 0 ? AddShare(p, "g") : RemoveShare(p));
    }
    MustApply(ops);
  }
  stop = true;
  r1.join();
  r2.join();
  EXPECT_EQ(torn, 0);
  EXPECT_GT(reads, 0);
}

// The change list of a batch (BatchResult::changes).
using Kind = ShareChange::Kind;
MATCHER_P3(IsChange, kind, path, active, "") {
  return arg.kind == kind && arg.path == path && arg.active == active;
}

TEST_F(CatalogTest, ChangesListAddedSharesInPathOrder) {
  std::string a = dir_.Mkdir("a"), b = dir_.Mkdir("b");
  BatchResult r = Apply({CreateGroup("g"), AddShare(b, "g"), AddShare(a, "g")});
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(r.changes, ElementsAre(IsChange(Kind::kAdded, a, true),
                                     IsChange(Kind::kAdded, b, true)));
  EXPECT_EQ(r.changes[0].id, catalog_->FindNearest(a)->id);
}

TEST_F(CatalogTest, ChangesListRemovedShareWithItsId) {
  std::string a = dir_.Mkdir("a");
  MustApply({CreateGroup("g"), AddShare(a, "g")});
  uint64_t id = catalog_->FindNearest(a)->id;
  BatchResult r = Apply({RemoveShare(a)});
  ASSERT_TRUE(r.ok());
  ASSERT_THAT(r.changes, ElementsAre(IsChange(Kind::kRemoved, a, false)));
  EXPECT_EQ(r.changes[0].id, id);
}

TEST_F(CatalogTest, ChangesExpandGroupStateToItsShares) {
  std::string a = dir_.Mkdir("a"), b = dir_.Mkdir("b"), c = dir_.Mkdir("c");
  MustApply({CreateGroup("g"), CreateGroup("h"), AddShare(a, "g"),
             AddShare(b, "g"), AddShare(c, "h")});
  BatchResult r = Apply({GroupOp(Type::kDisableGroup, "g")});
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(r.changes, ElementsAre(IsChange(Kind::kChanged, a, false),
                                     IsChange(Kind::kChanged, b, false)));
  r = Apply({GroupOp(Type::kEnableGroup, "g")});
  EXPECT_THAT(r.changes, ElementsAre(IsChange(Kind::kChanged, a, true),
                                     IsChange(Kind::kChanged, b, true)));
}

TEST_F(CatalogTest, ChangesOfGroupOptionsSkipSharesWithTheirOwn) {
  std::string a = dir_.Mkdir("a"), b = dir_.Mkdir("b");
  MustApply({CreateGroup("g"), AddShare(a, "g"), AddShare(b, "g", "ro")});
  Operation set;
  set.type = Type::kSetOptions;
  set.group = "g";
  set.options = "ro";
  BatchResult r = Apply({set});
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(r.changes, ElementsAre(IsChange(Kind::kChanged, a, true)));
}

TEST_F(CatalogTest, ChangesOfDeletedGroupAreRemovals) {
  std::string a = dir_.Mkdir("a"), b = dir_.Mkdir("b");
  MustApply({CreateGroup("g"), AddShare(a, "g"), AddShare(b, "g")});
  Operation del = GroupOp(Type::kDeleteGroup, "g");
  del.force = true;
  BatchResult r = Apply({del});
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(r.changes, ElementsAre(IsChange(Kind::kRemoved, a, false),
                                     IsChange(Kind::kRemoved, b, false)));
}

// A change list of 70,000 entries: every path once, in order, for adds in
// path order (in order already) and for removals, re-adds and a group
// disabled in one batch (sorted first, each removal before the re-add of
// its path).
TEST_F(CatalogTest, BigChangeListsAreWholeAndInPathOrder) {
  constexpr int kShares = 70000;
  const std::string root = dir_.Mkdir("big");
  std::vector<std::string> paths;
  std::vector<Operation> adds = {CreateGroup("g")};
  for (int i = 0; i < kShares; ++i) {
    char name[16];
    std::snprintf(name, sizeof name, "/u%05d", i);
    paths.push_back(root + name);
    ASSERT_EQ(::mkdir(paths.back().c_str(), 0755), 0) << paths.back();
    adds.push_back(AddShare(paths.back(), "g"));
  }
  BatchResult r = Apply(adds);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r.changes.size(), static_cast<std::size_t>(kShares));
  for (int i = 0; i < kShares; ++i) {
    ASSERT_EQ(r.changes[i].path, paths[i]);
    ASSERT_EQ(r.changes[i].kind, Kind::kAdded) << paths[i];
    ASSERT_TRUE(r.changes[i].active) << paths[i];
  }
  // Every 7th removed and added again, every 11th (not 7th) removed, and
  // the group disabled: each path once; the removed ones as removals.
  std::vector<Operation> mixed;
  for (int i = 0; i < kShares; ++i) {
    if (i % 7 == 0) {
      mixed.push_back(RemoveShare(paths[i]));
      mixed.push_back(AddShare(paths[i], "g"));
    } else if (i % 11 == 0) {
      mixed.push_back(RemoveShare(paths[i]));
    }
  }
  mixed.push_back(GroupOp(Type::kDisableGroup, "g"));
  r = Apply(mixed);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r.changes.size(), static_cast<std::size_t>(kShares));
  for (int i = 0; i < kShares; ++i) {
    const bool removed = i % 7 != 0 && i % 11 == 0;
    ASSERT_EQ(r.changes[i].path, paths[i]);
    ASSERT_EQ(r.changes[i].kind, removed ? Kind::kRemoved : Kind::kChanged)
        << paths[i];
    ASSERT_FALSE(r.changes[i].active) << paths[i];
  }
}

TEST_F(CatalogTest, ChangesReportEachPathOnce) {
  std::string a = dir_.Mkdir("a"), b = dir_.Mkdir("b");
  MustApply({CreateGroup("g"), CreateGroup("h"), AddShare(a, "g")});
  Operation mv;
  mv.type = Type::kMoveShare;
  mv.path = b;
  mv.group = "h";
  // a: removed and added again (changed); b: added, then moved (added).
  BatchResult r = Apply({RemoveShare(a), AddShare(a, "h"), AddShare(b, "g"), mv,
                         GroupOp(Type::kDisableGroup, "h")});
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(r.changes, ElementsAre(IsChange(Kind::kChanged, a, false),
                                     IsChange(Kind::kAdded, b, false)));
}

TEST_F(CatalogTest, ChangesIncludeSharesMovedIntoAGroupBeforeItsOperation) {
  std::string a = dir_.Mkdir("a"), b = dir_.Mkdir("b"), c = dir_.Mkdir("c");
  MustApply({CreateGroup("g"), CreateGroup("h"), AddShare(a, "g"),
             AddShare(b, "g"), AddShare(c, "h")});
  Operation mv_a;
  mv_a.type = Type::kMoveShare;
  mv_a.path = a;
  mv_a.group = "h";
  Operation mv_b = mv_a;
  mv_b.path = b;
  // No adds: the reservation must count the moves for h's disable.
  BatchResult r = Apply({mv_a, mv_b, GroupOp(Type::kDisableGroup, "h")});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r.changes_complete);
  EXPECT_THAT(r.changes, ElementsAre(IsChange(Kind::kChanged, a, false),
                                     IsChange(Kind::kChanged, b, false),
                                     IsChange(Kind::kChanged, c, false)));
}

TEST_F(CatalogTest, RefusedBatchReportsNoChanges) {
  std::string a = dir_.Mkdir("a");
  BatchResult r = Apply({CreateGroup("g"), AddShare(a, "nope")});
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(r.changes.empty());
}

}  // namespace
}  // namespace libshare

namespace libshare {
namespace {

using ::libshare::testing::AddShare;
using ::libshare::testing::CreateGroup;
using ::libshare::testing::TempDir;

class CatalogGenerationTest : public ::testing::Test {
 protected:
  void Reopen() {
    catalog_.reset();
    auto c = Catalog::Open({dir_.path() + "/shares.db", 1, 50});
    ASSERT_TRUE(c.ok()) << c.status();
    catalog_ = *std::move(c);
  }
  BatchResult Apply(std::vector<Operation> ops, bool dry_run = false) {
    Batch b;
    b.ops = std::move(ops);
    b.dry_run = dry_run;
    return catalog_->Apply(b);
  }
  TempDir dir_;
  std::unique_ptr<Catalog> catalog_;
};

TEST_F(CatalogGenerationTest, GenerationsKeepGrowingAcrossReopens) {
  Reopen();
  ASSERT_TRUE(Apply({CreateGroup("a")}).ok());
  ASSERT_TRUE(Apply({CreateGroup("b")}).ok());
  const uint64_t before = catalog_->generation();
  Reopen();
  EXPECT_GE(catalog_->generation(), before);
  BatchResult r = Apply({CreateGroup("c")});
  ASSERT_TRUE(r.ok());
  EXPECT_GT(r.generation, before);
}

TEST_F(CatalogGenerationTest, SharesLoadedAtStartCarryTheStoredGeneration) {
  Reopen();
  ASSERT_TRUE(Apply({CreateGroup("g")}).ok());
  ASSERT_TRUE(Apply({AddShare(dir_.Mkdir("e/a"), "g")}).ok());
  ASSERT_TRUE(Apply({CreateGroup("h")}).ok());
  const uint64_t g = catalog_->generation();
  Reopen();
  auto shares = catalog_->ListShares({});
  ASSERT_TRUE(shares.ok());
  ASSERT_EQ(shares->size(), 1u);
  EXPECT_EQ((*shares)[0].generation, g);
}

TEST_F(CatalogGenerationTest, DryRunReportsTheSameErrorsAndChangesNothing) {
  Reopen();
  const uint64_t g = catalog_->generation();
  const std::string a = dir_.Mkdir("e/a");
  BatchResult bad = Apply(
      {CreateGroup("g"), AddShare(a + "/missing", "g"), AddShare(a, "nosuch")},
      /*dry_run=*/true);
  BatchResult real = Apply(
      {CreateGroup("g"), AddShare(a + "/missing", "g"), AddShare(a, "nosuch")});
  ASSERT_EQ(bad.errors.size(), 2u);
  ASSERT_EQ(real.errors.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(bad.errors[i].index, real.errors[i].index);
    EXPECT_EQ(bad.errors[i].message, real.errors[i].message);
  }
  BatchResult good = Apply({CreateGroup("g"), AddShare(a, "g")}, true);
  EXPECT_TRUE(good.ok());
  EXPECT_EQ(good.applied, 0u);
  EXPECT_EQ(good.generation, g);
  EXPECT_EQ(catalog_->generation(), g);
  EXPECT_EQ(catalog_->group_count(), 0u);
  Reopen();
  EXPECT_EQ(catalog_->group_count(), 0u);  // nothing reached the store
  EXPECT_EQ(catalog_->generation(), g);
}

}  // namespace
}  // namespace libshare
