// The Catalog's implementation, private to libshare: CatalogImpl's state
// and the types its files share. Its methods live by reason to change:
// catalog.cc (open, load, lookups, mount records), catalog_validate.cc (the
// validation rules and the share_nfs rule indexes), catalog_commit.cc
// (apply runs, write-ahead pipelining, group commit, linking) and
// catalog_listings.cc (listings and the sliced walks).
//
// Concurrency: `mu_` is a reader/writer lock over the in-memory table.
// Readers (FindNearest, List*, ...) take it shared and copy out what they
// need (ShareMatch holds a shared_ptr to the compiled options, so it stays
// valid after the lock is released). Apply() is serialized by `apply_mu_`,
// the only writer of the table. It validates the batch against an overlay
// (the table plus the batch's own earlier effects; the table is never
// copied), builds every new Share/ShareGroup object and the grown bucket
// array, commits to SQLite, and only then takes `mu_` exclusively to link
// the prepared objects: readers wait at most for that short swap and see
// the table before the batch or after it, never a part. Objects the batch
// removes are freed after `mu_` is released.
//
// Group commit (ApplyGroup): the batches of a group are validated as the
// segments of one batch, each against the overlay as the ones before it
// leave it; a refused segment is dropped and the rest validated again
// without it (its effects are in the overlay), so refusals cost a pass
// each and the common case one. The accepted segments are written in one
// transaction, then linked one after another, each with its own
// generation and change list, in the same swap.
//
// A big batch alone (kWriteAheadOps operations or more) uses the second
// core twice: a DirectoryChecks thread checks its paths ahead of
// validation, and a writer thread writes each validated step into an open
// transaction while the next ones are validated; the commit waits for the
// whole batch to be valid, a refusal rolls the transaction back. Its
// transaction is then open during validation too, so a MOUNT record
// written meanwhile (its own connection) waits for the commit that much
// longer.
#ifndef LIBSHARE_SRC_CATALOG_IMPL_H_
#define LIBSHARE_SRC_CATALOG_IMPL_H_

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "libshare/batch.h"
#include "libshare/catalog.h"
#include "libshare/fs_identity.h"
#include "libshare/cluster_engine.h"
#include "libshare/options.h"
#include "libshare/share_table.h"
#include "libshare/sharetab.h"
#include "libshare/store.h"

namespace libshare {
namespace catalog_internal {

using Op = Operation::Type;

class Overlay;           // catalog_overlay.h
struct BatchValidation;  // catalog_validate.cc

// How far Validate has got with a batch whose steps a StepWriter writes
// meanwhile: steps [0, published) are final (valid, and never touched by
// Validate again); `finished` once Validate has returned.
class ValidationProgress {
 public:
  void Publish(std::size_t n) {
    published_.store(n);
    // Sequentially consistent with Wait's store of waiting_ before its own
    // loads: one of the two sees the other.
    if (waiting_.load() && n >= want_.load()) Wake();
  }
  void Finish() {
    finished_.store(true);
    Wake();
  }
  // Waits until more than `n` steps are published or Validate finished;
  // returns the number published.
  // Woken once a stretch of steps is there, not after every one (a
  // wake-up per step costs two context switches).
  std::size_t Wait(std::size_t n) {
    if (published_.load() <= n && !finished_.load()) {
      const std::size_t want = n + kWakeAhead;
      std::unique_lock<std::mutex> l(mu_);
      want_.store(want);
      waiting_.store(true);
      cv_.wait(l,
               [&] { return published_.load() >= want || finished_.load(); });
      waiting_.store(false);
    }
    return published_.load();
  }

