// Store: the SQLite file that persists groups, shares and mount records.
//
// Opened in WAL mode with synchronous=FULL and a busy timeout; the schema
// version lives in PRAGMA user_version and is brought up to date by a list
// of migrations when the store is opened. Statements are prepared once and
// reused.
//
// Thread-safety: a Store is one SQLite connection and is NOT thread-safe;
// use it from one thread at a time. Several Store objects (one per thread)
// may read the same file concurrently (WAL), as the loader does.
//
//   auto store = libshare::Store::Open("/var/lib/sharemgr/shares.db");
//   if (!store.ok()) ...
//   absl::Status s = (*store)->Begin();
//   s = (*store)->InsertGroup({.name = "homes"});
//   s = (*store)->Commit();  // on error: Rollback()
#ifndef LIBSHARE_STORE_H_
#define LIBSHARE_STORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "libshare/catalog.h"
#include "libshare/table_writer.h"

struct sqlite3;
struct sqlite3_stmt;

namespace libshare {

// A share row as ScanAllShares hands it: the fields of ShareRow, texts
// borrowed.
struct ShareRowView {
  uint64_t id = 0;
  std::string_view path;
  std::string_view group;
  std::string_view resource;
  std::string_view description;
  std::string_view options;
  uint64_t dev = 0;
  bool replaces_group = false;
  std::string_view fs_identity;  // libshare/fs_identity.h; "" = none
};

struct ShareRow {
  uint64_t id = 0;
  std::string path;
  std::string group;
  std::string resource;
  std::string description;
  std::string options;
  uint64_t dev = 0;
  // Own options from before per-property inheritance (schema 1): they
  // replace the group's whole. Read only; InsertShare writes false and
  // SetShareOptions clears it.
  bool replaces_group = false;
  std::string fs_identity;  // libshare/fs_identity.h; "" = none recorded
  bool operator==(const ShareRow& o) const {
    return id == o.id && path == o.path && group == o.group &&
           resource == o.resource && description == o.description &&
           options == o.options && dev == o.dev &&
           replaces_group == o.replaces_group && fs_identity == o.fs_identity;
  }
};

// The file system a share was found on when it was recorded (at add, or
// at the first start for shares stored before schema 2): the mount point,
// type and source of the mount containing its path, from
// /proc/self/mountinfo. st_dev alone cannot recognise a file system again
// after a remount or reboot (ZFS and tmpfs get a new one), these can.
struct FsPlaceRow {
  uint64_t id = 0;   // the share's id
  std::string path;  // the share's path (read only; not written)
  std::string mount_point;
  std::string fstype;
  std::string source;
  bool operator==(const FsPlaceRow& o) const {
    return id == o.id && mount_point == o.mount_point && fstype == o.fstype &&
           source == o.source;
  }
};

class Store final : public TableWriter {
 public:
  // The schema version this program writes.
  static constexpr int kSchemaVersion = 6;
  static constexpr int kDefaultBusyTimeoutMs = 5000;

