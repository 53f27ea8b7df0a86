#include "libshare/store.h"

#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "share_test_dirs.h"

namespace libshare {
namespace {

using ::libshare::testing::TempDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class StoreTest : public ::testing::Test {
 protected:
  std::unique_ptr<Store> Open() {
    auto s = Store::Open(path_, 50);
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? *std::move(s) : nullptr;
  }

  // Runs SQL through a separate, plain SQLite connection.
  void RawExec(const std::string& sql) {
    ::libshare::testing::RawExec(path_, sql);
  }

  // A store as schema version 1 left it, with `rows` (SQL) in it.
  void RawSchemaOneStore(const std::string& rows) {
    RawOldStore(R"sql(
CREATE TABLE shares(id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE,
  "group" TEXT NOT NULL, resource TEXT NOT NULL DEFAULT '',
  description TEXT NOT NULL DEFAULT '', options TEXT NOT NULL DEFAULT '',
  dev INTEGER NOT NULL);
CREATE INDEX shares_by_group ON shares("group");
CREATE TABLE mounts(client TEXT NOT NULL, path TEXT NOT NULL,
  PRIMARY KEY(client, path));
)sql" + rows + "PRAGMA user_version = 1;\n");
  }

  // A store as an older version left it: its folder, the groups table
  // (unchanged since schema 1), then `rest`.
  void RawOldStore(const std::string& rest) {
    ASSERT_EQ(system(("mkdir -p " + dir_.path() + "/a/b").c_str()), 0);
    RawExec(R"sql(
CREATE TABLE groups(name TEXT PRIMARY KEY, enabled INTEGER NOT NULL DEFAULT 1,
  options TEXT NOT NULL DEFAULT '');
)sql" + rest);
  }

  std::string RawText(const std::string& sql) {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr), SQLITE_OK);
    std::string out;
    if (sqlite3_step(st) == SQLITE_ROW) {
      out = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return out;
  }

  TempDir dir_;
  std::string path_ = dir_.path() + "/a/b/shares.db";
};

ShareRow Row(uint64_t id, std::string path, std::string group) {
  ShareRow r;
  r.id = id;
  r.path = std::move(path);
  r.group = std::move(group);
  r.dev = 40 + id;
  return r;
}

TEST_F(StoreTest, OpenCreatesFoldersAndCurrentSchema) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  auto v = store->SchemaVersion();
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, Store::kSchemaVersion);
  EXPECT_EQ(RawText("PRAGMA user_version"),
            std::to_string(Store::kSchemaVersion));
}

TEST_F(StoreTest, UsesWriteAheadLog) {
  auto store = Open();
  EXPECT_EQ(RawText("PRAGMA journal_mode"), "wal");
}

TEST_F(StoreTest, ANewStoreHasPagesOf16KiB) {
  auto store = Open();  // its schema written: the page size is set
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(RawText("PRAGMA page_size"), "16384");
}

TEST_F(StoreTest, AnOlderStoreKeepsItsPageSize) {
  // Made with SQLite's default of 4 KiB, as stores before 16 KiB pages.
  RawSchemaOneStore(R"sql(
INSERT INTO groups VALUES('g', 1, '');
INSERT INTO shares VALUES(1, '/x', 'g', '', '', '', 7);
)sql");
  ASSERT_EQ(RawText("PRAGMA page_size"), "4096");
  auto store = Open();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Begin().ok());
  ASSERT_TRUE(store->InsertShare(Row(2, "/y", "g")).ok());
  ASSERT_TRUE(store->Commit().ok());
  EXPECT_EQ(store->LoadAllShares()->size(), 2u);
  EXPECT_EQ(RawText("PRAGMA page_size"), "4096");
}

TEST_F(StoreTest, AStoreRemovedWhileOpenIsNeverWrittenAgain) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Begin().ok());
  ASSERT_TRUE(store->InsertGroup({"g", true, "ro"}).ok());
  ASSERT_TRUE(store->Commit().ok());
  ASSERT_EQ(::unlink(path_.c_str()), 0);
  absl::Status s = store->Begin();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_THAT(s.message(), HasSubstr("was removed or replaced"));
}