 private:
  void Wake() {
    std::lock_guard<std::mutex> l(mu_);
    cv_.notify_one();
  }
  static constexpr std::size_t kWakeAhead = 64;
  std::atomic<std::size_t> published_{0};
  std::atomic<std::size_t> want_{0};  // what a waiting Wait waits for
  std::atomic<bool> finished_{false};
  std::atomic<bool> waiting_{false};
  std::mutex mu_;
  std::condition_variable cv_;
};

// The shares Link added or changed (with repeats), recorded within the
// capacity reserved before the commit: linking must not allocate. Past it
// (a reservation that missed a case) the list is marked incomplete.
struct TouchedShares {
  std::vector<const Share*> shares;
  bool overflow = false;
  void Note(const Share* s) {
    if (shares.size() < shares.capacity()) {
      shares.push_back(s);
    } else {
      overflow = true;
    }
  }
};

// What a step that changes options or text, or makes a group, carries to
// linking. Kept apart from Step, which every operation has: a batch is
// mostly adds, which carry none of it (15,000 adds spent 1.7 MiB on these
// empty fields; a Step is 40 bytes, 38 MiB at 1,000,000).
struct StepTexts {
  // The new own options (kSetOptions, kUnsetOption, kModifyShare with
  // set_options; kManageGroup: the exports file); compiled is null for a
  // share's "".
  std::shared_ptr<const ShareOptions> compiled;
  std::string text;
  // kModifyShare: the share's resource and description after it (null:
  // neither).
  std::unique_ptr<ShareTexts> share_texts;
  // kCreateGroup: the new group.
  std::unique_ptr<ShareGroup> group;
};

// One validated operation with everything it needs prepared, so that
// linking it into the table allocates (almost) nothing.
struct Step {
  const Operation* op = nullptr;
  std::unique_ptr<Share> share;  // kAddShare
  // Null unless validation filled it (Texts()); its address is stable, so
  // the overlay may view its text.
  std::unique_ptr<StepTexts> texts;
  // The store row of the share a share operation changes (remove, move,
  // options, modify): rows are written by id (store schema 5).
  uint64_t share_id = 0;
  bool noop = false;
  // kDeleteGroup: the group holds shares (the store's delete of them is a
  // scan of its table).
  bool group_has_shares = false;

  StepTexts& Texts() {
    if (texts == nullptr) texts = std::make_unique<StepTexts>();
    return *texts;
  }
};

// The effective options a share has once the batch is linked (computed
// for every share whose own options, group or group options the batch
// changes). `path` views an operation's or a table share's path.
struct PendingInherit {
  std::string_view path;
  bool replaces = false;
  std::shared_ptr<const InheritedOptions> inherited;  // null: group's
  bool is_public = false;  // its effective options hold "public"
};

// FsPlaceRecords on a store connection of its own.
class StoreFsPlaces final : public FsPlaceRecords {
 public:
  explicit StoreFsPlaces(std::unique_ptr<Store> store)
      : store_(std::move(store)) {}
  absl::StatusOr<uint64_t> MaxShareId() override {
    absl::MutexLock l(&mu_);
    return store_->MaxShareId();
  }
  absl::StatusOr<uint64_t> UsedBytes() override {
    absl::MutexLock l(&mu_);
    return store_->UsedBytes();
  }
  absl::Status Scan(
      absl::FunctionRef<void(const FsPlaceRowView&)> fn) override {
    absl::MutexLock l(&mu_);
    return store_->ScanFsPlaces(fn);
  }
  absl::Status Record(
      std::size_t count,
      absl::FunctionRef<FsPlaceRowView(std::size_t)> row) override {
    absl::MutexLock l(&mu_);
    return store_->RecordFsPlaces(count, row);
  }
  void ReleaseMemory() override {
    absl::MutexLock l(&mu_);
    store_->ReleaseMemory();
  }

