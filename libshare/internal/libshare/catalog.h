// Catalog: the authoritative share table of a server, i.e. the SQLite store
// together with the in-memory ShareTable loaded from it.
//
// Thread-safety: all methods may be called concurrently. Apply() calls are
// serialized; readers never wait for a commit to disk, only (briefly) for
// the in-memory swap at its end, and always see the table as it was before
// a batch or after it, never a part.
//
//   auto catalog = libshare::Catalog::Open({.db_path = "/var/lib/sharemgr/shares.db"});
//   libshare::Batch b;
//   b.ops.push_back({.type = libshare::Operation::Type::kCreateGroup, .group = "homes"});
//   libshare::BatchResult r = (*catalog)->Apply(b);
#ifndef LIBSHARE_CATALOG_H_
#define LIBSHARE_CATALOG_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "libshare/batch.h"
#include "libshare/cluster_engine.h"
#include "libshare/options.h"
#include "libshare/records.h"
#include "libshare/sharetab.h"
#include "libshare/sharetab_lines.h"

namespace libshare {

// What sharemgrd's file-system probe needs of a share (ListLocations).
struct ShareLocation {
  uint64_t id = 0;
  uint64_t dev = 0;  // as ShareInfo::dev
  std::string path;
  bool mount_root = true;   // as ShareInfo::mount_root
  bool mountpoint = false;  // its effective options hold "mountpoint"
};

// What a MOUNT request needs to know about the share that covers a path.
struct ShareMatch {
  uint64_t id = 0;
  uint64_t generation = 0;
  std::string path;  // the share's path (the request's path or an ancestor)
  std::shared_ptr<const ShareOptions> options;  // effective, compiled
  bool exact = false;  // the request named the share's own path
  uint64_t dev = 0;    // as ShareInfo::dev
  bool mount_root = true;  // as ShareInfo::mount_root
  // The share's recorded file-system identity (ShareInfo::fs_identity).
  std::optional<std::array<uint8_t, 16>> fs_uuid;
};

struct MountRecord {
  std::string client;  // address text as the daemon saw it
  std::string path;    // path the client mounted
  bool operator==(const MountRecord& o) const {
    return client == o.client && path == o.path;
  }
};

struct LoadStats {
  double load_ms = 0;
  int threads = 0;
  std::size_t shares = 0;
  std::size_t groups = 0;
  // Rows loaded although a rule added since they were written refuses them
  // (share_nfs limits, a resource name used twice, a second public share),
  // and shares whose own options still replace their group's: one line
  // each, for the daemon's log.
  std::vector<std::string> warnings;
};

// One share's recorded file system, texts borrowed for the length of a
// call: mount_point, fstype and source repeat for most shares, so a caller
// that keeps them once saves a copy per share.
struct FsPlaceRowView {
  uint64_t id = 0;
  std::string_view path;  // the share's path (read only; never written)
  std::string_view mount_point;
  std::string_view fstype;
  std::string_view source;
};

// The file system each share was found on, as sharemgrd's file-system
// watch records it (sharemgrd/access/fs_watch.h), kept in the store beside the
// shares. The Catalog owns it and so stays the store's only writer; it
// reads and writes on a store connection of its own, so that the scan at
// start runs beside the load and a round's write does not wait for a
// batch's validation (the store still takes one writer at a time).
// Thread-safe.
class FsPlaceRecords {
 public:
  virtual ~FsPlaceRecords() = default;
  // The highest share id the store ever gave (ids only grow).
  [[nodiscard]] virtual absl::StatusOr<uint64_t> MaxShareId() = 0;
  // Bytes the store's file takes.
  [[nodiscard]] virtual absl::StatusOr<uint64_t> UsedBytes() = 0;
  // Every share's recorded place, in id order, one row per call of `fn`.
  [[nodiscard]] virtual absl::Status Scan(
      absl::FunctionRef<void(const FsPlaceRowView&)> fn) = 0;
  // Records `count` places in one transaction, each made by `row(i)` as it
  // is written (its texts need last only until the next call); rows of
  // shares removed meanwhile are skipped.
  [[nodiscard]] virtual absl::Status Record(
      std::size_t count,
      absl::FunctionRef<FsPlaceRowView(std::size_t)> row) = 0;
  // Gives back the memory a scan's pages took.
  virtual void ReleaseMemory() = 0;
};

class Catalog {
 public:
  struct Config {
    std::string db_path;
    int load_threads = 1;  // groups are loaded this many at a time
    // How long a commit waits for another writer of the same file before
    // failing (BatchResult::commit_error).
    int busy_timeout_ms = 5000;
    // Walks over the whole table (ListLocations, SharetabEntries) hold it
    // for at most this many shares at a time (at least 1).
    std::size_t read_slice = 1024;
    // For tests: runs on the walking thread between two slices of such a
    // walk, with the table not held (a change made there is one made
    // between the slices).
    std::function<void()> between_slices = nullptr;
    // If set, run on a thread of its own while the table loads, once the
    // store is open and its schema current (a connection of its own may
    // read it then; nothing writes it until Open returns). Open returns
    // after it has returned, whether the load succeeded or not; what it
    // throws, Open throws then (what the load throws, if both do). Without
    // a thread (none could be started) it runs on the caller's, before the
    // load. The daemon reads its recorded file systems here, through the
    // catalog's FsPlaceRecords (the argument; the same as fs_places()): a
    // second scan of every row, on the core the load leaves idle.
    std::function<void(FsPlaceRecords*)> beside_load = nullptr;
    // The file-system identity an add-share records when its operation
    // gives none (fs_identity.h): the path and the device validation found
    // it on. The daemon gives rpc.mountd's uuid of the path (its kernel
    // mode's probe); nullopt records none. Called while a batch is
    // validated, once per device and batch for paths whose identity is
    // the device's (`per_device` true in the answer), else once per path.
    // Null: no identity is recorded (tests, programs without a kernel).
    struct FsIdentityAnswer {
      std::optional<std::array<uint8_t, 16>> uuid;
      bool per_device = true;
    };
    std::function<FsIdentityAnswer(const std::string& path, uint64_t dev)>
        identify = nullptr;