TEST_F(StoreTest, AStoreWhoseWalWasReplacedIsNeverWrittenAgain) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  const std::string wal = path_ + "-wal";
  ASSERT_EQ(::rename(wal.c_str(), (wal + ".old").c_str()), 0);
  {
    std::ofstream f(wal);  // another file at the name
  }
  EXPECT_EQ(store->Begin().code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(StoreTest, AnUntouchedStoreBegins) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(store->Begin().ok());
    store->Rollback();
  }
}

TEST_F(StoreTest, NewerSchemaIsRefused) {
  Open().reset();
  RawExec("PRAGMA user_version = 99");
  auto s = Store::Open(path_);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.status().message()), HasSubstr("99"));
  EXPECT_THAT(std::string(s.status().message()), HasSubstr(path_));
}

TEST_F(StoreTest, SchemaOneSharesWithOwnOptionsMigrateAsReplacingTheGroup) {
  // A store as schema version 1 left it.
  RawSchemaOneStore(R"sql(
INSERT INTO groups VALUES('g', 1, 'root=adminhost');
INSERT INTO shares VALUES(1, '/x', 'g', '', '', 'rw=h', 7);
INSERT INTO shares VALUES(2, '/y', 'g', '', '', '', 7);
)sql");
  auto store = Open();
  ASSERT_NE(store, nullptr);
  auto rows = store->LoadAllShares();
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_TRUE((*rows)[0].replaces_group);
  EXPECT_FALSE((*rows)[1].replaces_group);
  // Writing the options again ends the replacement.
  ASSERT_TRUE(store->Begin().ok());
  ASSERT_TRUE(store->SetShareOptions(1, "/x", "rw=h").ok());
  ASSERT_TRUE(store->Commit().ok());
  EXPECT_FALSE((*store->LoadAllShares())[0].replaces_group);
}

TEST_F(StoreTest, NonDatabaseFileIsRefused) {
  Open().reset();
  std::string junk = dir_.path() + "/junk.db";
  FILE* f = fopen(junk.c_str(), "w");
  fputs("this is not a database, not at all, no sir, none whatsoever\n", f);
  fclose(f);
  auto s = Store::Open(junk);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(),
              HasSubstr(junk + ": not a usable SQLite store: "));
}

TEST_F(StoreTest, CommittedRowsSurviveReopen) {
  {
    auto store = Open();
    ASSERT_TRUE(store->Begin().ok());
    ASSERT_TRUE(store->InsertGroup({"homes", true, "ro"}).ok());
    ASSERT_TRUE(store->InsertGroup({"off", false, ""}).ok());
    ShareRow r = Row(7, "/export/a", "homes");
    r.resource = "res";
    r.description = "desc";
    r.options = "nosuid";
    ASSERT_TRUE(store->InsertShare(r).ok());
    ASSERT_TRUE(store->Commit().ok());
  }
  auto store = Open();
  auto groups = store->LoadGroups();
  ASSERT_TRUE(groups.ok());
  EXPECT_THAT(*groups, ElementsAre(GroupRow{"homes", true, "ro"},
                                   GroupRow{"off", false, ""}));
  auto shares = store->LoadShares("homes");
  ASSERT_TRUE(shares.ok());
  ShareRow want = Row(7, "/export/a", "homes");
  want.resource = "res";
  want.description = "desc";
  want.options = "nosuid";
  EXPECT_THAT(*shares, ElementsAre(want));
  EXPECT_EQ(*store->CountShares(), 1u);
  EXPECT_EQ(*store->MaxShareId(), 7u);
}