 private:
  absl::Mutex mu_;
  std::unique_ptr<Store> store_ ABSL_GUARDED_BY(mu_);
};

// ApplyRun's working state, from validation to the change lists.
struct RunState {
  // The batches still in the group, their operations one after another
  // (copied only for a group of two or more) and where each ends.
  std::vector<std::size_t> live;
  Batch combined;
  const Batch* batch = nullptr;
  std::vector<std::size_t> ends;
  std::vector<Step> steps;
  std::vector<std::vector<PendingInherit>> pending;
  ShareTable::Buckets buckets;
  std::vector<std::unique_ptr<Share>> dead_shares;
  std::vector<std::unique_ptr<ShareGroup>> dead_groups;
  TouchedShares touched;
  // Per segment: where its entries end in touched.shares and dead_shares.
  std::vector<std::size_t> touched_ends;
  std::vector<std::size_t> dead_ends;
  // The table's generation once every segment that changes something has
  // its own.
  uint64_t next_generation = 0;
  // Per segment: the first id its adds got (ids are given in order), so
  // that a share an earlier segment added is "changed" in a later one.
  std::vector<uint64_t> first_ids;
  // RunMode::forced_generation (a replayed batch is a run of one).
  uint64_t forced_generation = 0;
  // EngineWrite committed the run in the cluster's engine.
  bool engine_committed = false;
  // Its connection was lost at the engine's commit: committed or not,
  // nobody here knows (this head learns it from the change log).
  bool engine_commit_unknown = false;
};

// Writes the steps to `w` in order (the store, or the cluster's engine).
absl::Status WriteStepsTo(TableWriter& w, const std::vector<Step>& steps);

// How ApplyRunLocked commits a run (catalog_cluster.cc).
struct RunMode {
  // A local batch in cluster mode: written to the engine too, in the
  // transaction ClusterBegin opened, before the head's copy commits.
  ClusterEngine* engine = nullptr;
  // A batch another head committed (or a resynchronization): the
  // generation it made, which the table takes whatever the batch changes.
  uint64_t forced_generation = 0;
};

// Cluster mode's state (Catalog::Config::engine).
struct ClusterState {
  EngineConnector connect;
  std::string head;
  int follow_ms = 1000;
  std::function<void(const Batch&, BatchResult&, std::string_view)>
      on_replicated;
  std::function<void(std::string_view)> log;

  // Under the catalog's apply_mu_.
  std::unique_ptr<ClusterEngine> writer;    // null until (re)connected
  std::unique_ptr<ClusterEngine> listener;  // the follower's
  std::string local_cluster_id;             // what the head's copy is of
  bool started = false;  // Open has returned: report replays

  mutable absl::Mutex status_mu;
  StoreStatus status ABSL_GUARDED_BY(status_mu);

  absl::Mutex stop_mu;
  bool stop ABSL_GUARDED_BY(stop_mu) = false;
  std::thread follower;

  void Reached(uint64_t cluster_generation);
  std::string status_where() const;
  void Lost(const absl::Status& why);
  void Log(std::string_view line) const {
    if (log) log(line);
  }
};

class CatalogImpl : public Catalog {
 public:
  CatalogImpl(std::unique_ptr<Store> store, std::unique_ptr<Store> mounts,
              std::unique_ptr<Store> places, std::size_t read_slice,
              std::function<void()> between_slices)
      : read_slice_(std::max<std::size_t>(1, read_slice)),
        between_slices_(std::move(between_slices)),
        places_(std::move(places)),
        store_(std::move(store)),
        mounts_(std::move(mounts)) {}

  ~CatalogImpl() override;

  FsPlaceRecords* fs_places() override { return &places_; }
  // Config::identify; before the load.
  void UseIdentify(
      std::function<Config::FsIdentityAnswer(const std::string&, uint64_t)>
          fn) {
    identify_ = std::move(fn);
  }
  StoreStatus store_status() const override;

  // Cluster mode (catalog_cluster.cc): before the first Load.
  void UseEngine(std::unique_ptr<ClusterState> cluster) {
    cluster_ = std::move(cluster);
  }
  // After Load: catches up with the engine if it is there (or serves the
  // copy), then starts following it.
  void StartFollowing() ABSL_LOCKS_EXCLUDED(apply_mu_, mu_);

  absl::Status Load(int threads);

