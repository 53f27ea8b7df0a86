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
#include "catalog_test_fixture.h"
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
using ::libshare::testing::CatalogTest;

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
  config.beside_load = [&](FsPlaceRecords*) {
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

// The file-system places are the catalog's: beside_load gets the object
// fs_places() returns, can read the rows recorded before while the table
// loads, and what is recorded through it is there after a reopen.
TEST_F(CatalogTest, FsPlacesAreReadBesideTheLoadAndRecordedThroughTheCatalog) {
  const std::string a = dir_.Mkdir("a"), b = dir_.Mkdir("b");
  MustApply({CreateGroup("g"), AddShare(a, "g"), AddShare(b, "g")});
  std::vector<ShareInfo> shares = *catalog_->ListShares({});
  ASSERT_EQ(shares.size(), 2u);
  ASSERT_TRUE(catalog_->fs_places()
                  ->Record(2,
                           [&](std::size_t i) {
                             return FsPlaceRowView{
                                 shares[i].id,
                                 {},
                                 "/",
                                 "ext4",
                                 i == 0 ? "/dev/a" : "/dev/b"};
                           })
                  .ok());
  catalog_.reset();
  Catalog::Config config;
  config.db_path = db_;
  FsPlaceRecords* given = nullptr;
  std::vector<std::string> seen;
  config.beside_load = [&](FsPlaceRecords* places) {
    given = places;
    ASSERT_TRUE(places
                    ->Scan([&](const FsPlaceRowView& r) {
                      seen.push_back(std::string(r.path) + " " +
                                     std::string(r.source));
                    })
                    .ok());
  };
  auto c = Catalog::Open(config);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(given, (*c)->fs_places());
  EXPECT_THAT(seen, ElementsAre(a + " /dev/a", b + " /dev/b"));
  absl::StatusOr<uint64_t> max_id = (*c)->fs_places()->MaxShareId();
  ASSERT_TRUE(max_id.ok());
  EXPECT_EQ(*max_id, std::max(shares[0].id, shares[1].id));
}

// What beside_load throws on its thread is thrown by Open, after the load,
// as if it had run on the caller's thread (not std::terminate).
TEST_F(CatalogTest, WhatBesideLoadThrowsOpenThrows) {
  catalog_.reset();
  Catalog::Config config;
  config.db_path = db_;
  config.beside_load = [](FsPlaceRecords*) {
    throw std::runtime_error("beside");
  };
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
  config.beside_load = [&](FsPlaceRecords*) {
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
                ops[bad[e]].path.str() +
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

}  // namespace
}  // namespace libshare