TEST_F(StoreTest, RecordedFileSystemsSurviveReopenAndSkipRemovedShares) {
  {
    auto store = Open();
    ASSERT_TRUE(store->Begin().ok());
    ASSERT_TRUE(store->InsertGroup({"homes", true, ""}).ok());
    ASSERT_TRUE(store->InsertShare(Row(1, "/tank/home/a", "homes")).ok());
    ASSERT_TRUE(store->InsertShare(Row(2, "/tank/home/b", "homes")).ok());
    ASSERT_TRUE(store->Commit().ok());
    // Share 2 has nothing recorded; share 9 does not exist: skipped.
    const std::vector<Store::FsPlaceRowView> rows = {
        {1, "", "/tank/home/a", "zfs", "tank/home/a"},
        {9, "", "/x", "zfs", "x"}};
    ASSERT_TRUE(store
                    ->RecordFsPlaces(rows.size(),
                                     [&](std::size_t i) { return rows[i]; })
                    .ok());
  }
  auto store = Open();
  auto places = store->LoadFsPlaces();
  ASSERT_TRUE(places.ok()) << places.status();
  ASSERT_EQ(places->size(), 1u);
  EXPECT_EQ((*places)[0],
            (FsPlaceRow{1, "", "/tank/home/a", "zfs", "tank/home/a"}));
  EXPECT_EQ((*places)[0].path, "/tank/home/a");
}

TEST_F(StoreTest, SchemaOneStoreGainsEmptyFileSystemColumns) {
  path_ = dir_.path() + "/v1.db";  // a folder that exists
  RawExec(
      "CREATE TABLE groups(name TEXT PRIMARY KEY, enabled INTEGER NOT NULL "
      "DEFAULT 1, options TEXT NOT NULL DEFAULT '');"
      "CREATE TABLE shares(id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE,"
      " \"group\" TEXT NOT NULL, resource TEXT NOT NULL DEFAULT '',"
      " description TEXT NOT NULL DEFAULT '', options TEXT NOT NULL DEFAULT"
      " '', dev INTEGER NOT NULL);"
      "CREATE TABLE mounts(client TEXT NOT NULL, path TEXT NOT NULL,"
      " PRIMARY KEY(client, path));"
      "INSERT INTO groups(name) VALUES('g');"
      "INSERT INTO shares(id, path, \"group\", dev) VALUES(5, '/old', 'g', 7);"
      "PRAGMA user_version = 1;");
  auto store = Open();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(*store->SchemaVersion(), Store::kSchemaVersion);
  auto shares = store->LoadAllShares();
  ASSERT_TRUE(shares.ok());
  ASSERT_EQ(shares->size(), 1u);
  EXPECT_EQ((*shares)[0].dev, 7u);
  auto places = store->LoadFsPlaces();
  ASSERT_TRUE(places.ok());
  EXPECT_TRUE(places->empty());  // recorded by the daemon's first round
}

TEST_F(StoreTest, RolledBackRowsAreGone) {
  auto store = Open();
  ASSERT_TRUE(store->Begin().ok());
  ASSERT_TRUE(store->InsertGroup({"g", true, ""}).ok());
  for (int i = 1; i <= 100; ++i) {
    ASSERT_TRUE(store->InsertShare(Row(i, "/s" + std::to_string(i), "g")).ok());
  }
  store->Rollback();
  EXPECT_TRUE(store->LoadGroups()->empty());
  EXPECT_EQ(*store->CountShares(), 0u);
}

// The store keys shares by id only (schema 5); the caller keeps paths
// unique, and the loader refuses a path stored twice (loader_test).
TEST_F(StoreTest, DuplicateIdFailsInsideTransaction) {
  auto store = Open();
  ASSERT_TRUE(store->Begin().ok());
  ASSERT_TRUE(store->InsertShare(Row(1, "/a", "g")).ok());
  absl::Status s = store->InsertShare(Row(1, "/b", "g"));
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("/b"));
  store->Rollback();
}