    // Cluster mode (sharemgrd --store postgresql://...): the table is the
    // engine's, shared with other heads; db_path is this head's copy of
    // it, served from when the engine is away. Null: the SQLite store at
    // db_path is the table (a single server). See catalog_cluster.cc.
    EngineConnector engine = nullptr;
    // The engine as messages and stats name it (no password).
    std::string engine_where{};
    // This head's name in the change log (the host name, by default).
    std::string head_name{};
    // How often a head looks at the engine's generation when no
    // notification came, and retries an engine it lost.
    int follow_interval_ms = 1000;
    // Runs once this head's table has a batch another head committed
    // (`result` as Apply would give it: its change list; `head`: the head
    // that committed it), or a full resynchronization (its batch: what
    // differed; `head` empty). On the thread that applied it, with the
    // catalog's writer lock held: it must not call Apply. Not called
    // before Open returns.
    std::function<void(const Batch&, BatchResult&, std::string_view head)>
        on_replicated = nullptr;
    // The catalog's own reports (resynchronizations, the engine lost and
    // found again), one line each.
    std::function<void(std::string_view)> log = nullptr;
  };

  // Opens (creating it and its folder if needed) the store at db_path,
  // migrates its schema, and loads every group with config.load_threads
  // threads. Fails if the store cannot be opened or is corrupt.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<Catalog>> Open(
      const Config& config);

  virtual ~Catalog() = default;

  // For a catalog destroyed as its process exits: the table's memory is
  // left to the exit (ShareTable::KeepMemoryAtExit). Everything else (the
  // store's connections, its threads) is closed as usual.
  virtual void KeepTableMemoryAtExit() {}

  // Validates every operation (in order, each seeing the effect of the ones
  // before it), reports every bad one with its index, and, if none is bad,
  // commits them in one transaction; only then does the in-memory table
  // change. On any error nothing changes, on disk or in memory.
  virtual BatchResult Apply(const Batch& batch) = 0;

