#include "libshare/store.h"

#include <pthread.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdint>
#include <new>
#include <string>
#include <system_error>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "internal_text.h"
#include "libshare/files.h"

namespace libshare {
namespace {

using internal::ToAbsl;

// How a connection waits while another one writes (SQLITE_BUSY), until
// `arg` milliseconds have passed. SQLite's own wait (sqlite3_busy_timeout)
// sleeps 1, 2, 5, 10 ... up to 100 ms between tries, so a writer could
// sleep past every pause of one that writes in short transactions (the
// file-system watch's places, sharemgrd/access/fs_watch.cc): one add beside
// 1,000,000 shares, right after the batch that made them, waited 136-324
// ms for a round's places. This one tries again every 250 us for the
// first 50 ms, then every millisecond: a few thousand wakeups of a few
// microseconds each while a big batch holds the store for seconds. The
// time is the clock's: a connection is used by one thread at a time, and
// a wait begins when SQLite calls this with tries == 0, or (a count SQLite
// did not reset, as when a statement is prepared) after more than 20 ms
// without a call.
int WaitWhileBusy(void* arg, int tries) {
  using Clock = std::chrono::steady_clock;
  thread_local Clock::time_point began;
  thread_local Clock::time_point last_call;
  const Clock::time_point now = Clock::now();
  if (tries == 0 || now - last_call > std::chrono::milliseconds(20)) {
    began = now;
  }
  last_call = now;
  const auto limit = std::chrono::milliseconds(
      static_cast<int>(reinterpret_cast<intptr_t>(arg)));
  if (now - began >= limit) return 0;
  std::this_thread::sleep_for(now - began < std::chrono::milliseconds(50)
                                  ? std::chrono::microseconds(250)
                                  : std::chrono::microseconds(1000));
  return 1;
}

void SetBusyTimeout(sqlite3* db, int ms) {
  sqlite3_busy_handler(db, &WaitWhileBusy,
                       reinterpret_cast<void*>(static_cast<intptr_t>(ms)));
}

// Migration i brings user_version from i to i + 1.
constexpr const char* kMigrations[] = {
    // v1: groups, shares, mount records.
    R"sql(
CREATE TABLE groups(
  name TEXT PRIMARY KEY,
  enabled INTEGER NOT NULL DEFAULT 1,
  options TEXT NOT NULL DEFAULT '');
CREATE TABLE shares(
  id INTEGER PRIMARY KEY,
  path TEXT NOT NULL UNIQUE,
  "group" TEXT NOT NULL,
  resource TEXT NOT NULL DEFAULT '',
  description TEXT NOT NULL DEFAULT '',
  options TEXT NOT NULL DEFAULT '',
  dev INTEGER NOT NULL);
CREATE INDEX shares_by_group ON shares("group");
CREATE TABLE mounts(
  client TEXT NOT NULL,
  path TEXT NOT NULL,
  PRIMARY KEY(client, path));
)sql",
    // v2: the file system each share was recorded on (NULL: not yet; the
    // daemon records it at its next start).
    R"sql(
ALTER TABLE shares ADD COLUMN fs_mount TEXT;
ALTER TABLE shares ADD COLUMN fs_type TEXT;
ALTER TABLE shares ADD COLUMN fs_source TEXT;
)sql",
    // v3: per-property option inheritance. Shares that already had options
    // of their own keep them as a whole replacement of their group's (what
    // they meant when written) until their options are next written.
    R"sql(
ALTER TABLE shares ADD COLUMN replaces_group INTEGER NOT NULL DEFAULT 0;
UPDATE shares SET replaces_group = 1 WHERE options <> '';
)sql",
    // v4: mount records in one B-tree keyed (client, path), not a rowid
    // table plus the index of its primary key: the record flusher writes
    // each new record into one tree instead of two (SQLite's share of a
    // record insert 12.6k -> 9.6k instructions, of a delete 10.6k -> 8.3k).
    R"sql(
CREATE TABLE mounts_v4(
  client TEXT NOT NULL,
  path TEXT NOT NULL,
  PRIMARY KEY(client, path)) WITHOUT ROWID;
INSERT INTO mounts_v4(client, path) SELECT client, path FROM mounts;
DROP TABLE mounts;
ALTER TABLE mounts_v4 RENAME TO mounts;
)sql",
    // v5: shares in one B-tree, the rowid's (id). The path's UNIQUE index
    // and the index by group went: each add wrote three trees, and SQLite's
    // time for 15,000 store-shaped rows in one transaction fell from
    // 15.2 + 5.4 ms (inserts + commit) to 6.8 + 2.2 ms without them. The
    // daemon, the only writer (its lock file), keeps paths unique, the
    // loader refuses a store that holds a path twice, and rows are changed
    // by id. Deleting a group's shares scans the table (60 ms at
    // 1,000,000 shares), a rare operation.
    R"sql(
CREATE TABLE shares_v5(
  id INTEGER PRIMARY KEY,
  path TEXT NOT NULL,
  "group" TEXT NOT NULL,
  resource TEXT NOT NULL DEFAULT '',
  description TEXT NOT NULL DEFAULT '',
  options TEXT NOT NULL DEFAULT '',
  dev INTEGER NOT NULL,
  fs_mount TEXT,
  fs_type TEXT,
  fs_source TEXT,
  replaces_group INTEGER NOT NULL DEFAULT 0);
INSERT INTO shares_v5(id, path, "group", resource, description, options, dev,
                      fs_mount, fs_type, fs_source, replaces_group)
  SELECT id, path, "group", resource, description, options, dev,
         fs_mount, fs_type, fs_source, replaces_group FROM shares;
DROP TABLE shares;
ALTER TABLE shares_v5 RENAME TO shares;
)sql",
    // v6: each share's file-system identity, recorded when it is added
    // (libshare/fs_identity.h; "" for the shares stored before).
    R"sql(