// InsertShares writes 32 rows per statement and the rest one by one:
// every count around that size lands whole, every field in its column.
TEST_F(StoreTest, InsertSharesWritesEveryRowWhateverTheCount) {
  for (const std::size_t n : {0u, 1u, 31u, 32u, 33u, 64u, 100u}) {
    SCOPED_TRACE(n);
    std::vector<ShareRow> rows;
    for (std::size_t i = 0; i < n; ++i) {
      ShareRow r = Row(i + 1, "/s" + std::to_string(n) + "/" +
                                  std::to_string(i), "g");
      r.resource = "r" + std::to_string(i);
      r.description = "d" + std::to_string(i);
      r.options = i % 2 ? "ro" : "";
      rows.push_back(std::move(r));
    }
    std::vector<Store::ShareFields> fields;
    for (const ShareRow& r : rows) {
      fields.push_back({r.id, r.path, r.group, r.resource, r.description,
                        r.options, r.dev});
    }
    {
      auto store = Open();
      ASSERT_TRUE(store->Begin().ok());
      ASSERT_TRUE(store->InsertShares(fields).ok());
      ASSERT_TRUE(store->Commit().ok());
    }
    auto store = Open();
    auto loaded = store->LoadAllShares();
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    EXPECT_EQ(*loaded, rows);
    ASSERT_TRUE(store->Begin().ok());
    ASSERT_TRUE(store->DeleteGroup("g").ok());
    ASSERT_TRUE(store->Commit().ok());
  }
}

off_t FileSize(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? st.st_size : -1;
}

// `count` rows of store shape, ids from `first`.
std::vector<Store::ShareFields> Rows(int first, int count,
                                     std::vector<std::string>* paths) {
  paths->clear();
  for (int i = 0; i < count; ++i) {
    paths->push_back("/export/home/user" + std::to_string(first + i));
  }
  std::vector<Store::ShareFields> rows;
  for (int i = 0; i < count; ++i) {
    rows.push_back(
        {static_cast<uint64_t>(first + i), (*paths)[i], "g", "", "", "", 7});
  }
  return rows;
}

// Waits up to 20 s for the database file to pass `size` bytes.
off_t WaitForFileOver(const std::string& path, off_t size) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (FileSize(path) <= size &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return FileSize(path);
}

// One transaction: group "g" and `count` rows, ids from 1.
void CommitGroupAndRows(Store* store, int count) {
  std::vector<std::string> paths;
  ASSERT_TRUE(store->Begin().ok());
  ASSERT_TRUE(store->InsertGroup({"g", true, ""}).ok());
  ASSERT_TRUE(store->InsertShares(Rows(1, count, &paths)).ok());
  ASSERT_TRUE(store->Commit().ok());
}

// UsedBytes counts the pages in use, not the file: rows deleted leave the
// file's size but give their pages to SQLite's free list.
TEST_F(StoreTest, UsedBytesLeavesOutTheFreePages) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  ASSERT_NO_FATAL_FAILURE(CommitGroupAndRows(store.get(), 20000));
  absl::StatusOr<uint64_t> full = store->UsedBytes();
  ASSERT_TRUE(full.ok()) << full.status();
  EXPECT_GT(*full, 20000u * 20);  // each row's path alone is longer
  RawExec(
      "PRAGMA wal_checkpoint(TRUNCATE); DELETE FROM shares; "
      "PRAGMA wal_checkpoint(TRUNCATE);");
  absl::StatusOr<uint64_t> emptied = store->UsedBytes();
  ASSERT_TRUE(emptied.ok()) << emptied.status();
  EXPECT_LT(*emptied, *full / 4);
  EXPECT_GE(static_cast<uint64_t>(FileSize(path_)), *full);
}

// A commit that leaves the WAL over the mark returns before anything is
// copied into the database file; the checkpoint thread copies it after.
TEST_F(StoreTest, ACommitOverTheMarkLeavesTheCheckpointToItsThread) {
  absl::Notification go;  // outlives the store and its thread
  std::atomic<int> checkpoints{0};
  auto store = Open();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store
                  ->CheckpointInBackground(8,
                                           [&] {
                                             go.WaitForNotification();
                                             ++checkpoints;
                                           })
                  .ok());
  EXPECT_EQ(store->CheckpointInBackground().code(),
            absl::StatusCode::kFailedPrecondition);
  const off_t before = FileSize(path_);
  ASSERT_NO_FATAL_FAILURE(CommitGroupAndRows(store.get(), 3000));
  // In the WAL only: the commit did not checkpoint.
  EXPECT_EQ(FileSize(path_), before);
  go.Notify();
  EXPECT_GT(WaitForFileOver(path_, before + 8 * 16384), before + 8 * 16384);
  EXPECT_GE(checkpoints.load(), 1);
  // Every row reads back, from a connection of its own too.
  EXPECT_EQ(store->LoadAllShares()->size(), 3000u);
  EXPECT_EQ(RawText("SELECT count(*) FROM shares"), "3000");
}

