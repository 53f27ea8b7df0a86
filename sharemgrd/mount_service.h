// MountService: the MOUNT program (100005, versions 1 and 3) over the
// Catalog and the AuthCache, with its mount records and EXPORT cache.
//
// Thread-safe: Call() runs on many server threads at once. Mount records
// are kept in memory and written to the store behind the calls (one
// transaction once the calls pause, at least about every second while
// they do not, and at Stop()), so a MNT is not one fsync.
#ifndef SHAREMGRD_MOUNT_SERVICE_H_
#define SHAREMGRD_MOUNT_SERVICE_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/btree_map.h"
#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/node_hash_map.h"
#include "absl/hash/hash.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "authcache/auth_cache.h"
#include "libshare/catalog.h"
#include "libshare/options.h"
#include "log.h"
#include "mount_prot.h"
#include "request_stats.h"
#include "rpc_server.h"
#include "share_access.h"

namespace sharemgrd {

struct IpAddressHash {
  std::size_t operator()(const libshare::IpAddress& a) const {
    return absl::HashOf(a.bytes);
  }
};

// The group names EXPORT shows for a share: the entries of its rw= and ro=
// lists (deny entries left out), in option order without duplicates; empty
// (everyone) if any scope grants to every client.
std::vector<std::string> ExportGroups(const libshare::ShareOptions& opts);

// Builds the XDR body of an EXPORT reply (the `exports` list) in one
// string.
class ExportListEncoder {
 public:
  void Add(std::string_view dir, const std::vector<std::string>& groups);
  // The encoded list; the encoder is then empty.
  std::string Finish();

 private:
  std::string out_;
};

// MNT's own file handle for a directory (when not in kernel mode), stable
// across restarts: "SMGR", a format version, the device and inode numbers,
// padded with zeros to 32 bytes (the version 1 size; version 3 sends the
// same 32 bytes). MNT takes the numbers from the descriptor its walk ended
// on, never re-resolving a name.
std::string FileHandleFor(uint64_t dev, uint64_t ino);

// One mount record as listed by `sharectl mounts`.
struct MountListing {
  libshare::IpAddress client;
  std::string path;
  // When this daemon recorded the MNT (Unix seconds); 0 for a record
  // loaded from the store at start (the store keeps no time).
  int64_t since = 0;
};

// The client addresses and paths mounted, in memory, with the changes not
// yet written to the store. Records are bounded: a client with
// max_per_client records, or a table with max_total, keeps no new record
// (the MNT itself is still answered; only DUMP does not list it).
//
// Sharded by client address (kShards shards, each with its own lock), so
// that MNTs of different clients do not wait for one another: a thread
// that holds a shard's lock and is preempted, or waits for the allocator,
// holds up only the clients of that shard. Every record of a client is in
// one shard. Path texts are held once for the whole table, in a table of
// their own sharded by path; a repeated MNT does not touch it (records are
// found by client and path text), a new record takes its path's lock
// (after its client shard's: always in that order) to take a reference.
//
// Memory: a record is a 16-byte address, a pointer to its path (each path
// text kept once, however many clients mount it) and a time, in a B-tree
// ordered by address: about 50 bytes, not two strings.
class MountTable {
 public:
  static constexpr std::size_t kDefaultMaxTotal = 100000;
  static constexpr std::size_t kDefaultMaxPerClient = 1000;
  static constexpr std::size_t kShards = 16;
  explicit MountTable(std::size_t max_total = kDefaultMaxTotal,
                      std::size_t max_per_client = kDefaultMaxPerClient)
      : max_total_(max_total), max_per_client_(max_per_client) {}

  // Returns false if the record was already there or is over a limit
  // (nothing to write). `since` is the time of the MNT (Unix seconds).
  bool Add(const libshare::IpAddress& client, absl::string_view path,
           int64_t since);
  bool Remove(const libshare::IpAddress& client, absl::string_view path);
  // Removes every record of `client`; returns how many.
  std::size_t RemoveClient(const libshare::IpAddress& client);
  // The same with the client as address text (false/0 if it is not one).
  bool Add(const libshare::MountRecord& r);
  bool Remove(const libshare::MountRecord& r);
  std::size_t RemoveClient(const std::string& client);
  // Records kept in the store; one whose client is not an address is
  // skipped.
  void Load(const std::vector<libshare::MountRecord>& records);
  // Every record, by client address (as text) and path.
  std::vector<libshare::MountRecord> All() const;
  // Every record with its time, ordered by client address, then path.
  std::vector<MountListing> List() const;
  std::size_t size() const { return total_.load(std::memory_order_relaxed); }
  // Distinct path texts held (each once).
  std::size_t path_count() const;
  // Takes the changes since the last call: (added, removed).
  std::pair<std::vector<libshare::MountRecord>,
            std::vector<libshare::MountRecord>>
  TakeChanges();
  // Puts back changes that could not be written (to be retried).
  void Restore(std::vector<libshare::MountRecord> added,
               std::vector<libshare::MountRecord> removed);
  bool has_changes() const;
  // Changes logged in each shard since start (MNTs that made a record,
  // UMNTs that removed one): the flusher writes once their sum stops
  // moving (a storm pauses), or before a shard's log grows long enough to
  // be folded under its lock.
  std::array<uint64_t, kShards> LoggedPerShard() const;
  // A shard's log is folded under its lock from this many changes: 262,144
  // over the table (8 MiB of log; with the spare buffer each shard keeps,
  // up to 16 MiB stays allocated after a storm that big), four times what
  // the table folded at when its records were written every 50 ms, so that
  // the flusher, which writes at half of it in a storm that does not
  // pause, is not outrun.
  static constexpr std::size_t kFoldAt = (1u << 18) / kShards;
  // Records not kept because a limit was reached, since start.
  uint64_t dropped() const {
    return dropped_.load(std::memory_order_relaxed);
  }
  std::size_t max_total() const { return max_total_; }
  std::size_t max_per_client() const { return max_per_client_; }