ALTER TABLE shares ADD COLUMN fs_identity TEXT NOT NULL DEFAULT '';
)sql",
};
constexpr int kMigrationCount = sizeof(kMigrations) / sizeof(kMigrations[0]);
static_assert(kMigrationCount == Store::kSchemaVersion,
              "one migration per schema version");

// Mount records inserted by one statement of kMountRowsPerInsert rows: a
// statement's fixed cost (its start, its end, the reset) is then paid once
// per 16 records (SQLite's share of a record insert 9.6k -> 7.5k
// instructions). Deletes stay one row per statement: for "(client, path)
// IN (VALUES ...)" SQLite scans the table, and a chain of 16 ORs cost more
// per row than single deletes (9.8k against 8.3k instructions).
constexpr std::size_t kMountRowsPerInsert = 16;
constexpr char kInsertMountRows[] =
    "INSERT OR IGNORE INTO mounts(client, path) VALUES"
    "(?,?),(?,?),(?,?),(?,?),(?,?),(?,?),(?,?),(?,?),"
    "(?,?),(?,?),(?,?),(?,?),(?,?),(?,?),(?,?),(?,?)";

constexpr std::size_t CountParameters(const char* sql) {
  std::size_t n = 0;
  for (; *sql != '\0'; ++sql) n += *sql == '?';
  return n;
}
static_assert(CountParameters(kInsertMountRows) == 2 * kMountRowsPerInsert,
              "one (client, path) pair per row");

// A batch's shares inserted by one statement of kShareRowsPerInsert rows:
// the statement's fixed cost is then paid once per 32 shares, and SQLite
// inserts 15,000 store-shaped rows in about half the time it takes one
// row per statement (`scale_probe sqlite-floor DB N PREFIX ROWS`: 30.3 ms
// against 15.5 ms at 16 rows, 14.5 at 64; 32 is past the bend).
constexpr std::size_t kShareRowsPerInsert = 32;
constexpr char kInsertShareHead[] =
    "INSERT INTO shares(id, path, \"group\", resource, description, options, "
    "dev, fs_identity) VALUES";
constexpr char kShareRowParameters[] = "(?,?,?,?,?,?,?,?)";
constexpr int kShareColumns = 8;
struct InsertShareRowsSql {
  char text[sizeof kInsertShareHead - 1 +
            kShareRowsPerInsert * sizeof kShareRowParameters];
};
constexpr InsertShareRowsSql MakeInsertShareRows() {
  InsertShareRowsSql sql{};
  std::size_t n = 0;
  for (std::size_t i = 0; i + 1 < sizeof kInsertShareHead; ++i) {
    sql.text[n++] = kInsertShareHead[i];
  }
  for (std::size_t r = 0; r < kShareRowsPerInsert; ++r) {
    if (r > 0) sql.text[n++] = ',';
    for (std::size_t i = 0; i + 1 < sizeof kShareRowParameters; ++i) {
      sql.text[n++] = kShareRowParameters[i];
    }
  }
  sql.text[n] = '\0';
  return sql;
}
constexpr InsertShareRowsSql kInsertShareRows = MakeInsertShareRows();
static_assert(CountParameters(kInsertShareRows.text) ==
                  kShareColumns * kShareRowsPerInsert,
              "one share's columns per row");

constexpr const char* kSql[] = {
    "BEGIN IMMEDIATE",
    "COMMIT",
    "ROLLBACK",
    "SELECT name, enabled, options, IFNULL((SELECT file FROM managed_groups "
    "WHERE managed_groups.name = groups.name), '') FROM groups ORDER BY name",
    "SELECT id, path, \"group\", resource, description, options, dev, "
    "replaces_group, fs_identity FROM shares WHERE \"group\" = ?1 ORDER BY id",
    "SELECT id, path, \"group\", resource, description, options, dev, "
    "replaces_group, fs_identity FROM shares ORDER BY id",
    "SELECT COUNT(*) FROM shares",
    "SELECT IFNULL(MAX(id), 0) FROM shares",
    "INSERT INTO groups(name, enabled, options) VALUES(?1, ?2, ?3)",
    "DELETE FROM shares WHERE \"group\" = ?1",
    "DELETE FROM groups WHERE name = ?1",
    "UPDATE groups SET enabled = ?2 WHERE name = ?1",
    "UPDATE groups SET options = ?2 WHERE name = ?1",
    "INSERT INTO shares(id, path, \"group\", resource, description, options, "
    "dev, fs_identity) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    kInsertShareRows.text,
    "DELETE FROM shares WHERE id = ?1",
    "UPDATE shares SET \"group\" = ?2 WHERE id = ?1",
    "UPDATE shares SET options = ?2, replaces_group = 0 WHERE id = ?1",
    "UPDATE shares SET description = ?2, resource = ?3 WHERE id = ?1",
    "INSERT OR IGNORE INTO mounts(client, path) VALUES(?1, ?2)",
    kInsertMountRows,
    "DELETE FROM mounts WHERE client = ?1 AND path = ?2",
    "SELECT client, path FROM mounts ORDER BY client, path",
    "INSERT OR REPLACE INTO managed_groups(name, file) VALUES(?1, ?2)",
    "DELETE FROM managed_groups WHERE name = ?1",
    "SELECT id, path, fs_mount, fs_type, fs_source FROM shares "
    "WHERE fs_mount IS NOT NULL ORDER BY id",
    "UPDATE shares SET fs_mount = ?2, fs_type = ?3, fs_source = ?4 "
    "WHERE id = ?1",
    "SELECT value FROM meta WHERE key = 'generation'",
    "INSERT OR REPLACE INTO meta(key, value) VALUES('generation', ?1)",
};

// The managed-group marks (sharemgrd --follow-exports): a table of its own,
// created when missing, so that the schema version and the other tables
// stay as they are (an older sharemgr ignores it).
constexpr char kManagedGroupsTable[] =
    "CREATE TABLE IF NOT EXISTS managed_groups("
    "name TEXT PRIMARY KEY, file TEXT NOT NULL)";