// While the thread has not caught up and the WAL is past twice the mark,
// commits checkpoint themselves: the WAL cannot grow for as long as
// writes come.
TEST_F(StoreTest, CommitsCheckpointThemselvesWhileTheThreadLags) {
  absl::Notification go;  // outlives the store and its thread
  auto store = Open();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(
      store->CheckpointInBackground(8, [&] { go.WaitForNotification(); }).ok());
  const off_t before = FileSize(path_);
  ASSERT_NO_FATAL_FAILURE(CommitGroupAndRows(store.get(), 6000));
  EXPECT_EQ(FileSize(path_), before) << "the first commit checkpointed";
  // The thread is held: the next commit finds the WAL past twice the mark
  // and its checkpoint not done.
  std::vector<std::string> paths;
  ASSERT_TRUE(store->Begin().ok());
  ASSERT_TRUE(store->InsertShares(Rows(6001, 10, &paths)).ok());
  ASSERT_TRUE(store->Commit().ok());
  EXPECT_GT(FileSize(path_), before + 16 * 16384) << "the WAL was left to grow";
  go.Notify();
  EXPECT_EQ(RawText("SELECT count(*) FROM shares"), "6010");
}

// Under the mark, nothing is asked of the thread.
TEST_F(StoreTest, ACommitUnderTheMarkWakesNoCheckpoint) {
  std::atomic<int> checkpoints{0};  // outlives the store and its thread
  auto store = Open();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->CheckpointInBackground(1000, [&] { ++checkpoints; }).ok());
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(store->Begin().ok());
    ASSERT_TRUE(store->InsertGroup({"g" + std::to_string(i), true, ""}).ok());
    ASSERT_TRUE(store->Commit().ok());
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(checkpoints.load(), 0);
}

// A duplicate inside a statement of 32 rows names its own path, and the
// transaction goes on: the rows before it are in, the statement's others
// are not.
TEST_F(StoreTest, InsertSharesNamesTheDuplicateInsideAFullStatement) {
  auto store = Open();
  ASSERT_TRUE(store->Begin().ok());
  ASSERT_TRUE(store->InsertShare(Row(18, "/q", "g")).ok());
  std::vector<ShareRow> rows;
  for (int i = 0; i < 64; ++i) {
    rows.push_back(Row(i + 1, "/p/" + std::to_string(i), "g"));
  }
  std::vector<Store::ShareFields> fields;
  for (const ShareRow& r : rows) {
    fields.push_back({r.id, r.path, r.group, r.resource, r.description,
                      r.options, r.dev});
  }
  absl::Status s = store->InsertShares(fields);
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("inserting share /p/17:"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("UNIQUE"));
  // /p/17 has id 18. /p/0../p/16 (retried one by one) and the earlier
  // row; not /p/18 on.
  EXPECT_EQ(*store->CountShares(), 18u);
  ASSERT_TRUE(store->InsertShare(Row(2000, "/after", "g")).ok());
  ASSERT_TRUE(store->Commit().ok());
  EXPECT_EQ(*store->CountShares(), 19u);
}

TEST_F(StoreTest, DeleteGroupDeletesItsShares) {
  auto store = Open();
  ASSERT_TRUE(store->Begin().ok());
  ASSERT_TRUE(store->InsertGroup({"g", true, ""}).ok());
  ASSERT_TRUE(store->InsertGroup({"h", true, ""}).ok());
  ASSERT_TRUE(store->InsertShare(Row(1, "/a", "g")).ok());
  ASSERT_TRUE(store->InsertShare(Row(2, "/b", "h")).ok());
  ASSERT_TRUE(store->DeleteGroup("g").ok());
  ASSERT_TRUE(store->InsertGroup({"e", true, ""}).ok());
  ASSERT_TRUE(store->DeleteGroup("e", /*has_shares=*/false).ok());
  ASSERT_TRUE(store->Commit().ok());
  EXPECT_EQ(store->LoadGroups()->size(), 1u);
  EXPECT_TRUE(store->LoadShares("g")->empty());
  EXPECT_EQ(store->LoadShares("h")->size(), 1u);
}