  // Opens the store for reading and writing, creating its folder (0755)
  // and file if needed, and migrates the schema. Fails if the file is not
  // a SQLite database, cannot be written (permissions, an immutable
  // file), or its schema is newer than kSchemaVersion.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<Store>> Open(
      const std::string& path, int busy_timeout_ms = kDefaultBusyTimeoutMs);
  // Opens an existing, already migrated store read-only (loader threads).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<Store>> OpenReadOnly(
      const std::string& path, int busy_timeout_ms = kDefaultBusyTimeoutMs);

  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  const std::string& path() const { return path_; }
  // PRAGMA user_version, read from the file.
  [[nodiscard]] absl::StatusOr<int> SchemaVersion();

  // ---- Reads.
  [[nodiscard]] absl::StatusOr<std::vector<GroupRow>> LoadGroups();
  // Shares of one group, by id (a scan of the table: no index by group).
  [[nodiscard]] absl::StatusOr<std::vector<ShareRow>> LoadShares(
      std::string_view group);
  // Every share, in id order (one sequential scan).
  [[nodiscard]] absl::StatusOr<std::vector<ShareRow>> LoadAllShares();
  // The same rows, handed one at a time without copying them: the texts
  // are views into SQLite's row, valid only during the call. A non-OK
  // status from `fn` stops the scan and is returned. For the loader: a
  // million rows then need no vector of their own.
  [[nodiscard]] absl::Status ScanAllShares(
      absl::FunctionRef<absl::Status(const ShareRowView&)> fn);
  // Gives back the page cache's unused memory (after the loader's scan,
  // which fills it with pages nobody reads again soon).
  void ReleaseMemory();
  [[nodiscard]] absl::StatusOr<uint64_t> CountShares();
  // Bytes of the file's pages in use (not on SQLite's free list: a store
  // does not shrink when rows go). Three pragmas, no scan.
  [[nodiscard]] absl::StatusOr<uint64_t> UsedBytes();
  // The largest share id in use, 0 if none.
  [[nodiscard]] absl::StatusOr<uint64_t> MaxShareId();
  // The table generation of the last committed batch (SaveGeneration), 0
  // in a store that never had one: generations grow across restarts.
  [[nodiscard]] absl::StatusOr<uint64_t> LoadGeneration();

  // ---- Writes: inside Begin() ... Commit() (or Rollback()).
  // BEGIN IMMEDIATE: takes the write lock now (waits up to the busy
  // timeout for another writer). Refused (FailedPrecondition) if the
  // store's file or its WAL is no longer the one opened.
  [[nodiscard]] absl::Status Begin();
  [[nodiscard]] absl::Status Commit();
  // Safe to call after a failed Commit or with no transaction open.
  void Rollback();

  [[nodiscard]] absl::Status InsertGroup(const GroupRow& g) override;
  // Deletes the group and every share in it. Finding its shares scans the
  // table (no index by group); `has_shares` false (the caller knows the
  // group is empty) skips that scan.
  [[nodiscard]] absl::Status DeleteGroup(std::string_view name,
                                         bool has_shares = true) override;
  [[nodiscard]] absl::Status SetGroupEnabled(std::string_view name,
                                             bool enabled) override;
  [[nodiscard]] absl::Status SetGroupOptions(std::string_view name,
                                             std::string_view options) override;
  // Marks the group as managed by `file` ("" clears the mark). InsertGroup
  // never sets it.
  [[nodiscard]] absl::Status SetGroupManager(std::string_view name,
                                             std::string_view file) override;
  [[nodiscard]] absl::Status InsertShare(const ShareRow& s);
  // The same row from views (no ShareRow to build: a batch's adds).
  using ShareFields = ::libshare::ShareFields;
  [[nodiscard]] absl::Status InsertShare(const ShareFields& s);
  // The rows in order, 32 per statement (about half SQLite's time per row
  // of one statement each). Stops at the first failure, whose message
  // names the share; the rows inserted before it stay in the transaction.
  [[nodiscard]] absl::Status InsertShares(
      absl::Span<const ShareFields> rows) override;
  // A share's row is named by its id (`path` only names it in an error):
  // the store keeps no index by path (schema 5), the caller's table does.
  // Each fails (DataLoss) unless it changed exactly one row.
  [[nodiscard]] absl::Status DeleteShare(uint64_t id,
                                         std::string_view path) override;
  [[nodiscard]] absl::Status MoveShare(uint64_t id, std::string_view path,
                                       std::string_view group) override;
  // Also ends replaces_group: options written now inherit per property.
  [[nodiscard]] absl::Status SetShareOptions(uint64_t id,
                                             std::string_view path,
                                             std::string_view options) override;
  [[nodiscard]] absl::Status SetShareText(uint64_t id, std::string_view path,
                                          std::string_view description,
                                          std::string_view resource) override;
  // A text kept beside the schema ("" if never saved): the cluster a
  // head's copy belongs to (cluster_engine.h). SaveMeta writes in the
  // transaction open, or in one of its own.
  [[nodiscard]] absl::StatusOr<std::string> LoadMeta(std::string_view key);
  [[nodiscard]] absl::Status SaveMeta(std::string_view key,
                                      std::string_view value);
  // Records the generation a batch gives the table, in its transaction.
  [[nodiscard]] absl::Status SaveGeneration(uint64_t generation);

  // ---- Checkpoints.
  // SQLite copies the WAL back into the database file (a checkpoint) inside
  // the commit that leaves the WAL at 1,000 pages or more, and that commit
  // waits for the copy and a sync of the file: about 100 ms after a
  // 1,000,000-add batch, or a single change's reply held up when its
  // commit is the one that crosses the mark. From this call on, this
  // connection's commits leave it: a thread of its own ("sm-checkpoint"),
  // with a connection of its own, checkpoints after a commit that left
  // `wal_pages` or more, never waiting for readers or writers (PASSIVE:
  // what a reader still uses is copied after a later commit). Should the
  // thread fall behind while the WAL passes twice `wal_pages` (commits
  // landing during its checkpoints), the commit checkpoints itself, as
  // before, so that the WAL cannot grow for as long as writes come. Other
  // connections keep SQLite's automatic checkpoint. `before_each`, if
  // given, runs on that thread before each checkpoint (tests). The
  // destructor stops the thread. Fails, changing nothing (the automatic
  // checkpoint stays), if the thread or its connection cannot be made.
  static constexpr int kCheckpointPages = 1000;
  [[nodiscard]] absl::Status CheckpointInBackground(
      int wal_pages = kCheckpointPages,
      std::function<void()> before_each = nullptr);

  // ---- Mount records, each call one transaction of its own.
  [[nodiscard]] absl::Status RecordMounts(
      const std::vector<MountRecord>& added,
      const std::vector<MountRecord>& removed);
  [[nodiscard]] absl::StatusOr<std::vector<MountRecord>> LoadMounts();

  // ---- Recorded file systems of shares (sharemgrd's served-state probe).
  // The recorded place of every share that has one, in id order.
  [[nodiscard]] absl::StatusOr<std::vector<FsPlaceRow>> LoadFsPlaces();
  // The same rows one at a time, texts borrowed from SQLite's row (valid
  // during the call only): mount_point, fstype and source repeat for most
  // shares, so a caller that keeps them once saves a copy per share.
  using FsPlaceRowView = ::libshare::FsPlaceRowView;
  [[nodiscard]] absl::Status ScanFsPlaces(
      absl::FunctionRef<void(const FsPlaceRowView&)> fn);
  // Records `count` places in one transaction of its own, each made by
  // `row(i)` as it is written (its texts need last only until the next
  // call; path is not read): a caller whose rows share a few places need
  // not copy them per share. Rows of shares removed meanwhile are skipped
  // (not an error).
  [[nodiscard]] absl::Status RecordFsPlaces(
      std::size_t count, absl::FunctionRef<FsPlaceRowView(std::size_t)> row);

 private:
  enum Stmt {
    kBegin,
    kCommit,
    kRollback,
    kSelectGroups,
    kSelectShares,
    kSelectAllShares,
    kCountShares,
    kMaxShareId,
    kInsertGroup,
    kDeleteGroupShares,
    kDeleteGroup,
    kSetGroupEnabled,
    kSetGroupOptions,
    kInsertShare,
    kInsertShares,  // kShareRowsPerInsert rows (store.cc)
    kDeleteShare,
    kMoveShare,
    kSetShareOptions,
    kSetShareText,
    kInsertMount,
    kInsertMounts,  // kMountRowsPerInsert rows (store.cc)
    kDeleteMount,
    kSelectMounts,
    kSetManager,
    kDeleteManager,
    kSelectFsPlaces,
    kSetFsPlace,
    kSelectGeneration,
    kSaveGeneration,
    kStmtCount
  };

  class Checkpointer;

  Store(sqlite3* db, std::string path);
  [[nodiscard]] absl::Status Configure(int busy_timeout_ms, bool writable);
  [[nodiscard]] absl::Status Migrate();
  [[nodiscard]] absl::Status Exec(const char* sql);
  // The prepared statement `s`, reset and unbound.
  [[nodiscard]] absl::StatusOr<sqlite3_stmt*> Prepared(Stmt s);
  [[nodiscard]] absl::StatusOr<std::vector<ShareRow>> ReadShares(
      sqlite3_stmt* st, std::string_view what);
  // Steps a statement that returns no rows.
  [[nodiscard]] absl::Status Run(sqlite3_stmt* st, std::string_view what);
  // `ran` (a by-id statement's result), or an error if it changed no row.
  [[nodiscard]] absl::Status OneShareRow(uint64_t id, std::string_view path,
                                         absl::Status ran);
  [[nodiscard]] absl::Status RecordMountsInTransaction(
      const std::vector<MountRecord>& added,
      const std::vector<MountRecord>& removed);
  absl::Status Error(std::string_view what) const;
  // The one value a PRAGMA such as "PRAGMA page_count" returns; Error(what)
  // when it cannot be read.
  [[nodiscard]] absl::StatusOr<int64_t> IntPragma(const char* pragma,
                                                  std::string_view what);

  // The files this connection writes, as opened: a store removed or
  // replaced while the daemon runs (rm, a restore from backup) would take
  // every later commit into an unlinked file, lost at the next start.
  // Begin() refuses to write then.
  struct FileId {
    bool known = false;
    uint64_t dev = 0;
    uint64_t ino = 0;
  };
  static FileId IdOf(const std::string& path);
  void RememberFiles();
  [[nodiscard]] absl::Status CheckFilesUnchanged() const;

  sqlite3* db_;
  std::string path_;
  FileId db_file_, wal_file_;
  sqlite3_stmt* stmts_[kStmtCount] = {};
  std::unique_ptr<Checkpointer> checkpointer_;  // CheckpointInBackground
};

}  // namespace libshare

#endif  // LIBSHARE_STORE_H_