// Counters kept beside the schema (the table generation). Created when a
// store is opened for writing, without a schema version: a program that
// does not know the table ignores it, so the store stays readable by it.
constexpr char kMetaTable[] =
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, "
    "value INTEGER NOT NULL)";

void BindText(sqlite3_stmt* st, int i, std::string_view v) {
  sqlite3_bind_text(st, i, v.data(), static_cast<int>(v.size()), SQLITE_STATIC);
}

// A share's columns as parameters first + 1 .. first + kShareColumns.
void BindShare(sqlite3_stmt* st, int first, const Store::ShareFields& s) {
  sqlite3_bind_int64(st, first + 1, static_cast<sqlite3_int64>(s.id));
  BindText(st, first + 2, s.path);
  BindText(st, first + 3, s.group);
  BindText(st, first + 4, s.resource);
  BindText(st, first + 5, s.description);
  BindText(st, first + 6, s.options);
  sqlite3_bind_int64(st, first + 7, static_cast<sqlite3_int64>(s.dev));
  // Never NULL (a default-made view has no data): "" is no identity.
  BindText(st, first + 8,
           s.fs_identity.empty() ? std::string_view("") : s.fs_identity);
}

std::string ColumnText(sqlite3_stmt* st, int i) {
  const unsigned char* p = sqlite3_column_text(st, i);
  return p == nullptr ? std::string()
                      : std::string(reinterpret_cast<const char*>(p),
                                    sqlite3_column_bytes(st, i));
}

std::string_view ColumnView(sqlite3_stmt* st, int i) {
  const unsigned char* p = sqlite3_column_text(st, i);
  return p == nullptr ? std::string_view()
                      : std::string_view(reinterpret_cast<const char*>(p),
                                         sqlite3_column_bytes(st, i));
}

}  // namespace

Store::Store(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}

// CheckpointInBackground's thread and its connection. The writing
// connection's WAL hook (AfterCommit) asks for a checkpoint; the thread
// runs one per request, however many commits asked meanwhile.
class Store::Checkpointer {
 public:
  Checkpointer(sqlite3* db, int wal_pages, std::function<void()> before_each)
      : db_(db), wal_pages_(wal_pages), before_each_(std::move(before_each)) {}
  ~Checkpointer() {
    {
      absl::MutexLock l(&mu_);
      stop_ = true;
    }
    if (thread_.joinable()) thread_.join();  // after a checkpoint under way
    sqlite3_close(db_);
  }
  Checkpointer(const Checkpointer&) = delete;
  Checkpointer& operator=(const Checkpointer&) = delete;

  // Throws std::system_error when no thread can be made.
  void Start() {
    thread_ = std::thread([this] { Loop(); });
  }

  // sqlite3_wal_hook's callback: runs on the committing thread after its
  // commit (the write lock released), with the WAL's page count then.
  //
  // A PASSIVE checkpoint copies the frames there when it starts, and the
  // WAL starts over (instead of growing) only at a write that finds every
  // frame copied. Commits that keep landing while the thread checkpoints
  // would let the WAL grow for as long as they come. So once the WAL is
  // past twice the mark while the thread has not caught up (a checkpoint
  // asked for and not run, under way, or the last one left frames
  // behind), the commit checkpoints itself, as SQLite's automatic
  // checkpoint does: while the thread's own checkpoint runs, that returns
  // at once (busy), and the next commit tries again.
  static int AfterCommit(void* self, sqlite3* db, const char* name, int pages) {
    auto* c = static_cast<Checkpointer*>(self);
    if (pages < c->wal_pages_) return SQLITE_OK;
    bool here = false;
    {
      absl::MutexLock l(&c->mu_);
      here = pages >= 2 * c->wal_pages_ &&
             (c->wanted_ || c->running_ || c->behind_);
      if (!here) c->wanted_ = true;
    }
    if (here) {
      int log = 0;
      int copied = 0;
      const bool all =
          sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, &log,
                                    &copied) == SQLITE_OK &&
          log == copied;
      if (all) {
        absl::MutexLock l(&c->mu_);
        c->behind_ = false;
      }
    }
    return SQLITE_OK;
  }

 private:
  void Loop() {
    (void)pthread_setname_np(pthread_self(), "sm-checkpoint");
    for (;;) {
      {
        absl::MutexLock l(&mu_);
        mu_.Await(absl::Condition(
            +[](Checkpointer* c) ABSL_EXCLUSIVE_LOCKS_REQUIRED(c->mu_) {
              return c->wanted_ || c->stop_;
            },
            this));
        if (stop_) return;
        wanted_ = false;
        running_ = true;
      }
      if (before_each_) before_each_();
      // Busy (another checkpoint under way) or failed: the next commit
      // over the mark asks again.
      int log = 0;
      int copied = 0;
      const bool all =
          sqlite3_wal_checkpoint_v2(db_, "main", SQLITE_CHECKPOINT_PASSIVE,
                                    &log, &copied) == SQLITE_OK &&
          log == copied;
      absl::MutexLock l(&mu_);
      running_ = false;
      behind_ = !all;
    }
  }

  sqlite3* const db_;
  const int wal_pages_;
  const std::function<void()> before_each_;
  absl::Mutex mu_;
  bool wanted_ ABSL_GUARDED_BY(mu_) = false;
  bool running_ ABSL_GUARDED_BY(mu_) = false;
  bool behind_ ABSL_GUARDED_BY(mu_) = false;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

Store::~Store() {
  if (checkpointer_ != nullptr) {
    sqlite3_wal_hook(db_, nullptr, nullptr);
    checkpointer_.reset();
  }
  for (sqlite3_stmt* st : stmts_) sqlite3_finalize(st);
  sqlite3_close(db_);
}