TEST_F(StoreTest, UpdatesChangeTheRightRows) {
  auto store = Open();
  ASSERT_TRUE(store->Begin().ok());
  ASSERT_TRUE(store->InsertGroup({"g", true, ""}).ok());
  ASSERT_TRUE(store->InsertGroup({"h", true, ""}).ok());
  ASSERT_TRUE(store->InsertShare(Row(1, "/a", "g")).ok());
  ASSERT_TRUE(store->InsertShare(Row(2, "/b", "g")).ok());
  ASSERT_TRUE(store->SetGroupEnabled("g", false).ok());
  ASSERT_TRUE(store->SetGroupOptions("h", "ro").ok());
  ASSERT_TRUE(store->InsertShare(Row(3, "/c", "g")).ok());
  ASSERT_TRUE(store->MoveShare(1, "/a", "h").ok());
  ASSERT_TRUE(store->SetShareOptions(2, "/b", "nosuid").ok());
  ASSERT_TRUE(store->SetShareText(2, "/b", "the b", "bres").ok());
  ASSERT_TRUE(store->DeleteShare(3, "/c").ok());
  // A row that is not there: the caller's table and the store disagree.
  absl::Status missing = store->DeleteShare(99, "/nothing");
  EXPECT_EQ(missing.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(missing.message()),
              HasSubstr("share /nothing (row 99) is not in the store"));
  EXPECT_EQ(store->MoveShare(99, "/nothing", "g").code(),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ(store->SetShareOptions(99, "/nothing", "ro").code(),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ(store->SetShareText(99, "/nothing", "", "").code(),
            absl::StatusCode::kDataLoss);
  // The same values again still name one row.
  ASSERT_TRUE(store->SetShareOptions(2, "/b", "nosuid").ok());
  ASSERT_TRUE(store->Commit().ok());
  EXPECT_THAT(*store->LoadGroups(),
              ElementsAre(GroupRow{"g", false, ""}, GroupRow{"h", true, "ro"}));
  auto h = store->LoadShares("h");
  ASSERT_EQ(h->size(), 1u);
  EXPECT_EQ((*h)[0].path, "/a");
  auto g = store->LoadShares("g");
  ASSERT_EQ(g->size(), 1u);
  EXPECT_EQ((*g)[0].path, "/b");
  EXPECT_EQ((*g)[0].options, "nosuid");
  EXPECT_EQ((*g)[0].description, "the b");
  EXPECT_EQ((*g)[0].resource, "bres");
  EXPECT_EQ(*store->CountShares(), 2u);
}

TEST_F(StoreTest, SchemaFourMigratesToOneTreeWithEveryColumnKept) {
  // A store as schema version 4 left it: the path's UNIQUE index and the
  // index by group, which version 5 drops.
  RawOldStore(R"sql(
CREATE TABLE shares(id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE,
  "group" TEXT NOT NULL, resource TEXT NOT NULL DEFAULT '',
  description TEXT NOT NULL DEFAULT '', options TEXT NOT NULL DEFAULT '',
  dev INTEGER NOT NULL, fs_mount TEXT, fs_type TEXT, fs_source TEXT,
  replaces_group INTEGER NOT NULL DEFAULT 0);
CREATE INDEX shares_by_group ON shares("group");
CREATE TABLE mounts(client TEXT NOT NULL, path TEXT NOT NULL,
  PRIMARY KEY(client, path)) WITHOUT ROWID;
INSERT INTO groups VALUES('g', 0, 'ro');
INSERT INTO shares VALUES(4, '/x', 'g', 'xres', 'the x', 'rw=h', 7,
  '/', 'zfs', 'tank/x', 1);
INSERT INTO shares VALUES(9, '/y', 'g', '', '', '', 8, NULL, NULL, NULL, 0);
INSERT INTO mounts VALUES('10.0.0.1', '/x');
PRAGMA user_version = 4;
)sql");
  auto store = Open();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(*store->SchemaVersion(), Store::kSchemaVersion);
  auto rows = store->LoadAllShares();
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 2u);
  ShareRow x = Row(4, "/x", "g");
  x.resource = "xres";
  x.description = "the x";
  x.options = "rw=h";
  x.dev = 7;
  x.replaces_group = true;
  EXPECT_EQ((*rows)[0], x);
  EXPECT_EQ((*rows)[1].id, 9u);
  EXPECT_EQ((*rows)[1].dev, 8u);
  auto places = store->LoadFsPlaces();
  ASSERT_TRUE(places.ok());
  ASSERT_EQ(places->size(), 1u);
  EXPECT_EQ((*places)[0].source, "tank/x");
  EXPECT_EQ(store->LoadMounts()->size(), 1u);
  EXPECT_EQ(*store->MaxShareId(), 9u);
  // The old indexes are gone: one B-tree for the shares.
  EXPECT_EQ(RawText("SELECT COUNT(*) FROM sqlite_schema WHERE type = 'index' "
                    "AND tbl_name = 'shares'"),
            "0");
}

TEST_F(StoreTest, BeginFailsWhileAnotherWriterHoldsTheLock) {
  auto a = Open();
  auto b = Open();
  ASSERT_TRUE(a->Begin().ok());
  absl::Status s = b->Begin();
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  a->Rollback();
  EXPECT_TRUE(b->Begin().ok());
  b->Rollback();
}

// A writer waiting for the store gets in during a short pause of another
// connection's writes (the file-system watch writes its places a slice at
// a time). SQLite's own wait tries at 228 and 328 ms, then every 100 ms:
// it would miss a pause from 240 to 320 ms, and take the lock only after
// the other connection's next, long transaction.
TEST_F(StoreTest, AWaitingWriterGetsInDuringAShortPause) {
  auto s = Store::Open(path_, 5000);
  ASSERT_TRUE(s.ok()) << s.status();
  std::unique_ptr<Store> a = *std::move(s);
  s = Store::Open(path_, 5000);
  ASSERT_TRUE(s.ok()) << s.status();
  std::unique_ptr<Store> b = *std::move(s);
  ASSERT_TRUE(a->Begin().ok());
  std::atomic<int> order{0};
  int b_got = -1;
  absl::Notification b_waits;
  absl::Status b_status;
  std::thread waiter([&] {
    b_waits.Notify();
    b_status = b->Begin();
    b_got = order.fetch_add(1);
    if (b_status.ok()) b_status = b->Commit();
  });
  b_waits.WaitForNotification();
  std::this_thread::sleep_for(std::chrono::milliseconds(240));
  const absl::Status first = a->Commit();
  std::this_thread::sleep_for(std::chrono::milliseconds(80));  // the pause
  const absl::Status again = a->Begin();  // waits for b's, if b got in
  const int a_got = order.fetch_add(1);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  if (again.ok()) {
    EXPECT_TRUE(a->Commit().ok());
  }
  waiter.join();
  ASSERT_TRUE(first.ok()) << first;
  ASSERT_TRUE(again.ok()) << again;
  EXPECT_TRUE(b_status.ok()) << b_status;
  EXPECT_LT(b_got, a_got) << "the waiting writer missed the pause";
}
TEST_F(StoreTest, ReadOnlyStoreReadsButCannotWrite) {
  {
    auto store = Open();
    ASSERT_TRUE(store->Begin().ok());
    ASSERT_TRUE(store->InsertGroup({"g", true, ""}).ok());
    ASSERT_TRUE(store->Commit().ok());
  }
  auto ro = Store::OpenReadOnly(path_);
  ASSERT_TRUE(ro.ok()) << ro.status();
  EXPECT_EQ((*ro)->LoadGroups()->size(), 1u);
  ASSERT_TRUE((*ro)->Begin().ok());
  EXPECT_FALSE((*ro)->InsertGroup({"h", true, ""}).ok());
  (*ro)->Rollback();
}

TEST_F(StoreTest, MountRecordsAddAndRemove) {
  auto store = Open();
  ASSERT_TRUE(
      store->RecordMounts({{"c1", "/a"}, {"c2", "/a"}, {"c1", "/a"}}, {}).ok());
  ASSERT_TRUE(store->RecordMounts({{"c3", "/b"}}, {{"c1", "/a"}}).ok());
  auto m = store->LoadMounts();
  ASSERT_TRUE(m.ok());
  EXPECT_THAT(*m,
              ElementsAre(MountRecord{"c2", "/a"}, MountRecord{"c3", "/b"}));
}

// Schema 4: the mount records are one B-tree keyed (client, path), so the
// record flusher writes each record once: no rowid table beside the index
// of its primary key.
TEST_F(StoreTest, MountRecordsAreOneTreeKeyedByClientAndPath) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(RawText("SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' "
                    "AND tbl_name = 'mounts'"),
            "0");
  EXPECT_THAT(RawText("SELECT sql FROM sqlite_master WHERE name = 'mounts'"),
              HasSubstr("WITHOUT ROWID"));
}