  // Group commit: applies batches from independent callers as Apply would
  // apply them one after another, in order, but the accepted ones share
  // one transaction (one fsync). Each batch is validated against the table
  // as the accepted batches before it leave it; a refused batch gets its
  // own errors (indexed in its own operations), changes nothing and does
  // not affect the others. If the commit fails, every accepted batch gets
  // the commit error and nothing changes, on disk or in memory. Each batch
  // that changes something gets its own generation, in order, and its own
  // change list (whose `active` is as of the whole group). Dry runs, empty
  // batches, and batches of another manager than the one before them are
  // applied on their own, still in order. results[i] receives batch i's
  // result (results.size() == batches.size()).
  virtual void ApplyGroup(absl::Span<const Batch* const> batches,
                          absl::Span<BatchResult> results) = 0;

  // Store transactions committed by Apply and ApplyGroup since Open.
  virtual uint64_t commit_count() const = 0;

  // The active share (enabled group) whose path is `path` or its nearest
  // ancestor, or nullopt. O(path depth).
  virtual std::optional<ShareMatch> FindNearest(std::string_view path) const = 0;

  // Changes on every committed batch that changes anything.
  virtual uint64_t generation() const = 0;

  // Calls fn for every active share, in path order, under one consistent
  // view. fn must not call back into the Catalog.
  virtual void ForEachActive(
      const std::function<void(const ShareInfo&, const ShareOptions&)>& fn)
      const = 0;

  // All shares (or those of `groups`, if not empty), in path order.
  // Error if a named group does not exist.
  [[nodiscard]] virtual absl::StatusOr<std::vector<ShareInfo>> ListShares(
      const std::vector<std::string>& groups) const = 0;
  // Every share's location, in no particular order: what ListShares({})
  // gives without the texts, for a probe that stats every path without
  // holding the table (1,000,000 shares: one string each rather than
  // seven). Read Config::read_slice shares at a time: if shares are added
  // or removed meanwhile, each one in the table throughout is listed once,
  // and one added or removed meanwhile may be listed or not (a group added
  // or removed, or a share moved, makes it read the whole table at once).
  virtual std::vector<ShareLocation> ListLocations() const = 0;
  // The locations of the shares at `paths` that are in the table, in the
  // order of `paths` (a path with no share is left out): a probe of the
  // shares one batch changed, O(paths) whatever the table's size.
  virtual std::vector<ShareLocation> LocationsOf(
      const std::vector<std::string>& paths) const = 0;
  virtual std::vector<GroupInfo> ListGroups() const = 0;
  // The sharetab view of the active shares, in path order, each path once.
  // Read in slices, as ListLocations: a share added or removed meanwhile,
  // or whose group was enabled or disabled, may be in it or not.
  virtual std::vector<SharetabEntry> SharetabEntries() const = 0;
  // The same view as its text (sharetab_lines.h), sorted: what the
  // daemon's view file is written from, without an entry per share.
  virtual SharetabLines SharetabText() const = 0;

  virtual LoadStats load_stats() const = 0;
  virtual std::size_t share_count() const = 0;
  virtual std::size_t group_count() const = 0;

  // Mount records (MOUNT DUMP): added and removed in one transaction.
  [[nodiscard]] virtual absl::Status RecordMounts(
      const std::vector<MountRecord>& added,
      const std::vector<MountRecord>& removed) = 0;
  [[nodiscard]] virtual absl::StatusOr<std::vector<MountRecord>> LoadMounts()
      const = 0;

  // The shares' recorded file systems (see FsPlaceRecords), owned by the
  // catalog.
  virtual FsPlaceRecords* fs_places() = 0;

  // Where the table is kept and, in cluster mode, how far this head is
  // behind the engine and whether it reaches it.
  virtual StoreStatus store_status() const = 0;
};

}  // namespace libshare

#endif  // LIBSHARE_CATALOG_H_