absl::Status Store::CheckpointInBackground(int wal_pages,
                                           std::function<void()> before_each) {
  if (checkpointer_ != nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat(path_, ": checkpoints already run in the background"));
  }
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path_.c_str(), &db,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX,
                      nullptr) != SQLITE_OK) {
    absl::Status s = absl::InternalError(
        absl::StrCat(path_, ": cannot open a connection for checkpoints: ",
                     db != nullptr ? sqlite3_errmsg(db) : "out of memory"));
    sqlite3_close(db);
    return s;
  }
  SetBusyTimeout(db, kDefaultBusyTimeoutMs);
  // The file this connection writes, and the sync of the database file
  // after each checkpoint, as the store's own connection.
  const FileId opened = IdOf(path_);
  if (!opened.known || !db_file_.known || opened.dev != db_file_.dev ||
      opened.ino != db_file_.ino) {
    sqlite3_close(db);
    return absl::FailedPreconditionError(absl::StrCat(
        path_, ": is no longer the store opened; no checkpoint thread"));
  }
  // A read opens the connection's WAL: until then SQLite does not know the
  // file is in WAL mode, and a checkpoint does nothing.
  if (sqlite3_exec(db,
                   "PRAGMA synchronous=FULL; "
                   "SELECT count(*) FROM sqlite_master",
                   nullptr, nullptr, nullptr) != SQLITE_OK) {
    absl::Status s = absl::InternalError(absl::StrCat(
        path_,
        ": cannot read the store for checkpoints: ", sqlite3_errmsg(db)));
    sqlite3_close(db);
    return s;
  }
  std::unique_ptr<Checkpointer> c;
  try {
    c = std::make_unique<Checkpointer>(db, wal_pages, std::move(before_each));
  } catch (const std::bad_alloc&) {
    sqlite3_close(db);
    return absl::ResourceExhaustedError(
        absl::StrCat(path_, ": out of memory for the checkpoint thread"));
  }
  try {
    c->Start();
  } catch (const std::system_error& e) {
    return absl::ResourceExhaustedError(absl::StrCat(
        path_, ": cannot start the checkpoint thread: ", e.what()));
  }
  // The hook replaces SQLite's automatic checkpoint on this connection.
  sqlite3_wal_hook(db_, &Checkpointer::AfterCommit, c.get());
  checkpointer_ = std::move(c);
  return absl::OkStatus();
}

absl::Status Store::Error(std::string_view what) const {
  int code = sqlite3_extended_errcode(db_);
  std::string msg =
      absl::StrCat(path_, ": ", ToAbsl(what), ": ", sqlite3_errmsg(db_));
  if ((code & 0xff) == SQLITE_BUSY || (code & 0xff) == SQLITE_LOCKED) {
    return absl::UnavailableError(msg);
  }
  return absl::InternalError(msg);
}

absl::StatusOr<std::unique_ptr<Store>> Store::Open(const std::string& path,
                                                   int busy_timeout_ms) {
  if (absl::Status s = MakeParentFolders(path); !s.ok()) return s;
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(
      path.c_str(), &db,
      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
      nullptr);
  std::unique_ptr<Store> store(new Store(db, path));
  if (rc != SQLITE_OK) return store->Error("cannot open");
  if (absl::Status s = store->Configure(busy_timeout_ms, true); !s.ok()) {
    return s;
  }
  // SQLite opens a file it may not write read-only, without a word: every
  // change would then fail at its commit.
  if (sqlite3_db_readonly(db, "main") == 1) {
    return absl::FailedPreconditionError(absl::StrCat(
        path, ": cannot be written (file permissions or attributes, or a "
              "read-only file system)"));
  }
  if (absl::Status s = store->Migrate(); !s.ok()) return s;
  if (absl::Status s = store->Exec(kManagedGroupsTable); !s.ok()) return s;
  store->RememberFiles();
  return store;
}

Store::FileId Store::IdOf(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return {};
  return {true, static_cast<uint64_t>(st.st_dev),
          static_cast<uint64_t>(st.st_ino)};
}

void Store::RememberFiles() {
  db_file_ = IdOf(path_);
  wal_file_ = IdOf(path_ + "-wal");  // in WAL mode, there while open
}

absl::Status Store::CheckFilesUnchanged() const {
  const auto same = [](const FileId& was, const FileId& now) {
    return !was.known || (now.known && now.dev == was.dev && now.ino == was.ino);
  };
  if (same(db_file_, IdOf(path_)) && same(wal_file_, IdOf(path_ + "-wal"))) {
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(absl::StrCat(
      path_, ": the store (or its -wal file) was removed or replaced while "
             "sharemgrd ran; nothing was written (a commit would have gone to "
             "a file no longer there): restart sharemgrd, which opens the "
             "store now at that path"));
}

absl::StatusOr<std::unique_ptr<Store>> Store::OpenReadOnly(
    const std::string& path, int busy_timeout_ms) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db,
                           SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr);
  std::unique_ptr<Store> store(new Store(db, path));
  if (rc != SQLITE_OK) return store->Error("cannot open");
  if (absl::Status s = store->Configure(busy_timeout_ms, false); !s.ok()) {
    return s;
  }
  absl::StatusOr<int> v = store->SchemaVersion();
  if (!v.ok()) return v.status();
  if (*v != kSchemaVersion) {
    return absl::FailedPreconditionError(absl::StrCat(
        path, ": schema version ", *v, ", expected ", kSchemaVersion));
  }
  return store;
}

absl::Status Store::Exec(const char* sql) {
  if (sqlite3_exec(db_, sql, nullptr, nullptr, nullptr) != SQLITE_OK) {
    return Error(absl::StrCat("\"", ToAbsl(std::string_view(sql).substr(0, 60)),
                              "\" failed"));
  }
  return absl::OkStatus();
}