  BatchResult Apply(const Batch& batch) override;
  void ApplyGroup(absl::Span<const Batch* const> batches,
                  absl::Span<BatchResult> results) override;
  uint64_t commit_count() const override { return commits_.load(); }

  std::optional<ShareMatch> FindNearest(std::string_view path) const override;
  uint64_t generation() const override;

  void ForEachActive(
      const std::function<void(const ShareInfo&, const ShareOptions&)>& fn)
      const override;
  absl::StatusOr<std::vector<ShareInfo>> ListShares(
      const std::vector<std::string>& groups) const override;
  std::vector<ShareLocation> ListLocations() const override;
  std::vector<ShareLocation> LocationsOf(
      const std::vector<std::string>& paths) const override;
  std::vector<GroupInfo> ListGroups() const override;
  std::vector<SharetabEntry> SharetabEntries() const override;
  SharetabLines SharetabText() const override;

  void KeepTableMemoryAtExit() override;
  LoadStats load_stats() const override;
  std::size_t share_count() const override;
  std::size_t group_count() const override;

  absl::Status RecordMounts(const std::vector<MountRecord>& added,
                            const std::vector<MountRecord>& removed) override;
  absl::StatusOr<std::vector<MountRecord>> LoadMounts() const override;

 private:
  std::vector<const Share*> ActiveSorted() const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);

  // Validates the batch, whose operations `ends` splits into segments
  // (independent calls of a group commit; ends.back() == ops.size()), each
  // seeing the effect of the ones before it. Fills `steps` (one per
  // operation), `pending` (per segment: the effective options, as the
  // segments up to it leave them, of the shares they change) and `errors`
  // (indexed in the whole batch). Stops after the first segment with an
  // error and returns its index; ends.size() if every segment is valid.
  // With `progress`, each operation's step is published once it is valid
  // and final (while no operation was refused), for a StepWriter.
  std::size_t Validate(const Batch& batch, const std::vector<std::size_t>& ends,
                       std::vector<Step>* steps,
                       std::vector<std::vector<PendingInherit>>* pending,
                       std::vector<OperationError>* errors,
                       ValidationProgress* progress = nullptr)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(apply_mu_) ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // Validate's steps (catalog_validate.cc), on the operation `v` is at.
  // At the end of a segment: the table-wide rules as it leaves the table.
  // True if the segment is refused: its effects stay in the overlay, so
  // the ones after it are validated again without it (ApplyRun).
  bool EndSegment(BatchValidation& v, std::size_t end)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(apply_mu_) ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // The share other than `path` that has resource `res` as of the batch so
  // far, if any.
  std::optional<std::string_view> ResourceUser(BatchValidation& v,
                                               std::string_view res,
                                               std::string_view path)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(apply_mu_);
  // The operation v is at: its rules (Validate's step).
  void ValidateOne(BatchValidation& v)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(apply_mu_) ABSL_SHARED_LOCKS_REQUIRED(mu_);
  void ValidateAddShare(BatchValidation& v)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(apply_mu_) ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // The identity an add at `path` on device `dev` records (identify_,
  // asked once per device and batch where the answer is the device's).
  std::optional<FsUuid> IdentityOf(BatchValidation& v, std::string_view path,
                                   uint64_t dev)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(apply_mu_);
  void ValidateModifyShare(BatchValidation& v)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(apply_mu_) ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // The share_nfs rules over the whole table as operations [begin, end) of
  // the batch leave it: at most one public share. Appends to `errors`.
  void CheckPublic(const Batch& batch, std::size_t begin, std::size_t end,
                   Overlay& ov, const std::vector<PendingInherit>& pending,
                   std::vector<OperationError>* errors)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(apply_mu_) ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // Applies batches that may share a transaction: all but a lone batch
  // have dry_run false and the same manager (see ApplyGroup). Throws
  // std::bad_alloc only before the commit.
  void ApplyRun(absl::Span<const Batch* const> run,
                absl::Span<BatchResult> results)
      ABSL_LOCKS_EXCLUDED(apply_mu_, mu_);
  void ApplyRunLocked(absl::Span<const Batch* const> run,
                      absl::Span<BatchResult> results, const RunMode& mode)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(apply_mu_) ABSL_LOCKS_EXCLUDED(mu_);