 private:
  // A held path text and its references: one per record and one per
  // pending change using it. Node-based, so the pointer a Key keeps stays
  // valid, and a reference is let go without looking the text up again.
  using PathEntry = std::pair<const std::string, uint32_t>;
  // A record's key. Two keys of one path share its held entry, so equal
  // keys have equal pointers.
  struct Key {
    libshare::IpAddress client;
    PathEntry* path;
    friend bool operator==(const Key& a, const Key& b) {
      return a.client == b.client && a.path == b.path;
    }
  };
  // A key to look for, with the path as text (not held).
  struct Probe {
    const libshare::IpAddress& client;
    absl::string_view path;
  };
  // By client address, then path text; Probes compare with Keys, so a
  // record is found without looking its path up.
  struct KeyLess {
    using is_transparent = void;
    static bool Less(const libshare::IpAddress& a, absl::string_view pa,
                     const libshare::IpAddress& b, absl::string_view pb) {
      if (a.bytes != b.bytes) return a.bytes < b.bytes;
      return pa < pb;
    }
    bool operator()(const Key& a, const Key& b) const {
      return Less(a.client, a.path->first, b.client, b.path->first);
    }
    bool operator()(const Key& a, const Probe& b) const {
      return Less(a.client, a.path->first, b.client, b.path);
    }
    bool operator()(const Probe& a, const Key& b) const {
      return Less(a.client, a.path, b.client, b.path->first);
    }
  };
  // One change not yet written: the record `key` now present or not.
  struct Change {
    Key key;
    bool present;
  };
  // Sorts by key, a key's changes kept in the order they were logged.
  static void SortByKey(std::vector<Change>* log);
  // In a log sorted by key: whether change i is replaced by a later one.
  static bool Replaced(const std::vector<Change>& sorted, std::size_t i);

  // The held path texts whose hash picks it.
  struct alignas(64) PathShard {
    absl::Mutex mu;
    absl::node_hash_map<std::string, uint32_t> paths ABSL_GUARDED_BY(mu);
  };
  PathShard& PathShardOf(absl::string_view path) const;
  // The held entry of `path` (held from now on), with `refs` more
  // references.
  PathEntry* RefPath(absl::string_view path, uint32_t refs);
  void UnrefPath(PathEntry* path);

  // The records of the clients whose address hashes to it, and their
  // changes not yet taken.
  struct alignas(64) Shard {
    // Appends a change, whose path reference the caller has taken, to log.
    void Log(MountTable* table, const Key& k, bool present)
        ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
    // Folds the log once it reaches fold_at.
    void FoldIfLong(MountTable* table) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
    // Keeps only the last change of each key, letting go of the others'
    // references; sorts by key.
    void FoldLocked(MountTable* table, std::vector<Change>* changes)
        ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);

    mutable absl::Mutex mu;
    absl::btree_map<Key, int64_t, KeyLess> records ABSL_GUARDED_BY(mu);
    absl::flat_hash_map<libshare::IpAddress, uint32_t, IpAddressHash>
        per_client ABSL_GUARDED_BY(mu);
    // The changes since the last TakeChanges, in call order (a later
    // change of a key wins): an MNT appends one, where a map of pending
    // keys cost a B-tree insert under the lock. Folded by the flusher, off
    // the lock; and under it when it reaches fold_at (a store that keeps
    // failing, a client mounting and unmounting in a loop), so that it
    // holds at most kFoldAt changes or twice the distinct keys changed
    // (a map held each once).
    std::vector<Change> log ABSL_GUARDED_BY(mu);
    std::size_t fold_at ABSL_GUARDED_BY(mu) = kFoldAt;
    // The buffer the last TakeChanges emptied, given back to log at the
    // next: in a steady stream of changes, logging one allocates nothing.
    std::vector<Change> spare ABSL_GUARDED_BY(mu);
    // Changes logged in this shard since start; written under mu, read
    // without it (LoggedPerShard).
    std::atomic<uint64_t> logged{0};
  };