absl::Status Store::Configure(int busy_timeout_ms, bool writable) {
  SetBusyTimeout(db_, busy_timeout_ms);
  if (writable) {
    // A store made now gets 16 KiB pages; an existing one keeps the size
    // it was made with (SQLite sets it only on an empty file, and reads
    // nothing to take the request: what is wrong with a file is reported
    // by the pragma below). A batch's commit writes each dirty page to the
    // WAL with a frame of its own: 15,000 adds wrote 354 frames of 4 KiB.
    // One transaction of 100,000 store-shaped rows committed in 24 ms
    // with 4 KiB pages and 20-22 ms with 16 KiB (without a checkpoint),
    // and its checkpoint took 16 against 10 ms (bench/JOURNAL.md, "Pages
    // of 16 KiB").
    (void)sqlite3_exec(db_, "PRAGMA page_size=16384", nullptr, nullptr,
                       nullptr);
    // WAL lets loader threads and readers proceed during a commit; FULL
    // makes a commit durable once Commit() returns.
    // The first read of the file: what says a file is no store.
    if (sqlite3_exec(db_, "PRAGMA journal_mode=WAL", nullptr, nullptr,
                     nullptr) != SQLITE_OK) {
      return Error("not a usable SQLite store");
    }
  }
  if (absl::Status s = Exec("PRAGMA synchronous=FULL"); !s.ok()) return s;
  // Up to 32 MiB of page cache (allocated only as pages are used): a
  // 100,000-share batch then never spills to the WAL before its commit.
  if (absl::Status s = Exec("PRAGMA cache_size=-32768"); !s.ok()) return s;
  return absl::OkStatus();
}

absl::StatusOr<int64_t> Store::IntPragma(const char* pragma,
                                         std::string_view what) {
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db_, pragma, -1, &st, nullptr) != SQLITE_OK) {
    sqlite3_finalize(st);
    return Error(what);
  }
  const int rc = sqlite3_step(st);
  const int64_t v = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
  sqlite3_finalize(st);
  if (rc != SQLITE_ROW) return Error(what);
  return v;
}

absl::StatusOr<int> Store::SchemaVersion() {
  absl::StatusOr<int64_t> v =
      IntPragma("PRAGMA user_version", "reading user_version");
  if (!v.ok()) return v.status();
  return static_cast<int>(*v);
}

absl::Status Store::Migrate() {
  absl::StatusOr<int> v = SchemaVersion();
  if (!v.ok()) return v.status();
  if (*v > kSchemaVersion) {
    return absl::FailedPreconditionError(
        absl::StrCat(path_, ": schema version ", *v,
                     " is newer than this program's (", kSchemaVersion, ")"));
  }
  for (int i = *v; i < kSchemaVersion; ++i) {
    if (absl::Status s = Exec("BEGIN IMMEDIATE"); !s.ok()) return s;
    absl::Status s = Exec(kMigrations[i]);
    if (s.ok()) {
      s = Exec(absl::StrCat("PRAGMA user_version = ", i + 1).c_str());
    }
    if (s.ok()) s = Exec("COMMIT");
    if (!s.ok()) {
      Rollback();
      return s;
    }
  }
  return Exec(kMetaTable);
}

absl::StatusOr<sqlite3_stmt*> Store::Prepared(Stmt s) {
  sqlite3_stmt*& st = stmts_[s];
  if (st == nullptr) {
    if (sqlite3_prepare_v3(db_, kSql[s], -1, SQLITE_PREPARE_PERSISTENT, &st,
                           nullptr) != SQLITE_OK) {
      st = nullptr;
      return Error(absl::StrCat("preparing \"", kSql[s], "\""));
    }
  } else {
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
  }
  return st;
}

absl::Status Store::Run(sqlite3_stmt* st, std::string_view what) {
  int rc = sqlite3_step(st);
  absl::Status status = rc == SQLITE_DONE ? absl::OkStatus() : Error(what);
  sqlite3_reset(st);
  return status;
}

absl::StatusOr<std::vector<GroupRow>> Store::LoadGroups() {
  absl::StatusOr<sqlite3_stmt*> st = Prepared(kSelectGroups);
  if (!st.ok()) return st.status();
  std::vector<GroupRow> out;
  int rc;
  while ((rc = sqlite3_step(*st)) == SQLITE_ROW) {
    GroupRow g;
    g.name = ColumnText(*st, 0);
    g.enabled = sqlite3_column_int(*st, 1) != 0;
    g.options = ColumnText(*st, 2);
    g.managed_by = ColumnText(*st, 3);
    out.push_back(std::move(g));
  }
  sqlite3_reset(*st);
  if (rc != SQLITE_DONE) return Error("reading groups");
  return out;
}

absl::StatusOr<std::vector<ShareRow>> Store::ReadShares(sqlite3_stmt* st,
                                                        std::string_view what) {
  std::vector<ShareRow> out;
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    ShareRow r;
    r.id = static_cast<uint64_t>(sqlite3_column_int64(st, 0));
    r.path = ColumnText(st, 1);
    r.group = ColumnText(st, 2);
    r.resource = ColumnText(st, 3);
    r.description = ColumnText(st, 4);
    r.options = ColumnText(st, 5);
    r.dev = static_cast<uint64_t>(sqlite3_column_int64(st, 6));
    r.replaces_group = sqlite3_column_int64(st, 7) != 0;
    r.fs_identity = ColumnText(st, 8);
    out.push_back(std::move(r));
  }
  sqlite3_reset(st);
  if (rc != SQLITE_DONE) return Error(what);
  return out;
}

absl::StatusOr<std::vector<ShareRow>> Store::LoadShares(
    std::string_view group) {
  absl::StatusOr<sqlite3_stmt*> st = Prepared(kSelectShares);
  if (!st.ok()) return st.status();
  BindText(*st, 1, group);
  return ReadShares(*st,
                    absl::StrCat("reading shares of group ", ToAbsl(group)));
}

absl::StatusOr<std::vector<ShareRow>> Store::LoadAllShares() {
  absl::StatusOr<sqlite3_stmt*> st = Prepared(kSelectAllShares);
  if (!st.ok()) return st.status();
  return ReadShares(*st, "reading shares");
}