TEST_F(StoreTest, SchemaThreeMountRecordsMigrateIntoOneTree) {
  Open().reset();
  // The mounts table as schemas 1 to 3 had it, with records in it.
  RawExec(R"sql(
DROP TABLE mounts;
CREATE TABLE mounts(client TEXT NOT NULL, path TEXT NOT NULL,
  PRIMARY KEY(client, path));
INSERT INTO mounts VALUES('10.0.0.2', '/a');
INSERT INTO mounts VALUES('10.0.0.1', '/b');
INSERT INTO mounts VALUES('10.0.0.1', '/a');
PRAGMA user_version = 3;
)sql");
  auto store = Open();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(*store->SchemaVersion(), Store::kSchemaVersion);
  EXPECT_THAT(RawText("SELECT sql FROM sqlite_master WHERE name = 'mounts'"),
              HasSubstr("WITHOUT ROWID"));
  auto m = store->LoadMounts();
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_THAT(*m, ElementsAre(MountRecord{"10.0.0.1", "/a"},
                              MountRecord{"10.0.0.1", "/b"},
                              MountRecord{"10.0.0.2", "/a"}));
  // More records than one insert statement takes, one of them already
  // stored and one twice, and removals, in one call.
  std::vector<MountRecord> added, want = {{"10.0.0.1", "/b"}};
  for (int i = 0; i < 40; ++i) {
    added.push_back({"10.0.1.1", "/p" + std::to_string(100 + i)});
    want.push_back(added.back());
  }
  added.push_back({"10.0.0.1", "/b"});
  added.push_back({"10.0.1.1", "/p100"});
  ASSERT_TRUE(store
                  ->RecordMounts(added, {{"10.0.0.1", "/a"},
                                         {"10.0.0.2", "/a"},
                                         {"10.0.0.9", "/never"}})
                  .ok());
  store.reset();
  store = Open();
  m = store->LoadMounts();
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(*m, want);
}

}  // namespace
}  // namespace libshare

namespace libshare {
namespace {

TEST(StoreGenerationTest, SavedGenerationSurvivesReopenAndRollback) {
  ::libshare::testing::TempDir dir;
  const std::string db = dir.path() + "/s.db";
  {
    auto s = Store::Open(db);
    ASSERT_TRUE(s.ok()) << s.status();
    auto g = (*s)->LoadGeneration();
    ASSERT_TRUE(g.ok()) << g.status();
    EXPECT_EQ(*g, 0u);  // never saved
    ASSERT_TRUE((*s)->Begin().ok());
    ASSERT_TRUE((*s)->SaveGeneration(41).ok());
    ASSERT_TRUE((*s)->Commit().ok());
    ASSERT_TRUE((*s)->Begin().ok());
    ASSERT_TRUE((*s)->SaveGeneration(99).ok());
    (*s)->Rollback();
  }
  auto s = Store::Open(db);
  ASSERT_TRUE(s.ok());
  auto g = (*s)->LoadGeneration();
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(*g, 41u);
}

}  // namespace
}  // namespace libshare