  // Cluster mode (catalog_cluster.cc).
  // Connects if needed, locks the engine's generation row and catches up
  // with it: the engine whose transaction is open, or why not.
  absl::StatusOr<ClusterEngine*> ClusterBegin()
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(apply_mu_) ABSL_LOCKS_EXCLUDED(mu_);
  // Brings the table to `head` through `engine`: the records after this
  // head's generation, or a full resynchronization when they cannot
  // (another cluster's copy, a gap, a generation that went backwards, a
  // record this table refuses).
  absl::Status CatchUp(ClusterEngine& engine, const EngineHead& head)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(apply_mu_) ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status Resync(ClusterEngine& engine, std::string_view why)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(apply_mu_) ABSL_LOCKS_EXCLUDED(mu_);
  // Applies one batch as another head committed it; its result, or an
  // error if this table refuses it.
  absl::StatusOr<BatchResult> Replay(const Batch& batch, uint64_t generation,
                                     std::string_view from_head)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(apply_mu_) ABSL_LOCKS_EXCLUDED(mu_);
  // The engine's half of a run's commit: rows, one record per batch that
  // changes something, the new generation; then the engine's commit.
  absl::Status EngineWrite(ClusterEngine& engine,
                           absl::Span<const Batch* const> run,
                           RunState& state)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(apply_mu_);
  // The follower thread: waits for notifications (or the interval) and
  // catches up; reconnects a lost engine.
  void Follow() ABSL_LOCKS_EXCLUDED(apply_mu_, mu_);
  void FollowOnce() ABSL_LOCKS_EXCLUDED(apply_mu_, mu_);
  // ApplyRun's steps (catalog_commit.cc).
  // Validates the run's batches as the segments of one, dropping each
  // refused one (its result gets its errors) until the rest are valid.
  // False if nothing is left to commit: every batch refused, or a dry run
  // (its result filled).
  bool ValidateRun(absl::Span<const Batch* const> run,
                   absl::Span<BatchResult> results, RunState& state,
                   ValidationProgress* progress)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(apply_mu_) ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // The generation the table will have, and room for linking, so that
  // linking after the commit does not allocate.
  void PrepareLink(RunState& state) ABSL_EXCLUSIVE_LOCKS_REQUIRED(apply_mu_)
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // Links the committed segments into the table, each with its own
  // generation; aborts if that runs out of memory (the store has
  // committed).
  void LinkSegments(RunState& state, absl::Span<BatchResult> results)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Each segment's change list, and the rule indexes brought up to date.
  void ReportChanges(RunState& state, absl::Span<BatchResult> results)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(apply_mu_);
  // Brings resource_owner_ and public_ up to date with the shares a
  // committed batch (one segment of a run) touched and removed (`dead_set`,
  // in address order), from the shares themselves: no lookup of their
  // paths in the table (at 1,000,000 adds, a million cache misses). All
  // shares if the list is incomplete.
  void UpdateRuleIndexes(const BatchResult& result,
                         absl::Span<const Share* const> touched,
                         absl::Span<const Share* const> dead_set)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(apply_mu_);
  void RebuildRuleIndexes() ABSL_EXCLUSIVE_LOCKS_REQUIRED(apply_mu_)
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // Writes the steps and the table's next generation in one transaction.
  // With `written` (a StepWriter's result), the steps were already
  // written in the transaction it began: only the generation and the
  // commit are left (or the rollback, if it failed).
  // `before_commit` runs after the writes, before the store's commit (the
  // engine's commit, in cluster mode): an error rolls back.
  absl::Status Commit(const std::vector<Step>& steps, uint64_t generation,
                      const absl::Status* written,
                      absl::FunctionRef<absl::Status()> before_commit)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(apply_mu_);
  absl::Status WriteSteps(const std::vector<Step>& steps)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(apply_mu_);
  // Links the committed steps [begin, end) into the table; returns whether
  // anything changed. Removed objects go to the garbage vectors.
  // `touched` receives every share added or changed (with repeats); its
  // capacity must already fit them (linking must not allocate).
  bool Link(std::vector<Step>& steps, std::size_t begin, std::size_t end,
            std::vector<PendingInherit>& pending, uint64_t generation,
            std::vector<std::unique_ptr<Share>>* dead_shares,
            std::vector<std::unique_ptr<ShareGroup>>* dead_groups,
            TouchedShares* touched) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Calls visit(group, share) for every share: group by group in name
  // order, each group's shares in the order they were linked. Holds the
  // table (shared) for at most read_slice_ shares at a time, so that a
  // change waits for one slice rather than the whole walk: at 1,000,000
  // shares the sharetab view's copy held it 170 ms and the file-system
  // watch's 120 ms, and one add right after a batch waited 90-220 ms for
  // them. Calls start(shares in the table) first.
  //
  // Not one snapshot when shares are added or removed during the walk:
  // every share in the table throughout is visited once, as it is when
  // visited; one added or removed meanwhile may be visited or not. If a
  // group was added or removed, a share moved to another group, or the
  // share the walk stopped at removed, restart() is called and the walk
  // starts again, holding the table until it ends (a snapshot).
  template <typename Start, typename Visit>
  void WalkInSlices(Start start, Visit visit,
                    absl::FunctionRef<void()> restart) const
      ABSL_LOCKS_EXCLUDED(mu_);