absl::Status Store::ScanAllShares(
    absl::FunctionRef<absl::Status(const ShareRowView&)> fn) {
  absl::StatusOr<sqlite3_stmt*> st = Prepared(kSelectAllShares);
  if (!st.ok()) return st.status();
  int rc;
  while ((rc = sqlite3_step(*st)) == SQLITE_ROW) {
    ShareRowView r;
    r.id = static_cast<uint64_t>(sqlite3_column_int64(*st, 0));
    r.path = ColumnView(*st, 1);
    r.group = ColumnView(*st, 2);
    r.resource = ColumnView(*st, 3);
    r.description = ColumnView(*st, 4);
    r.options = ColumnView(*st, 5);
    r.dev = static_cast<uint64_t>(sqlite3_column_int64(*st, 6));
    r.replaces_group = sqlite3_column_int64(*st, 7) != 0;
    r.fs_identity = ColumnView(*st, 8);
    if (absl::Status s = fn(r); !s.ok()) {
      sqlite3_reset(*st);
      return s;
    }
  }
  sqlite3_reset(*st);
  if (rc != SQLITE_DONE) return Error("reading shares");
  return absl::OkStatus();
}

void Store::ReleaseMemory() { sqlite3_db_release_memory(db_); }

absl::StatusOr<uint64_t> Store::CountShares() {
  absl::StatusOr<sqlite3_stmt*> st = Prepared(kCountShares);
  if (!st.ok()) return st.status();
  if (sqlite3_step(*st) != SQLITE_ROW) return Error("counting shares");
  uint64_t n = static_cast<uint64_t>(sqlite3_column_int64(*st, 0));
  sqlite3_reset(*st);
  return n;
}

absl::StatusOr<uint64_t> Store::UsedBytes() {
  int64_t v[3] = {0, 0, 0};
  const char* const pragmas[3] = {"PRAGMA page_count", "PRAGMA freelist_count",
                                  "PRAGMA page_size"};
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<int64_t> got =
        IntPragma(pragmas[i], "reading the file's size");
    if (!got.ok()) return got.status();
    v[i] = *got;
  }
  const int64_t pages = v[0] > v[1] ? v[0] - v[1] : 0;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(v[2]);
}

absl::StatusOr<uint64_t> Store::MaxShareId() {
  absl::StatusOr<sqlite3_stmt*> st = Prepared(kMaxShareId);
  if (!st.ok()) return st.status();
  if (sqlite3_step(*st) != SQLITE_ROW) return Error("reading share ids");
  uint64_t n = static_cast<uint64_t>(sqlite3_column_int64(*st, 0));
  sqlite3_reset(*st);
  return n;
}

absl::StatusOr<uint64_t> Store::LoadGeneration() {
  absl::StatusOr<sqlite3_stmt*> st = Prepared(kSelectGeneration);
  if (!st.ok()) return st.status();
  int rc = sqlite3_step(*st);
  uint64_t g = rc == SQLITE_ROW
                   ? static_cast<uint64_t>(sqlite3_column_int64(*st, 0))
                   : 0;
  sqlite3_reset(*st);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) return Error("reading generation");
  return g;
}

absl::Status Store::SaveGeneration(uint64_t generation) {
  absl::StatusOr<sqlite3_stmt*> st = Prepared(kSaveGeneration);
  if (!st.ok()) return st.status();
  sqlite3_bind_int64(*st, 1, static_cast<sqlite3_int64>(generation));
  return Run(*st, "saving generation");
}

absl::StatusOr<std::string> Store::LoadMeta(std::string_view key) {
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db_, "SELECT value FROM meta WHERE key = ?1", -1, &st,
                         nullptr) != SQLITE_OK) {
    return Error(absl::StrCat("reading ", ToAbsl(key)));
  }
  BindText(st, 1, key);
  const int rc = sqlite3_step(st);
  std::string value;
  if (rc == SQLITE_ROW) {
    const unsigned char* t = sqlite3_column_text(st, 0);
    if (t != nullptr) value.assign(reinterpret_cast<const char*>(t));
  }
  absl::Status status = rc == SQLITE_ROW || rc == SQLITE_DONE
                            ? absl::OkStatus()
                            : Error(absl::StrCat("reading ", ToAbsl(key)));
  sqlite3_finalize(st);
  if (!status.ok()) return status;
  return value;
}

absl::Status Store::SaveMeta(std::string_view key, std::string_view value) {
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db_,
                         "INSERT OR REPLACE INTO meta(key, value) "
                         "VALUES(?1, ?2)",
                         -1, &st, nullptr) != SQLITE_OK) {
    return Error(absl::StrCat("saving ", ToAbsl(key)));
  }
  BindText(st, 1, key);
  BindText(st, 2, value);
  const int rc = sqlite3_step(st);
  absl::Status status = rc == SQLITE_DONE
                            ? absl::OkStatus()
                            : Error(absl::StrCat("saving ", ToAbsl(key)));
  sqlite3_finalize(st);
  return status;
}

absl::Status Store::Begin() {
  if (absl::Status s = CheckFilesUnchanged(); !s.ok()) return s;
  absl::StatusOr<sqlite3_stmt*> st = Prepared(kBegin);
  if (!st.ok()) return st.status();
  return Run(*st, "begin transaction");
}

absl::Status Store::Commit() {
  absl::StatusOr<sqlite3_stmt*> st = Prepared(kCommit);
  if (!st.ok()) return st.status();
  return Run(*st, "commit");
}

void Store::Rollback() {
  if (sqlite3_get_autocommit(db_)) return;  // no transaction open
  absl::StatusOr<sqlite3_stmt*> st = Prepared(kRollback);
  if (st.ok()) (void)Run(*st, "rollback");
}

absl::Status Store::InsertGroup(const GroupRow& g) {
  absl::StatusOr<sqlite3_stmt*> st = Prepared(kInsertGroup);
  if (!st.ok()) return st.status();
  BindText(*st, 1, g.name);
  sqlite3_bind_int(*st, 2, g.enabled ? 1 : 0);
  BindText(*st, 3, g.options);
  return Run(*st, absl::StrCat("inserting group ", g.name));
}