  static std::size_t ShardIndex(const libshare::IpAddress& client);
  Shard& ShardOf(const libshare::IpAddress& client) const;
  // Counts a record not kept and logs why.
  void Dropped(const libshare::IpAddress& client, absl::string_view path,
               bool table_full);

  const std::size_t max_total_;
  const std::size_t max_per_client_;
  // Records in all shards: Add reserves its place here before it inserts,
  // so the table never holds more than max_total_.
  std::atomic<std::size_t> total_{0};
  std::atomic<uint64_t> dropped_{0};
  LogRateLimiter dropped_log_{"mount-record-limit", 1};
  mutable std::array<Shard, kShards> shards_;
  mutable std::array<PathShard, kShards> path_shards_;
};

class MountService final : public RpcProgram {
 public:
  static constexpr int kRefusedMountLogsPerSecond = 20;

  MountService(libshare::Catalog* catalog, authcache::AuthCache* cache,
               bool insecure);
  ~MountService() override;

  // Where MNT takes its file handles from, when not its own stable ones
  // (FileHandleFor): in kernel mode, the kernel's (sharemgrd/kernel).
  // Called after a granted access decision with the client, that
  // decision (the share, the normalized path and the directory the walk
  // ended on: the source trusts it and decides nothing again) and the
  // size the MOUNT version allows (64 for v3, 32 for v1). An error
  // refuses the mount (PermissionDenied: ACCES, else IO).
  using HandleSource = std::function<absl::StatusOr<std::string>(
      const libshare::IpAddress& client, const AccessResult& decided,
      int max_size)>;
  // Set before serving.
  void SetHandleSource(HandleSource source) {
    handle_source_ = std::move(source);
  }
  // Shares not served (fs_watch.h) are refused by MNT and left out of
  // EXPORT. Set before serving; null: every share is served.
  void SetServedShares(const FsWatch* served) { served_ = served; }
  // MNT is answered from any source port (sharemgrd --insecure).
  bool insecure() const { return insecure_; }

  // Loads the records kept in the store and starts the write-behind.
  [[nodiscard]] absl::Status Start();
  // Writes pending records and stops the write-behind.
  void Stop();

  uint32_t program() const override { return kMountProgram; }
  uint32_t low_version() const override { return kMountV1; }
  uint32_t high_version() const override { return kMountV3; }
  accept_stat Call(const CallContext& ctx, XDR* args,
                   std::string* out) override;

  std::size_t mount_count() const { return mounts_.size(); }
  // Every mount record with its time (`sharectl mounts`).
  std::vector<MountListing> ListMounts() const { return mounts_.List(); }
  uint64_t mounts_dropped() const { return mounts_.dropped(); }
  std::size_t mount_limit() const { return mounts_.max_total(); }
  std::size_t mount_client_limit() const { return mounts_.max_per_client(); }
  // A DUMP reply lists records up to this many bytes (the rest are left
  // out), so that one small call cannot cost megabytes.
  static constexpr std::size_t kMaxDumpBytes = 1u << 20;
  std::vector<ProcedureStats> stats() const { return stats_.Snapshot(); }

 private:
  MountStat Mnt(const CallContext& ctx, const libshare::IpAddress& client,
                const std::string& addr_text, const std::string& raw_path,
                bool v1, std::string* handle, std::vector<uint32_t>* flavors);
  std::shared_ptr<const std::string> ExportBody();
  void FlushLoop();
  void FlushOnce();

  libshare::Catalog* const catalog_;
  authcache::AuthCache* const cache_;
  const bool insecure_;
  HandleSource handle_source_;
  const FsWatch* served_ = nullptr;
  RequestStats stats_;
  MountTable mounts_;
  // A client repeating a refused MNT must not flood the log.
  LogRateLimiter refused_log_{"refused-mount", kRefusedMountLogsPerSecond};

  absl::Mutex export_mu_;
  uint64_t export_generation_ ABSL_GUARDED_BY(export_mu_) = ~uint64_t{0};
  uint64_t export_served_version_ ABSL_GUARDED_BY(export_mu_) = 0;
  std::shared_ptr<const std::string> export_body_ ABSL_GUARDED_BY(export_mu_);

  absl::Mutex flush_mu_;
  bool stopping_ ABSL_GUARDED_BY(flush_mu_) = false;
  std::thread flusher_;
};

}  // namespace sharemgrd

#endif  // SHAREMGRD_MOUNT_SERVICE_H_