  const std::size_t read_slice_;
  const std::function<void()> between_slices_;  // Config::between_slices
  // Config::identify; set once, before the load.
  std::function<Config::FsIdentityAnswer(const std::string&, uint64_t)>
      identify_;
  StoreFsPlaces places_;
  // Order: apply_mu_ before mu_.
  mutable absl::Mutex apply_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  mutable absl::Mutex mu_;
  std::unique_ptr<Store> store_ ABSL_GUARDED_BY(apply_mu_);
  // Mount records use their own connection, so that MOUNT requests do not
  // wait for a batch's validation (SQLite still has one writer at a time:
  // they may wait for its commit).
  mutable absl::Mutex mounts_mu_;
  std::unique_ptr<Store> mounts_ ABSL_GUARDED_BY(mounts_mu_);
  uint64_t next_id_ ABSL_GUARDED_BY(apply_mu_) = 1;
  std::atomic<uint64_t> commits_{0};  // store transactions committed
  ShareTable table_ ABSL_GUARDED_BY(mu_);
  LoadStats load_stats_ ABSL_GUARDED_BY(mu_);
  // share_nfs rules (share_rules.h): resource name -> the share that has
  // it, and the shares whose effective options hold "public". Read and
  // written only by Apply.
  // std::unordered_map, not absl::flat_hash_map: updated after a commit,
  // where an allocation failure must leave them usable (see Overlay).
  std::unordered_map<std::string, std::string> resource_owner_
      ABSL_GUARDED_BY(apply_mu_);
  std::unordered_map<std::string, std::string> resource_of_
      ABSL_GUARDED_BY(apply_mu_);
  std::vector<std::string> public_ ABSL_GUARDED_BY(apply_mu_);
  // Built at load; rebuilt by the next Apply after one could not be kept
  // up to date (out of memory).
  bool rule_indexes_stale_ ABSL_GUARDED_BY(apply_mu_) = true;
  // Cluster mode; null for a single server's SQLite store.
  std::unique_ptr<ClusterState> cluster_;
  // Validating a batch another head committed (BatchValidation::replay).
  bool replaying_ ABSL_GUARDED_BY(apply_mu_) = false;
};

}  // namespace catalog_internal
}  // namespace libshare

#endif  // LIBSHARE_SRC_CATALOG_IMPL_H_