absl::Status Store::DeleteGroup(std::string_view name, bool has_shares) {
  absl::StatusOr<sqlite3_stmt*> st;
  if (has_shares) {  // a scan of the table: no index by group
    st = Prepared(kDeleteGroupShares);
    if (!st.ok()) return st.status();
    BindText(*st, 1, name);
    if (absl::Status s =
            Run(*st, absl::StrCat("deleting shares of ", ToAbsl(name)));
        !s.ok()) {
      return s;
    }
  }
  if (absl::Status s = SetGroupManager(name, ""); !s.ok()) return s;
  st = Prepared(kDeleteGroup);
  if (!st.ok()) return st.status();
  BindText(*st, 1, name);
  return Run(*st, absl::StrCat("deleting group ", ToAbsl(name)));
}

absl::Status Store::SetGroupManager(std::string_view name,
                                    std::string_view file) {
  absl::StatusOr<sqlite3_stmt*> st =
      Prepared(file.empty() ? kDeleteManager : kSetManager);
  if (!st.ok()) return st.status();
  BindText(*st, 1, name);
  if (!file.empty()) BindText(*st, 2, file);
  return Run(*st, absl::StrCat("marking group ", ToAbsl(name), " managed"));
}

absl::Status Store::SetGroupEnabled(std::string_view name, bool enabled) {
  absl::StatusOr<sqlite3_stmt*> st = Prepared(kSetGroupEnabled);
  if (!st.ok()) return st.status();
  BindText(*st, 1, name);
  sqlite3_bind_int(*st, 2, enabled ? 1 : 0);
  return Run(*st, absl::StrCat("updating group ", ToAbsl(name)));
}

absl::Status Store::SetGroupOptions(std::string_view name,
                                    std::string_view options) {
  absl::StatusOr<sqlite3_stmt*> st = Prepared(kSetGroupOptions);
  if (!st.ok()) return st.status();
  BindText(*st, 1, name);
  BindText(*st, 2, options);
  return Run(*st, absl::StrCat("updating group ", ToAbsl(name)));
}

absl::Status Store::InsertShare(const ShareRow& s) {
  return InsertShare(ShareFields{s.id, s.path, s.group, s.resource,
                                 s.description, s.options, s.dev});
}

absl::Status Store::InsertShare(const ShareFields& s) {
  absl::StatusOr<sqlite3_stmt*> st = Prepared(kInsertShare);
  if (!st.ok()) return st.status();
  BindShare(*st, 0, s);
  // The message is made only on failure: one allocation per row less in
  // a batch's inserts.
  const int rc = sqlite3_step(*st);
  absl::Status status =
      rc == SQLITE_DONE
          ? absl::OkStatus()
          : Error(absl::StrCat("inserting share ", ToAbsl(s.path)));
  sqlite3_reset(*st);
  return status;
}

absl::Status Store::InsertShares(absl::Span<const ShareFields> rows) {
  std::size_t i = 0;
  if (rows.size() >= kShareRowsPerInsert) {
    absl::StatusOr<sqlite3_stmt*> st = Prepared(kInsertShares);
    if (!st.ok()) return st.status();
    for (; i + kShareRowsPerInsert <= rows.size(); i += kShareRowsPerInsert) {
      for (std::size_t k = 0; k < kShareRowsPerInsert; ++k) {
        BindShare(*st, static_cast<int>(k) * kShareColumns, rows[i + k]);
      }
      const int rc = sqlite3_step(*st);
      sqlite3_reset(*st);
      if (rc == SQLITE_DONE) continue;
      // The statement was undone as a whole. While the transaction stands
      // (a constraint, not a lost transaction), its rows one at a time
      // name the share that failed.
      if (sqlite3_get_autocommit(db_) != 0) {
        return Error(absl::StrCat(
            "inserting shares ", ToAbsl(rows[i].path), " to ",
            ToAbsl(rows[i + kShareRowsPerInsert - 1].path)));
      }
      for (std::size_t k = 0; k < kShareRowsPerInsert; ++k) {
        if (absl::Status s = InsertShare(rows[i + k]); !s.ok()) return s;
      }
    }
  }
  for (; i < rows.size(); ++i) {
    if (absl::Status s = InsertShare(rows[i]); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status Store::OneShareRow(uint64_t id, std::string_view path,
                               absl::Status ran) {
  if (!ran.ok() || sqlite3_changes(db_) == 1) return ran;
  // The caller's table and the store disagree: nothing of the batch may be
  // committed (the caller rolls back).
  return absl::DataLossError(absl::StrCat(path_, ": share ", ToAbsl(path),
                                          " (row ", id,
                                          ") is not in the store"));
}

absl::Status Store::DeleteShare(uint64_t id, std::string_view path) {
  absl::StatusOr<sqlite3_stmt*> st = Prepared(kDeleteShare);
  if (!st.ok()) return st.status();
  sqlite3_bind_int64(*st, 1, static_cast<sqlite3_int64>(id));
  return OneShareRow(id, path,
                     Run(*st, absl::StrCat("deleting share ", ToAbsl(path))));
}

absl::Status Store::MoveShare(uint64_t id, std::string_view path,
                              std::string_view group) {
  absl::StatusOr<sqlite3_stmt*> st = Prepared(kMoveShare);
  if (!st.ok()) return st.status();
  sqlite3_bind_int64(*st, 1, static_cast<sqlite3_int64>(id));
  BindText(*st, 2, group);
  return OneShareRow(id, path,
                     Run(*st, absl::StrCat("moving share ", ToAbsl(path))));
}

absl::Status Store::SetShareOptions(uint64_t id, std::string_view path,
                                    std::string_view options) {
  absl::StatusOr<sqlite3_stmt*> st = Prepared(kSetShareOptions);
  if (!st.ok()) return st.status();
  sqlite3_bind_int64(*st, 1, static_cast<sqlite3_int64>(id));
  BindText(*st, 2, options);
  return OneShareRow(id, path,
                     Run(*st, absl::StrCat("updating share ", ToAbsl(path))));
}

absl::Status Store::SetShareText(uint64_t id, std::string_view path,
                                 std::string_view description,
                                 std::string_view resource) {
  absl::StatusOr<sqlite3_stmt*> st = Prepared(kSetShareText);
  if (!st.ok()) return st.status();
  sqlite3_bind_int64(*st, 1, static_cast<sqlite3_int64>(id));
  BindText(*st, 2, description);
  BindText(*st, 3, resource);
  return OneShareRow(id, path,
                     Run(*st, absl::StrCat("updating share ", ToAbsl(path))));
}

absl::Status Store::RecordMounts(const std::vector<MountRecord>& added,
                                 const std::vector<MountRecord>& removed) {
  if (added.empty() && removed.empty()) return absl::OkStatus();
  if (absl::Status s = Begin(); !s.ok()) return s;
  absl::Status status = RecordMountsInTransaction(added, removed);
  if (status.ok()) status = Commit();
  if (!status.ok()) Rollback();
  return status;
}

absl::Status Store::RecordMountsInTransaction(
    const std::vector<MountRecord>& added,
    const std::vector<MountRecord>& removed) {
  if (!removed.empty()) {
    absl::StatusOr<sqlite3_stmt*> st = Prepared(kDeleteMount);
    if (!st.ok()) return st.status();
    for (const MountRecord& m : removed) {
      BindText(*st, 1, m.client);
      BindText(*st, 2, m.path);
      if (absl::Status s = Run(*st, "deleting mount record"); !s.ok()) {
        return s;
      }
    }
  }
  std::size_t i = 0;
  if (added.size() >= kMountRowsPerInsert) {
    absl::StatusOr<sqlite3_stmt*> st = Prepared(kInsertMounts);
    if (!st.ok()) return st.status();
    for (; i + kMountRowsPerInsert <= added.size(); i += kMountRowsPerInsert) {
      for (std::size_t k = 0; k < kMountRowsPerInsert; ++k) {
        BindText(*st, static_cast<int>(2 * k + 1), added[i + k].client);
        BindText(*st, static_cast<int>(2 * k + 2), added[i + k].path);
      }
      if (absl::Status s = Run(*st, "inserting mount records"); !s.ok()) {
        return s;
      }
    }
  }
  if (i < added.size()) {
    absl::StatusOr<sqlite3_stmt*> st = Prepared(kInsertMount);
    if (!st.ok()) return st.status();
    for (; i < added.size(); ++i) {
      BindText(*st, 1, added[i].client);
      BindText(*st, 2, added[i].path);
      if (absl::Status s = Run(*st, "inserting mount record"); !s.ok()) {
        return s;
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<MountRecord>> Store::LoadMounts() {
  absl::StatusOr<sqlite3_stmt*> st = Prepared(kSelectMounts);
  if (!st.ok()) return st.status();
  std::vector<MountRecord> out;
  int rc;
  while ((rc = sqlite3_step(*st)) == SQLITE_ROW) {
    out.push_back({ColumnText(*st, 0), ColumnText(*st, 1)});
  }
  sqlite3_reset(*st);
  if (rc != SQLITE_DONE) return Error("reading mount records");
  return out;
}

absl::StatusOr<std::vector<FsPlaceRow>> Store::LoadFsPlaces() {
  absl::StatusOr<sqlite3_stmt*> st = Prepared(kSelectFsPlaces);
  if (!st.ok()) return st.status();
  std::vector<FsPlaceRow> out;
  int rc;
  while ((rc = sqlite3_step(*st)) == SQLITE_ROW) {
    FsPlaceRow r;
    r.id = static_cast<uint64_t>(sqlite3_column_int64(*st, 0));
    r.path = ColumnText(*st, 1);
    r.mount_point = ColumnText(*st, 2);
    r.fstype = ColumnText(*st, 3);
    r.source = ColumnText(*st, 4);
    out.push_back(std::move(r));
  }
  sqlite3_reset(*st);
  if (rc != SQLITE_DONE) return Error("reading recorded file systems");
  return out;
}

absl::Status Store::ScanFsPlaces(
    absl::FunctionRef<void(const FsPlaceRowView&)> fn) {
  absl::StatusOr<sqlite3_stmt*> st = Prepared(kSelectFsPlaces);
  if (!st.ok()) return st.status();
  int rc;
  while ((rc = sqlite3_step(*st)) == SQLITE_ROW) {
    FsPlaceRowView r;
    r.id = static_cast<uint64_t>(sqlite3_column_int64(*st, 0));
    r.path = ColumnView(*st, 1);
    r.mount_point = ColumnView(*st, 2);
    r.fstype = ColumnView(*st, 3);
    r.source = ColumnView(*st, 4);
    fn(r);
  }
  sqlite3_reset(*st);
  if (rc != SQLITE_DONE) return Error("reading recorded file systems");
  return absl::OkStatus();
}

absl::Status Store::RecordFsPlaces(
    std::size_t count, absl::FunctionRef<FsPlaceRowView(std::size_t)> row) {
  if (count == 0) return absl::OkStatus();
  if (absl::Status s = Begin(); !s.ok()) return s;
  for (std::size_t i = 0; i < count; ++i) {
    const FsPlaceRowView p = row(i);
    absl::StatusOr<sqlite3_stmt*> st = Prepared(kSetFsPlace);
    absl::Status s = st.status();
    if (s.ok()) {
      sqlite3_bind_int64(*st, 1, static_cast<sqlite3_int64>(p.id));
      BindText(*st, 2, p.mount_point);
      BindText(*st, 3, p.fstype);
      BindText(*st, 4, p.source);
      s = Run(*st, absl::StrCat("recording the file system of share ", p.id));
    }
    if (!s.ok()) {
      Rollback();
      return s;
    }
  }
  if (absl::Status s = Commit(); !s.ok()) {
    Rollback();
    return s;
  }
  return absl::OkStatus();
}

}  // namespace libshare
