// Catalog implementation.
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
#include "libshare/catalog.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <memory>
#include <memory_resource>
#include <mutex>
#include <new>
#include <string>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "internal_text.h"
#include "libshare/dir_walk.h"
#include "libshare/heap_reserve.h"
#include "libshare/loader.h"
#include "libshare/path.h"
#include "libshare/share_table.h"
#include "libshare/store.h"
#include "options_cache.h"
#include "share_rules.h"

namespace libshare {
namespace {

using Op = Operation::Type;
using internal::ToAbsl;

bool IsBelow(std::string_view p, std::string_view dir) {
  if (dir == "/") return p.size() > 1 && p[0] == '/';
  return p.size() > dir.size() && p.compare(0, dir.size(), dir) == 0 &&
         p[dir.size()] == '/';
}

// A map from paths (views that outlive it) to V, for the batch overlay:
// open addressing over an array of 8-byte slots (the hash's high half and
// an index), the entries in one vector in insertion order. A lookup at
// 1,000,000 paths costs a slot and an entry, not std::unordered_map's
// bucket, chain and prime modulo. Growing allocates first and then
// rehashes, so a failed allocation leaves the map as it was: a batch must
// survive std::bad_alloc with a clean error (tests/reliability
// alloc_failure). Entries are never removed.
template <typename V>
class PathMap {
 public:
  struct Entry {
    std::string_view key;
    V value;
    uint64_t hash;
  };

  void reserve(std::size_t n) {
    ReserveHuge(entries_, n);
    Grow(n);
  }
  V* find(std::string_view key) {
    const uint64_t h = Hash(key);
    for (std::size_t i = h & mask_;; i = (i + 1) & mask_) {
      const uint64_t slot = slots_[i];
      if (slot == 0) return nullptr;
      Entry& e = entries_[(slot & kIndexMask) - 1];
      if ((slot >> 32) == (h >> 32) && e.key == key) return &e.value;
    }
  }
  const V* find(std::string_view key) const {
    return const_cast<PathMap*>(this)->find(key);
  }
  // The entry for `key`, made with V() if there is none.
  V& operator[](std::string_view key) {
    if (V* v = find(key)) return *v;
    Grow(entries_.size() + 1);
    entries_.push_back(Entry{key, V(), Hash(key)});
    Place(entries_.size() - 1);
    return entries_.back().value;
  }
  const std::vector<Entry>& entries() const { return entries_; }

 private:
  static constexpr uint64_t kIndexMask = 0xffffffff;
  static uint64_t Hash(std::string_view key) {
    return absl::Hash<absl::string_view>()(ToAbsl(key));
  }
  // Room for n entries at a load of at most one half.
  void Grow(std::size_t n) {
    std::size_t want = slot_count_ == 0 ? 16 : slot_count_;
    while (want < 2 * n) want *= 2;
    if (want == slot_count_) return;
    auto fresh = std::make_unique<uint64_t[]>(want);  // may throw: no change
    slots_ = std::move(fresh);
    slot_count_ = want;
    mask_ = want - 1;
    for (std::size_t k = 0; k < entries_.size(); ++k) Place(k);
  }
  void Place(std::size_t k) {
    const uint64_t h = entries_[k].hash;
    std::size_t i = h & mask_;
    while (slots_[i] != 0) i = (i + 1) & mask_;
    slots_[i] = (h & ~kIndexMask) | (k + 1);
  }

  std::vector<Entry> entries_;
  std::unique_ptr<uint64_t[]> slots_ = std::make_unique<uint64_t[]>(1);
  std::size_t slot_count_ = 0;
  std::size_t mask_ = 0;
};

// The table as an ordered batch would leave it, without copying the table:
// entries here shadow the table's. Keys and names are views into the batch's
// operations or the table's shares, both unchanged while the overlay lives,
// so recording an operation copies no string.
//
// Its maps are std::unordered_map, not absl::flat_hash_map: Abseil
// 20220623's raw_hash_set::resize is not exception-safe (after a failed
// allocation its destructor frees a static sentinel or a stale pointer),
// and a batch must survive std::bad_alloc with a clean error (found by
// tests/reliability alloc_failure). Their nodes come from one arena that
// is freed at once with the overlay: a node allocation is a pointer bump.
class Overlay {
 public:
  struct Group {
    bool exists = false;
    bool enabled = true;
    std::size_t count = 0;                         // shares in the group
    std::string_view options;                      // its options text
    std::shared_ptr<const ShareOptions> compiled;  // null if bad
    // The exports file that manages it (views the table's group or the
    // batch's operation, which outlive the overlay); "" = by hand.
    std::string_view managed_by;
  };
  struct ShareState {
    bool exists = false;
    std::string_view group;
    uint64_t dev = 0;
    std::string_view own;   // its own options text
    bool replaces = false;  // Share::replaces_group
    std::string_view resource;
    // The last InheritPass that considered it (see Visit).
    uint32_t inherit_pass = 0;
    // 1 + the segment (ApplyGroup) whose add-share made its Share object,
    // 0 if the object is the table's: a new object starts with no
    // inherited options.
    uint32_t added_in = 0;
    uint64_t id = 0;  // its store row (Share::id)
  };

  Overlay(const ShareTable& table, std::size_t ops) : table_(table) {
    shares_.reserve(ops);
  }
  Overlay(const Overlay&) = delete;
  Overlay& operator=(const Overlay&) = delete;

  // The group's state, or nullptr if it does not exist.
  Group* FindGroup(std::string_view name) {
    // Most operations in a row name one group; its entry keeps its address
    // (a node, never erased) for the overlay's life.
    if (last_group_ != nullptr && name == last_group_name_) {
      return last_group_->exists ? last_group_ : nullptr;
    }
    auto it = groups_.find(ToAbsl(name));
    if (it == groups_.end()) {
      const ShareGroup* g = table_.FindGroup(name);
      if (g == nullptr) return nullptr;
      // The key views the caller's name (a batch operation's or a table
      // group's), which outlives the overlay.
      it = groups_
               .emplace(ToAbsl(name),
                        Group{true, g->enabled, g->shares.size(), g->options,
                              g->compiled, g->managed_by})
               .first;
    }
    last_group_name_ = name;
    last_group_ = &it->second;
    return it->second.exists ? &it->second : nullptr;
  }

  void CreateGroup(std::string_view name, std::string_view options,
                   std::shared_ptr<const ShareOptions> compiled) {
    groups_[ToAbsl(name)] =
        Group{true, true, 0, options, std::move(compiled), {}};
  }

  // Removes the group and every share in it.
  void DeleteGroup(std::string_view name) {
    std::vector<std::string_view> victims;
    if (const ShareGroup* g = table_.FindGroup(name)) {
      for (const Share& s : g->shares) {
        if (shares_.find(s.path) == nullptr) {
          victims.push_back(s.path);
        }
      }
    }
    for (const auto& e : shares_.entries()) {
      if (e.value.exists && e.value.group == name) victims.push_back(e.key);
    }
    for (std::string_view p : victims) RemoveShare(p);
    groups_[ToAbsl(name)] = Group{false, true, 0, {}, nullptr, {}};
  }

  // The share at `path` as of the batch so far. *touched (if given):
  // whether the batch has an entry for the path (added, removed, changed);
  // without one, the answer is the table's.
  std::optional<ShareState> FindShare(std::string_view path,
                                      bool* touched = nullptr) const {
    const ShareState* st = shares_.find(path);
    if (touched != nullptr) *touched = st != nullptr;
    if (st != nullptr) {
      if (!st->exists) return std::nullopt;
      return *st;
    }
    return TableShare(path);
  }

  // InheritPass's visit of `path` in pass `pass` (NextInheritPass): the
  // share as FindShare gives it, or nullopt if it does not exist or the
  // pass visited it already. A share the batch touched is marked in its
  // entry (one lookup); the others are remembered in `others`.
  std::optional<ShareState> Visit(
      std::string_view path, uint32_t pass,
      std::unordered_set<std::string_view>& others) {
    if (ShareState* st = shares_.find(path)) {
      if (st->inherit_pass == pass) return std::nullopt;
      st->inherit_pass = pass;
      if (!st->exists) return std::nullopt;
      return *st;
    }
    if (!others.insert(path).second) return std::nullopt;
    return TableShare(path);
  }
  uint32_t NextInheritPass() { return ++inherit_pass_; }

  // Replaces the state of an existing share (own options, resource).
  void UpdateShare(std::string_view path, const ShareState& st) {
    shares_[path] = st;
  }

  void AddShare(std::string_view path, std::string_view group, uint64_t dev,
                std::string_view own, std::string_view resource,
                uint32_t segment, uint64_t id) {
    if (clear_folder_ == path || IsBelow(clear_folder_, path)) {
      clear_folder_ = {};
    }
    shares_[path] =
        ShareState{true, group, dev, own, false, resource, 0, segment + 1, id};
    FindGroup(group)->count++;
    CountAncestors(path, dev, +1);
  }

  void RemoveShare(std::string_view path) {
    std::optional<ShareState> s = FindShare(path);
    if (!s) return;
    if (Group* g = FindGroup(s->group)) g->count--;
    CountAncestors(path, s->dev, -1);
    shares_[path] = ShareState{false, {}, 0, {}, false, {}};
  }

  void MoveShare(std::string_view path, std::string_view group) {
    std::optional<ShareState> s = FindShare(path);
    if (Group* g = FindGroup(s->group)) g->count--;
    FindGroup(group)->count++;
    s->group = group;
    shares_[path] = *s;
  }

  // The nesting rule against the table and the batch so far.
  absl::Status CheckNesting(std::string_view path, uint64_t dev) {
    std::string_view parent = ParentPath(path);
    if (parent.empty() || parent != clear_folder_) {
      bool any_share = false;
      for (std::string_view p = parent; !p.empty(); p = ParentPath(p)) {
        std::optional<ShareState> s = FindShare(p);
        if (!s) continue;
        if (s->dev == dev) {
          return absl::FailedPreconditionError(
              absl::StrCat(ToAbsl(path), ": path is inside share ", ToAbsl(p)));
        }
        any_share = true;
      }
      if (!any_share) clear_folder_ = parent;
    }
    int64_t below = table_.CountBelow(path, dev);
    auto it = below_.find(ToAbsl(path));
    if (it != below_.end()) {
      auto c = it->second.find(dev);
      if (c != it->second.end()) below += c->second;
    }
    if (below > 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          ToAbsl(path), ": path contains share ", AnyShareBelow(path, dev)));
    }
    return absl::OkStatus();
  }

 private:
  // O(N): only to name the culprit of a refused operation.
  std::string AnyShareBelow(std::string_view path, uint64_t dev) const {
    std::string_view best;
    auto consider = [&](std::string_view p) {
      if (best.empty() || p < best) best = p;
    };
    for (const auto& e : shares_.entries()) {
      if (e.value.exists && e.value.dev == dev && IsBelow(e.key, path)) {
        consider(e.key);
      }
    }
    table_.ForEachShare([&](const Share& s) {
      if (s.dev == dev && IsBelow(s.path, path) &&
          shares_.find(s.path) == nullptr) {
        consider(s.path);
      }
    });
    return std::string(best);
  }

  // Counts `path` (on `dev`) in each of its ancestors. Siblings in a row
  // (a batch adding thousands of home directories) reuse the counters of
  // the last parent and device: elements of a node-based map keep their
  // address, and none is ever erased here. The chain is built before any
  // counter changes, so a failed allocation changes nothing.
  std::optional<ShareState> TableShare(std::string_view path) const {
    const Share* s = table_.Find(path);
    if (s == nullptr) return std::nullopt;
    return ShareState{true,
                      s->group->name,
                      s->dev,
                      s->options,
                      s->replaces_group,
                      s->resource(),
                      0,
                      0,
                      s->id};
  }

  void CountAncestors(std::string_view path, uint64_t dev, int delta) {
    const std::string_view parent = ParentPath(path);
    if (parent.empty()) return;
    if (chain_parent_.empty() || parent != chain_parent_ || dev != chain_dev_) {
      chain_parent_ = {};
      chain_.clear();
      for (std::string_view p = parent; !p.empty(); p = ParentPath(p)) {
        chain_.push_back(&below_[ToAbsl(p)][dev]);
      }
      chain_parent_ = parent;
      chain_dev_ = dev;
    }
    for (int64_t* c : chain_) *c += delta;
  }

  const ShareTable& table_;
  // A folder with no share at or above it, as of the batch so far, so that
  // a batch adding thousands of siblings walks their ancestors once. Only
  // an add at or above it can make it wrong.
  std::string_view clear_folder_;
  template <typename V>
  using ViewMap = std::pmr::unordered_map<absl::string_view, V,
                                          absl::Hash<absl::string_view>>;
  // Declared before the maps, which it outlives.
  std::pmr::monotonic_buffer_resource arena_;
  ViewMap<Group> groups_{&arena_};
  // FindGroup's last answer: the entry of a group named last_group_name_
  // (a view of the caller's name, which outlives the overlay).
  std::string_view last_group_name_;
  Group* last_group_ = nullptr;
  PathMap<ShareState> shares_;
  // The inner maps take arena_ too (uses-allocator construction).
  ViewMap<std::pmr::unordered_map<uint64_t, int64_t>> below_{&arena_};
  // CountAncestors' last chain: the counters of chain_parent_ and its
  // ancestors for chain_dev_ (empty chain_parent_: none yet).
  std::string_view chain_parent_;
  uint64_t chain_dev_ = 0;
  std::vector<int64_t*> chain_;
  uint32_t inherit_pass_ = 0;
};

// The directory checks (CanonicalDirectoryPlace; on the thread a
// CanonicalDirectoryChecker: one statx per sibling of the last parent, or
// for a run of 256 siblings and more one listing of their parent)
// of a batch's add-shares, run in operation order on a second thread while
// Validate does the rest of its work on this one: the machine has two
// cores, and at 15,000 adds the checks are about half of validation.
// Validate takes each result when it reaches the operation's check, so the
// errors, their order and their text are those of checking in line. A path
// the thread claimed is checked even if Validate then refuses its
// operation before the check (it only opens and stats it, as the check in
// line would). Small batches check in line: starting a thread costs more
// than they save.
//
// The thread claims the paths a block at a time, and opens (and lists) a
// new parent before it claims the block that starts with it; Get checks in
// line a path that nobody has claimed yet, claiming it. So while the
// thread lists a parent (15,000 siblings: 5-11 ms, during which Validate
// used to wait; 1,000,000: 0.6 s), Validate goes on with a statx per path,
// and the thread then claims from where Validate has got. Each side opens
// a parent afresh whenever it comes to a new run of siblings, as the check
// in line would, not keeping one open from a run the other side took.
class DirectoryChecks {
 public:
  static constexpr std::size_t kMinPaths = 256;

  explicit DirectoryChecks(const Batch& batch) : batch_(batch) {
    std::size_t adds = 0;
    for (const Operation& op : batch.ops) adds += op.type == Op::kAddShare;
    if (adds < kMinPaths) return;
    ops_.reserve(adds);
    ReserveHuge(results_, adds);
    for (std::size_t i = 0; i < batch.ops.size(); ++i) {
      if (batch.ops[i].type == Op::kAddShare) ops_.push_back(i);
    }
    results_.resize(adds, absl::StatusOr<DirectoryPlace>(DirectoryPlace{}));
    try {
      thread_ = std::thread([this] { Run(); });
    } catch (const std::system_error&) {
      ops_.clear();  // no thread: every check in line
    }
  }
  DirectoryChecks(const DirectoryChecks&) = delete;
  DirectoryChecks& operator=(const DirectoryChecks&) = delete;
  ~DirectoryChecks() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
  }

  // The check of operation `op` (an add-share). Called in increasing
  // operation order.
  absl::StatusOr<DirectoryPlace> Get(std::size_t op) {
    while (next_ < ops_.size() && ops_[next_] < op) ++next_;
    if (next_ >= ops_.size() || ops_[next_] != op) {
      return CanonicalDirectoryPlace(batch_.ops[op].path);
    }
    const std::size_t k = next_++;
    // Not claimed yet (the thread is behind, listing a parent): claimed
    // here, with the ones before it Validate did not ask for, and checked
    // in line.
    for (std::size_t c = claimed_.load(); c <= k;) {
      if (claimed_.compare_exchange_weak(c, k + 1)) {
        // Its parent opened afresh unless the path before was Get's too.
        if (line_last_ + 1 != k) line_checker_ = CanonicalDirectoryChecker();
        line_last_ = k;
        return line_checker_.Check(batch_.ops[op].path);
      }
    }
    // The thread's: wait until its block is done.
    if (done_.load() <= k && !finished_.load()) {
      std::unique_lock<std::mutex> l(mu_);
      want_.store(k + 1);
      waiting_.store(true);
      cv_.wait(l, [&] { return done_.load() > k || finished_.load(); });
      waiting_.store(false);
    }
    if (done_.load() > k) return std::move(results_[k]);
    // The thread stopped short (out of memory): in line from here.
    return CanonicalDirectoryPlace(batch_.ops[op].path);
  }

 private:
  static std::string_view ParentOf(std::string_view path) {
    const std::size_t slash = path.rfind('/');
    return slash == std::string_view::npos ? std::string_view()
                                           : path.substr(0, slash);
  }

  // Where the run of paths with the parent of ops_[k]'s path ends.
  std::size_t RunEnd(std::size_t k) const {
    const std::string_view parent = ParentOf(batch_.ops[ops_[k]].path);
    std::size_t end = k + 1;
    while (end < ops_.size() &&
           ParentOf(batch_.ops[ops_[end]].path) == parent) {
      ++end;
    }
    return end;
  }

  void Run() {
    std::size_t run_end = 0;  // where the paths with the last parent end
    while (!stop_.load()) {
      std::size_t k = claimed_.load();
      if (k >= ops_.size()) break;
      std::size_t end = 0;
      try {
        if (k >= run_end) {
          // A new parent: opened (and listed) before any of its paths is
          // claimed, while Get checks them in line; then claimed from
          // where Get has got.
          run_end = RunEnd(k);
          checker_ = CanonicalDirectoryChecker();  // its parent afresh
          checker_.Prepare(batch_.ops[ops_[k]].path, run_end - k);
          continue;
        }
        // A block within the parent's run, opened (and listed) already
        // unless it could not be.
        end = std::min(k + kBlock, run_end);
        if (!claimed_.compare_exchange_weak(k, end)) continue;
        for (; k < end; ++k) {
          // The siblings ahead let the checker list their parent once.
          results_[k] = checker_.Check(batch_.ops[ops_[k]].path, run_end - k);
        }
      } catch (const std::bad_alloc&) {
        break;  // Get checks the rest in line, where bad_alloc is handled
      }
      done_.store(end);
      // Sequentially consistent with Get's store of waiting_ before its
      // own load of done_: one of the two sees the other.
      if (waiting_.load() && end >= want_.load()) {
        std::lock_guard<std::mutex> l(mu_);
        cv_.notify_one();
      }
    }
    finished_.store(true);
    std::lock_guard<std::mutex> l(mu_);
    cv_.notify_one();
  }

  const Batch& batch_;
  CanonicalDirectoryChecker checker_;       // the thread's
  CanonicalDirectoryChecker line_checker_;  // Get's, for what it claims
  // The last path Get checked with it (none: SIZE_MAX, one before 0).
  std::size_t line_last_ = SIZE_MAX;
  std::vector<std::size_t> ops_;            // the add-shares' indices
  // results_[k] is ops_[k]'s check when the thread claimed k, written by
  // the thread before done_ passes k and read by Get only after. The
  // paths Get claims are checked by Get and never read from here.
  std::vector<absl::StatusOr<DirectoryPlace>> results_;
  // The thread claims this many paths at a time (and wakes a waiting Get
  // once a block is done, not after every path: a wake-up per path costs
  // two context switches).
  static constexpr std::size_t kBlock = 32;
  std::size_t next_ = 0;  // Get's position in ops_
  // ops_[0, claimed_) are claimed, each by the thread or by Get.
  std::atomic<std::size_t> claimed_{0};
  // The thread's claims below done_ are checked (the thread claims and
  // checks its blocks in increasing order).
  std::atomic<std::size_t> done_{0};
  std::atomic<std::size_t> want_{0};  // what a waiting Get waits for
  std::atomic<bool> finished_{false};
  std::atomic<bool> stop_{false};
  std::atomic<bool> waiting_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  std::thread thread_;  // last: started once the rest is built
};

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

// What a step that changes options or text carries to linking. Kept apart
// from Step, which every operation has: a batch is mostly adds, which
// carry none of it (15,000 adds spent 1.7 MiB on these empty fields).
struct StepTexts {
  // The new own options (kSetOptions, kUnsetOption, kModifyShare with
  // set_options; kManageGroup: the exports file); compiled is null for a
  // share's "".
  std::shared_ptr<const ShareOptions> compiled;
  std::string text;
  // kModifyShare: the share's resource and description after it (null:
  // neither).
  std::unique_ptr<ShareTexts> share_texts;
};

// One validated operation with everything it needs prepared, so that
// linking it into the table allocates (almost) nothing.
struct Step {
  const Operation* op = nullptr;
  std::unique_ptr<Share> share;       // kAddShare
  std::unique_ptr<ShareGroup> group;  // kCreateGroup
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

// Records new own options (a share's, or with an empty path the group's)
// in the overlay. `text` outlives the overlay (an operation's or a step's).
void SetOwnOptions(Overlay& ov, std::string_view group, std::string_view path,
                   std::string_view text,
                   std::shared_ptr<const ShareOptions> compiled) {
  if (path.empty()) {
    Overlay::Group* g = ov.FindGroup(group);
    g->options = text;
    g->compiled = std::move(compiled);
    return;
  }
  std::optional<Overlay::ShareState> st = ov.FindShare(path);
  st->own = text;
  st->replaces = false;
  ov.UpdateShare(path, *st);
}

// The effective options, as the overlay has them now, of every share whose
// own options, group or group options the first `count` (valid) steps
// change.
void InheritPass(const ShareTable& table, const std::vector<Step>& steps,
                 std::size_t count, uint32_t segment,
                 const std::vector<std::string>& table_public, Overlay& ov,
                 OptionsCache& cache, std::vector<PendingInherit>* pending) {
  InheritedCache inherited;
  // Each share once: the ones the batch touched are marked in the
  // overlay, the table's others here.
  const uint32_t pass = ov.NextInheritPass();
  std::unordered_set<std::string_view> others;
  auto consider = [&](std::string_view path) {
    std::optional<Overlay::ShareState> st = ov.Visit(path, pass, others);
    if (!st) return;
    Overlay::Group* g = ov.FindGroup(st->group);
    PendingInherit p;
    p.path = path;
    p.replaces = st->replaces;
    if (!st->own.empty()) {
      absl::StatusOr<std::shared_ptr<const ShareOptions>> own =
          cache.Get(st->own);
      if (!own.ok()) return;  // validated already
      p.inherited =
          inherited.Get(g->options, *g->compiled, st->own, *own, st->replaces);
      p.is_public = p.inherited->compiled->public_fh;
    } else {
      p.is_public = g->compiled->public_fh;
    }
    // A share this segment added is linked with no inherited options and
    // replaces_group false: an entry saying so would change nothing (and
    // cost a lookup at link time, under the writer lock). Kept for a path
    // that was a public share, which CheckPublic looks for here.
    if (st->added_in == segment + 1 && p.inherited == nullptr && !p.replaces &&
        !p.is_public &&
        std::find(table_public.begin(), table_public.end(), path) ==
            table_public.end()) {
      return;
    }
    pending->push_back(std::move(p));
  };
  for (std::size_t i = 0; i < count; ++i) {
    const Step& step = steps[i];
    if (step.noop) continue;
    const Operation& op = *step.op;
    switch (op.type) {
      case Op::kAddShare:
      case Op::kMoveShare:
      case Op::kModifyShare:
        consider(op.path);
        break;
      case Op::kSetOptions:
      case Op::kUnsetOption:
        if (!op.path.empty()) {
          consider(op.path);
        } else if (const ShareGroup* g = table.FindGroup(op.group)) {
          for (const Share& s : g->shares) consider(s.path);
        }
        break;
      default:
        break;
    }
  }
}

ShareInfo MakeInfo(const Share& s) {
  ShareInfo i;
  i.id = s.id;
  i.generation = s.generation;
  i.path = s.path;
  i.group = s.group->name;
  i.resource = s.resource();
  i.description = s.description();
  i.options = s.options;
  i.effective_options = s.effective_options_text();
  i.active = s.active();
  i.dev = s.dev;
  i.mount_root = s.mount_root;
  return i;
}

std::vector<const Share*> SortedByPath(std::vector<const Share*> v) {
  std::sort(v.begin(), v.end(),
            [](const Share* a, const Share* b) { return a->path < b->path; });
  return v;
}

// From this many operations on, a batch alone is written while it is
// validated (see ApplyRun).
constexpr std::size_t kWriteAheadOps = 256;
// What the store's writer thread allocates per add (SQLite's page cache:
// 15,000 adds took 630 pages on a fresh daemon), up to the page cache's
// bound (store.cc: 32 MiB) and a little more: made resident before the
// rows go in (libshare/heap_reserve.h).
constexpr std::size_t kWriterReservePerOp = 192;
constexpr std::size_t kWriterReserveMax = std::size_t{40} << 20;

// Writes a batch's steps to the store in order. Adds in a row go in
// statements of many rows (Store::InsertShares), so an add may wait here
// until a step that is not an add, a full run, or Finish writes it.
class StepWriter {
 public:
  explicit StepWriter(Store& store) : store_(store) {}
  absl::Status Write(const Step& step) {
    if (step.noop) return absl::OkStatus();
    const Operation& op = *step.op;
    if (op.type == Op::kAddShare) {
      if (rows_.empty()) rows_.reserve(kRun);  // no-op after the first run
      const Share& s = *step.share;
      rows_.push_back(Store::ShareFields{s.id, s.path, op.group, s.resource(),
                                         s.description(), s.options, s.dev});
      return rows_.size() < kRun ? absl::OkStatus() : Finish();
    }
    if (absl::Status s = Finish(); !s.ok()) return s;
    switch (op.type) {
      case Op::kAddShare:  // gathered above
        return absl::OkStatus();
      case Op::kCreateGroup:
        return store_.InsertGroup({op.group, true, op.options});
      case Op::kDeleteGroup:
        return store_.DeleteGroup(op.group, step.group_has_shares);
      case Op::kEnableGroup:
      case Op::kDisableGroup:
        return store_.SetGroupEnabled(op.group, op.type == Op::kEnableGroup);
      case Op::kRemoveShare:
        return store_.DeleteShare(step.share_id, op.path);
      case Op::kMoveShare:
        return store_.MoveShare(step.share_id, op.path, op.group);
      case Op::kSetOptions:
      case Op::kUnsetOption:
        return op.path.empty()
                   ? store_.SetGroupOptions(op.group, step.texts->text)
                   : store_.SetShareOptions(step.share_id, op.path,
                                            step.texts->text);
      case Op::kModifyShare: {
        if (op.set_options) {
          if (absl::Status s = store_.SetShareOptions(step.share_id, op.path,
                                                      step.texts->text);
              !s.ok()) {
            return s;
          }
        }
        const ShareTexts* after = step.texts->share_texts.get();
        return store_.SetShareText(
            step.share_id, op.path,
            after != nullptr ? std::string_view(after->description) : "",
            after != nullptr ? std::string_view(after->resource) : "");
      }
      case Op::kManageGroup:
        return store_.SetGroupManager(op.group, op.path);
    }
    return absl::OkStatus();
  }
  // Writes the adds still waiting.
  absl::Status Finish() {
    if (rows_.empty()) return absl::OkStatus();
    absl::Status s = store_.InsertShares(rows_);
    rows_.clear();
    return s;
  }

 private:
  static constexpr std::size_t kRun = 256;  // a multiple of InsertShares'
  Store& store_;
  std::vector<Store::ShareFields> rows_;  // views of the steps' shares
};

class CatalogImpl : public Catalog {
 public:
  CatalogImpl(std::unique_ptr<Store> store, std::unique_ptr<Store> mounts,
              std::size_t read_slice, std::function<void()> between_slices)
      : read_slice_(std::max<std::size_t>(1, read_slice)),
        between_slices_(std::move(between_slices)),
        store_(std::move(store)),
        mounts_(std::move(mounts)) {}

  absl::Status Load(int threads) {
    absl::MutexLock a(&apply_mu_);
    absl::WriterMutexLock l(&mu_);
    // Generations only grow, across restarts too (the loaded shares get
    // the last committed one): a client holding one from before can ask
    // what changed since, or learn that it is too old.
    absl::StatusOr<uint64_t> generation = store_->LoadGeneration();
    if (!generation.ok()) return generation.status();
    table_.set_generation(*generation);
    absl::StatusOr<LoadStats> stats = LoadShareTable(*store_, threads, &table_);
    if (!stats.ok()) return stats.status();
    load_stats_ = *stats;
    RebuildRuleIndexes();
    absl::StatusOr<uint64_t> max_id = store_->MaxShareId();
    if (!max_id.ok()) return max_id.status();
    next_id_ = *max_id + 1;
    return absl::OkStatus();
  }

  BatchResult Apply(const Batch& batch) override;
  void ApplyGroup(absl::Span<const Batch* const> batches,
                  absl::Span<BatchResult> results) override;
  uint64_t commit_count() const override { return commits_.load(); }

  std::optional<ShareMatch> FindNearest(std::string_view path) const override {
    std::string normalized;
    if (!ValidatePath(path).ok()) {
      absl::StatusOr<std::string> n = NormalizePath(path);
      if (!n.ok()) return std::nullopt;
      normalized = *std::move(n);
      path = normalized;
    }
    absl::ReaderMutexLock l(&mu_);
    const Share* s =
        table_.FindNearest(path, [](const Share& s) { return s.active(); });
    if (s == nullptr) return std::nullopt;
    ShareMatch m;
    m.id = s->id;
    m.generation = s->generation;
    m.path = s->path;
    m.options = s->effective_options();
    m.exact = s->path == path;
    m.dev = s->dev;
    m.mount_root = s->mount_root;
    return m;
  }

  uint64_t generation() const override {
    absl::ReaderMutexLock l(&mu_);
    return table_.generation();
  }

  void ForEachActive(
      const std::function<void(const ShareInfo&, const ShareOptions&)>& fn)
      const override {
    absl::ReaderMutexLock l(&mu_);
    for (const Share* s : ActiveSorted()) {
      fn(MakeInfo(*s), *s->effective_options());
    }
  }

  absl::StatusOr<std::vector<ShareInfo>> ListShares(
      const std::vector<std::string>& groups) const override {
    absl::ReaderMutexLock l(&mu_);
    std::vector<const Share*> shares;
    if (groups.empty()) {
      shares.reserve(table_.size());
      table_.ForEachShare([&](const Share& s) { shares.push_back(&s); });
    } else {
      for (const std::string& name : groups) {
        if (table_.FindGroup(name) == nullptr) {
          return absl::NotFoundError(
              absl::StrCat("group ", name, " does not exist"));
        }
      }
      absl::flat_hash_map<absl::string_view, bool> seen;
      for (const std::string& name : groups) {
        if (!seen.emplace(ToAbsl(name), true).second) continue;
        for (const Share& s : table_.FindGroup(name)->shares) {
          shares.push_back(&s);
        }
      }
    }
    std::vector<ShareInfo> out;
    out.reserve(shares.size());
    for (const Share* s : SortedByPath(std::move(shares))) {
      out.push_back(MakeInfo(*s));
    }
    return out;
  }

  std::vector<ShareLocation> ListLocations() const override {
    std::vector<ShareLocation> out;
    WalkInSlices([&](std::size_t shares) { out.reserve(shares); },
                 [&](const ShareGroup&, const Share& s) {
                   out.push_back({s.id, s.dev, s.path, s.mount_root,
                                  s.effective_options()->mountpoint});
                 },
                 [&] { out.clear(); });
    return out;
  }

  std::vector<ShareLocation> LocationsOf(
      const std::vector<std::string>& paths) const override {
    absl::ReaderMutexLock l(&mu_);
    std::vector<ShareLocation> out;
    out.reserve(paths.size());
    for (const std::string& path : paths) {
      if (const Share* s = table_.Find(path)) {
        out.push_back({s->id, s->dev, s->path, s->mount_root,
                       s->effective_options()->mountpoint});
      }
    }
    return out;
  }

  std::vector<GroupInfo> ListGroups() const override {
    absl::ReaderMutexLock l(&mu_);
    std::vector<GroupInfo> out;
    for (const ShareGroup* g : table_.SortedGroups()) {
      out.push_back(
          {g->name, g->enabled, g->options, g->shares.size(), g->managed_by});
    }
    return out;
  }

  std::vector<SharetabEntry> SharetabEntries() const override {
    std::vector<SharetabEntry> out;
    // Only the copy is done under the lock, a slice at a time; the sort
    // (most of the cost) runs after it.
    WalkInSlices([&](std::size_t shares) { out.reserve(shares); },
                 [&](const ShareGroup& g, const Share& s) {
                   if (!g.enabled) return;
                   SharetabEntry& e = out.emplace_back();
                   e.path = s.path;
                   e.resource = s.resource();
                   e.options = s.effective_options_text();
                   e.description = s.description();
                 },
                 [&] { out.clear(); });
    std::sort(out.begin(), out.end(),
              [](const SharetabEntry& a, const SharetabEntry& b) {
                return a.path < b.path;
              });
    // A path removed and added again to a group not walked yet while the
    // walk went on was seen twice: once is enough (either; the change asks
    // for the view again).
    out.erase(std::unique(out.begin(), out.end(),
                          [](const SharetabEntry& a, const SharetabEntry& b) {
                            return a.path == b.path;
                          }),
              out.end());
    return out;
  }

  void KeepTableMemoryAtExit() override {
    absl::MutexLock l(&mu_);
    table_.KeepMemoryAtExit();
  }
  LoadStats load_stats() const override {
    absl::ReaderMutexLock l(&mu_);
    return load_stats_;
  }
  std::size_t share_count() const override {
    absl::ReaderMutexLock l(&mu_);
    return table_.size();
  }
  std::size_t group_count() const override {
    absl::ReaderMutexLock l(&mu_);
    return table_.group_count();
  }

  absl::Status RecordMounts(const std::vector<MountRecord>& added,
                            const std::vector<MountRecord>& removed) override {
    absl::MutexLock m(&mounts_mu_);
    return mounts_->RecordMounts(added, removed);
  }
  absl::StatusOr<std::vector<MountRecord>> LoadMounts() const override {
    absl::MutexLock m(&mounts_mu_);
    return mounts_->LoadMounts();
  }

 private:
  std::vector<const Share*> ActiveSorted() const
      ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    std::vector<const Share*> v;
    for (const ShareGroup* g : table_.SortedGroups()) {
      if (!g->enabled) continue;
      for (const Share& s : g->shares) v.push_back(&s);
    }
    return SortedByPath(std::move(v));
  }

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
  absl::Status Commit(const std::vector<Step>& steps, uint64_t generation,
                      const absl::Status* written = nullptr)
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
};

template <typename Start, typename Visit>
void CatalogImpl::WalkInSlices(Start start, Visit visit,
                               absl::FunctionRef<void()> restart) const {
  std::vector<const ShareGroup*> groups;
  std::size_t gi = 0;  // the group the walk is in
  // The share of groups[gi] it stopped at (null: that group's first is
  // next), and what identifies it once the table has changed.
  const Share* last = nullptr;
  std::string last_path;
  uint64_t last_id = 0;
  uint64_t generation = 0;
  uint64_t layout = 0;
  for (bool first = true;; first = false) {
    if (!first && between_slices_) between_slices_();
    absl::ReaderMutexLock l(&mu_);
    if (first) {
      start(table_.size());
      groups = table_.SortedGroups();
      layout = table_.layout_changes();
    } else if (table_.generation() != generation) {
      // Shares were added or removed, or more. With the same groups and no
      // share moved, the groups are where they were and every share still
      // linked keeps its place: the walk goes on after the one it stopped
      // at, if that one is still there. Otherwise it starts again.
      const Share* now = last != nullptr ? table_.Find(last_path) : nullptr;
      if (table_.layout_changes() != layout ||
          (last != nullptr && (now == nullptr || now->id != last_id))) {
        restart();
        for (const ShareGroup* g : table_.SortedGroups()) {
          for (const Share& s : g->shares) visit(*g, s);
        }
        return;
      }
      last = now;
    }
    std::size_t visited = 0;
    for (; gi < groups.size(); ++gi, last = nullptr) {
      const ShareGroup& g = *groups[gi];
      auto it = last == nullptr ? g.shares.begin()
                                : std::next(g.shares.iterator_to(*last));
      for (; it != g.shares.end(); ++it) {
        visit(g, *it);
        if (++visited == read_slice_) break;
      }
      if (visited == read_slice_ && it != g.shares.end()) {
        last = &*it;
        last_path = it->path;
        last_id = it->id;
        generation = table_.generation();
        break;
      }
    }
    if (gi == groups.size()) return;
  }
}

std::size_t CatalogImpl::Validate(
    const Batch& batch, const std::vector<std::size_t>& ends,
    std::vector<Step>* steps, std::vector<std::vector<PendingInherit>>* pending,
    std::vector<OperationError>* errors, ValidationProgress* progress) {
  Overlay ov(table_, batch.ops.size());
  OptionsCache cache;
  DirectoryChecks checks(batch);
  // Resource names the batch gives, with the share that took each last.
  std::unordered_map<std::string_view, std::string_view> batch_resources;
  // Descriptions the batch gives (add-share, set-share -d), by share: a
  // later set-share without -d keeps the latest, not the table's.
  std::unordered_map<std::string_view, std::string_view> batch_descriptions;
  pending->resize(ends.size());
  std::size_t segment = 0;
  std::size_t segment_begin = 0;
  // At the end of a segment: the table-wide rules as it leaves the table.
  // True if the segment is refused: its effects stay in the overlay, so
  // the ones after it are validated again without it (ApplyRun).
  auto end_segment = [&](std::size_t end) ABSL_EXCLUSIVE_LOCKS_REQUIRED(
                         apply_mu_) ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    if (errors->empty()) {
      InheritPass(table_, *steps, end, static_cast<uint32_t>(segment), public_,
                  ov, cache, &(*pending)[segment]);
      CheckPublic(batch, segment_begin, end, ov, (*pending)[segment], errors);
    }
    if (!errors->empty()) return true;
    segment_begin = end;
    ++segment;
    return false;
  };
  while (segment < ends.size() && ends[segment] == 0) {
    if (end_segment(0)) return segment;
  }
  // The share other than `path` that has resource `res` as of the batch so
  // far, if any.
  auto resource_user = [&](std::string_view res, std::string_view path)
                           ABSL_EXCLUSIVE_LOCKS_REQUIRED(
                               apply_mu_) -> std::optional<std::string_view> {
    if (res.empty()) return std::nullopt;
    auto claimed = [&](std::string_view p) {
      if (p == path) return false;
      std::optional<Overlay::ShareState> st = ov.FindShare(p);
      return st && st->resource == res;
    };
    if (auto it = batch_resources.find(res);
        it != batch_resources.end() && claimed(it->second)) {
      return it->second;
    }
    if (auto it = resource_owner_.find(std::string(res));
        it != resource_owner_.end() && claimed(it->second)) {
      return std::string_view(it->second);
    }
    return std::nullopt;
  };
  uint64_t id = next_id_;
  steps->resize(batch.ops.size());
  for (std::size_t i = 0; i < batch.ops.size(); ++i) {
    const Operation& op = batch.ops[i];
    Step& step = (*steps)[i];
    step.op = &op;
    auto refuse = [&](std::string msg) {
      errors->push_back({i, std::move(msg)});
    };
    auto refuse_status = [&](const absl::Status& s) {
      refuse(std::string(s.message()));
    };
    auto group_missing = [&]() {
      refuse(absl::StrCat("group ", op.group, " does not exist"));
    };
    // True (and the operation refused) if `group` mirrors an exports file
    // and this batch does not come from that file.
    auto managed_elsewhere = [&](std::string_view group) {
      Overlay::Group* g = ov.FindGroup(group);
      if (g == nullptr || g->managed_by.empty() ||
          g->managed_by == batch.manager) {
        return false;
      }
      refuse(absl::StrCat("group ", ToAbsl(group), " is managed by ",
                          ToAbsl(g->managed_by),
                          " (sharemgrd --follow-exports): edit that file "
                          "instead"));
      return true;
    };
    // The share at op.path, if it is shared and (when op.group is given) in
    // op.group; otherwise the operation is refused and nullopt returned.
    auto share_of_op = [&]() -> std::optional<Overlay::ShareState> {
      std::optional<Overlay::ShareState> st = ov.FindShare(op.path);
      if (!st) {
        refuse(absl::StrCat(op.path, ": not shared"));
      } else if (!op.group.empty() && op.group != st->group) {
        refuse(absl::StrCat(op.path, ": share is in group ", ToAbsl(st->group),
                            ", not ", op.group));
        st.reset();
      } else {
        step.share_id = st->id;
      }
      return st;
    };

    switch (op.type) {
      case Op::kCreateGroup: {
        if (absl::Status s = ValidateGroupName(op.group); !s.ok()) {
          refuse_status(s);
          break;
        }
        if (ov.FindGroup(op.group) != nullptr) {
          refuse(absl::StrCat("group ", op.group, " already exists"));
          break;
        }
        // A group with bad options is still created in the overlay, so the
        // batch's later operations on it are not refused in cascade.
        absl::StatusOr<std::shared_ptr<const ShareOptions>> compiled =
            cache.Get(op.options);
        ov.CreateGroup(op.group, op.options,
                       compiled.ok() ? *compiled : nullptr);
        if (!compiled.ok()) {
          refuse(absl::StrCat("group ", op.group, ": ",
                              compiled.status().message()));
          break;
        }
        step.group = std::make_unique<ShareGroup>();
        step.group->name = op.group;
        step.group->enabled = true;
        step.group->options = op.options;
        step.group->compiled = *std::move(compiled);
        break;
      }
      case Op::kDeleteGroup: {
        Overlay::Group* g = ov.FindGroup(op.group);
        if (g == nullptr) {
          group_missing();
          break;
        }
        if (managed_elsewhere(op.group)) break;
        if (g->count > 0 && !op.force) {
          refuse(absl::StrCat("group ", op.group, " has ", g->count,
                              g->count == 1 ? " share" : " shares",
                              "; use -f"));
          break;
        }
        step.group_has_shares = g->count > 0;
        ov.DeleteGroup(op.group);
        break;
      }
      case Op::kEnableGroup:
      case Op::kDisableGroup: {
        Overlay::Group* g = ov.FindGroup(op.group);
        if (g == nullptr) {
          group_missing();
          break;
        }
        bool enable = op.type == Op::kEnableGroup;
        step.noop = g->enabled == enable;
        g->enabled = enable;
        break;
      }
      case Op::kAddShare: {
        if (absl::Status s = internal::ValidateShareFields(op.path, op.resource,
                                                           op.description);
            !s.ok()) {
          refuse_status(s);
          break;
        }
        if (ov.FindGroup(op.group) == nullptr) {
          group_missing();
          break;
        }
        if (managed_elsewhere(op.group)) break;
        bool touched = false;
        if (std::optional<Overlay::ShareState> s =
                ov.FindShare(op.path, &touched)) {
          refuse(absl::StrCat(op.path, ": already shared (group ",
                              ToAbsl(s->group), ")"));
          break;
        }
        if (absl::Status s = internal::CheckShareLimits(op.path, op.resource,
                                                        op.description);
            !s.ok()) {
          refuse_status(s);
          break;
        }
        if (std::optional<std::string_view> user =
                resource_user(op.resource, op.path)) {
          refuse(internal::ResourceTakenMessage(op.path, op.resource, *user));
          break;
        }
        absl::StatusOr<DirectoryPlace> place = checks.Get(i);
        if (!place.ok()) {
          refuse_status(place.status());
          break;
        }
        const uint64_t dev = place->dev;
        if (absl::Status s = ov.CheckNesting(op.path, dev); !s.ok()) {
          refuse_status(s);
          break;
        }
        ov.AddShare(op.path, op.group, dev, op.options, op.resource,
                    static_cast<uint32_t>(segment), id);
        if (!op.resource.empty()) batch_resources[op.resource] = op.path;
        // An empty description needs an entry only to shadow one the
        // table or an earlier operation gives the path (removed, then
        // added again); without it the lookup below finds "" anyway. Most
        // adds have none: no map insert for them.
        // Untouched by the batch, the path is not in the table either
        // (FindShare looked there).
        if (!op.description.empty() ||
            (touched && table_.Find(op.path) != nullptr) ||
            batch_descriptions.count(op.path) != 0) {
          batch_descriptions[op.path] = op.description;
        }
        std::shared_ptr<const ShareOptions> compiled;
        if (!op.options.empty()) {
          absl::StatusOr<std::shared_ptr<const ShareOptions>> c =
              cache.Get(op.options);
          if (!c.ok()) {
            refuse(absl::StrCat(op.path, ": ", c.status().message()));
            break;
          }
          compiled = *std::move(c);
        }
        step.share = std::make_unique<Share>();
        step.share->id = id++;
        step.share->dev = dev;
        step.share->mount_root = place->mount_root;
        step.share->path = op.path;
        step.share->texts = ShareTexts::Make(op.resource, op.description);
        step.share->options = op.options;
        step.share->compiled = std::move(compiled);
        break;
      }
      case Op::kRemoveShare: {
        std::optional<Overlay::ShareState> s = share_of_op();
        if (!s) break;
        if (managed_elsewhere(s->group)) break;
        ov.RemoveShare(op.path);
        break;
      }
      case Op::kMoveShare: {
        std::optional<Overlay::ShareState> s = ov.FindShare(op.path);
        if (!s) {
          refuse(absl::StrCat(op.path, ": not shared"));
          break;
        }
        if (ov.FindGroup(op.group) == nullptr) {
          group_missing();
          break;
        }
        if (managed_elsewhere(s->group) || managed_elsewhere(op.group)) break;
        step.share_id = s->id;
        step.noop = s->group == op.group;
        if (!step.noop) ov.MoveShare(op.path, op.group);
        break;
      }
      case Op::kSetOptions: {
        if (ov.FindGroup(op.group) == nullptr) {
          group_missing();
          break;
        }
        if (managed_elsewhere(op.group)) break;
        std::optional<Overlay::ShareState> st;
        if (!op.path.empty() && !(st = share_of_op())) break;
        std::shared_ptr<const ShareOptions> compiled;
        if (op.path.empty() || !op.options.empty()) {
          absl::StatusOr<std::shared_ptr<const ShareOptions>> c =
              cache.Get(op.options);
          if (!c.ok()) {
            refuse(absl::StrCat(op.path.empty() ? "group " + op.group : op.path,
                                ": ", c.status().message()));
            break;
          }
          compiled = *std::move(c);
        }
        // The same text again changes nothing (a configuration tool that
        // applies its settings on every run): no new generation, no row
        // written, and no change reported for the group's shares, which
        // would have their kernel entries rewritten.
        step.noop = st ? st->own == op.options && !st->replaces
                       : ov.FindGroup(op.group)->options == op.options;
        if (step.noop) break;
        StepTexts& t = step.Texts();
        t.text = op.options;
        t.compiled = compiled;
        SetOwnOptions(ov, op.group, op.path, op.options, std::move(compiled));
        break;
      }
      case Op::kModifyShare: {
        std::optional<Overlay::ShareState> st = share_of_op();
        if (!st) break;
        if (!op.set_options && !op.set_description && !op.set_resource) {
          refuse(absl::StrCat(op.path, ": nothing to change"));
          break;
        }
        std::string_view description;
        if (op.set_description) {
          description = op.description;
        } else if (auto it = batch_descriptions.find(op.path);
                   it != batch_descriptions.end()) {
          description = it->second;  // added or described earlier
        } else if (const Share* current = table_.Find(op.path)) {
          description = current->description();
        }
        std::string_view resource =
            op.set_resource ? std::string_view(op.resource) : st->resource;
        if (absl::Status s =
                internal::ValidateShareFields(op.path, resource, description);
            !s.ok()) {
          refuse_status(s);
          break;
        }
        if (absl::Status s =
                internal::CheckShareLimits(op.path, resource, description);
            !s.ok()) {
          refuse_status(s);
          break;
        }
        if (std::optional<std::string_view> user =
                resource_user(resource, op.path)) {
          refuse(internal::ResourceTakenMessage(op.path, resource, *user));
          break;
        }
        std::shared_ptr<const ShareOptions> compiled;
        if (op.set_options && !op.options.empty()) {
          absl::StatusOr<std::shared_ptr<const ShareOptions>> c =
              cache.Get(op.options);
          if (!c.ok()) {
            refuse(absl::StrCat(op.path, ": ", c.status().message()));
            break;
          }
          compiled = *std::move(c);
        }
        StepTexts& t = step.Texts();
        t.share_texts = ShareTexts::Make(resource, description);
        st->resource =
            op.set_resource ? std::string_view(op.resource) : st->resource;
        ov.UpdateShare(op.path, *st);
        if (op.set_resource && !op.resource.empty()) {
          batch_resources[op.resource] = op.path;
        }
        if (op.set_description) batch_descriptions[op.path] = op.description;
        if (op.set_options) {
          t.text = op.options;
          t.compiled = compiled;
          SetOwnOptions(ov, st->group, op.path, op.options,
                        std::move(compiled));
        }
        break;
      }
      case Op::kUnsetOption: {
        Overlay::Group* g = ov.FindGroup(op.group);
        if (g == nullptr) {
          group_missing();
          break;
        }
        std::string_view own = g->options;
        std::string who = absl::StrCat("group ", op.group);
        if (!op.path.empty()) {
          std::optional<Overlay::ShareState> st = share_of_op();
          if (!st) break;
          own = st->own;
          who = op.path;
        }
        if (!op.path.empty() && op.options == "all") {
          if (own.empty()) {
            refuse(absl::StrCat(who,
                                ": has no options of its own (all come "
                                "from group ",
                                op.group, ")"));
            break;
          }
          StepTexts& t = step.Texts();
          t.text.clear();
          SetOwnOptions(ov, op.group, op.path, t.text, nullptr);
          break;
        }
        absl::StatusOr<std::shared_ptr<const ShareOptions>> before =
            cache.Get(own);
        if (!before.ok()) {
          refuse(absl::StrCat(who, ": ", before.status().message()));
          break;
        }
        absl::StatusOr<ShareOptions> after =
            RemoveOptionProperty(**before, op.options);
        if (!after.ok()) {
          std::string why(after.status().message());
          if (absl::IsNotFound(after.status())) {
            absl::StrAppend(&why, op.path.empty()
                                      ? " in the group's options"
                                      : " in the share's own options");
          }
          refuse(absl::StrCat(who, ": ", why));
          break;
        }
        if (op.path.empty() && !OpensReadWriteToAll(**before) &&
            OpensReadWriteToAll(*after)) {
          refuse(absl::StrCat(
              who, ": removing ", op.options,
              " would make its shares read-write to every client; write "
              "the options you want with set -o (\"rw\" says so explicitly)"));
          break;
        }
        StepTexts& t = step.Texts();
        t.text = after->Canonical();
        if (op.path.empty() || !t.text.empty()) {
          absl::StatusOr<std::shared_ptr<const ShareOptions>> c =
              cache.Get(t.text);
          if (!c.ok()) {
            refuse(absl::StrCat(who, ": ", c.status().message()));
            break;
          }
          t.compiled = *std::move(c);
        }
        SetOwnOptions(ov, op.group, op.path, t.text, t.compiled);
        break;
      }
      case Op::kManageGroup: {
        Overlay::Group* g = ov.FindGroup(op.group);
        if (g == nullptr) {
          group_missing();
          break;
        }
        if (batch.manager.empty() ||
            (!op.path.empty() && op.path != batch.manager)) {
          refuse(absl::StrCat("group ", op.group,
                              ": only the daemon's exports follower marks "
                              "groups as managed"));
          break;
        }
        if (managed_elsewhere(op.group)) break;
        step.noop = g->managed_by == op.path;
        g->managed_by = op.path;
        break;
      }
    }
    if (!errors->empty()) {
      // Nothing will be linked; free what was prepared as we go.
      step.share.reset();
      step.group.reset();
      // Not the text: the overlay may view it.
      if (step.texts != nullptr) step.texts->compiled.reset();
    } else {
      if (step.op->type == Op::kManageGroup) step.Texts().text = op.path;
      if (progress != nullptr) progress->Publish(i + 1);
    }
    while (segment < ends.size() && ends[segment] == i + 1) {
      if (end_segment(i + 1)) return segment;
    }
  }
  while (segment < ends.size()) {  // empty segments at the end
    if (end_segment(batch.ops.size())) return segment;
  }
  return ends.size();
}

void CatalogImpl::CheckPublic(const Batch& batch, std::size_t begin,
                              std::size_t end, Overlay& ov,
                              const std::vector<PendingInherit>& pending,
                              std::vector<OperationError>* errors) {
  std::vector<std::string_view> pubs;
  for (const PendingInherit& p : pending) {
    if (p.is_public) pubs.push_back(p.path);
  }
  for (const std::string& path : public_) {
    // Its state as the batch leaves it is in `pending` if the batch
    // touched it (public_ holds one or two shares: a scan is fine).
    bool decided = false;
    for (const PendingInherit& p : pending) decided |= p.path == path;
    if (!decided && ov.FindShare(path)) pubs.push_back(path);
  }
  if (pubs.size() <= 1) return;
  std::sort(pubs.begin(), pubs.end());
  // Blame the segment's last operation that names one of them (or its last
  // one).
  std::size_t index = end > begin ? end - 1 : begin;
  std::string_view culprit = pubs.back();
  for (std::size_t i = end; i-- > begin;) {
    const Operation& op = batch.ops[i];
    auto it = std::find(pubs.begin(), pubs.end(), op.path);
    if (!op.path.empty() && it != pubs.end()) {
      index = i;
      culprit = *it;
      break;
    }
  }
  std::string_view other = culprit == pubs.front() ? pubs[1] : pubs.front();
  errors->push_back(
      {index,
       absl::StrCat(ToAbsl(culprit), ": a second public share (", ToAbsl(other),
                    " is public; share_nfs allows one public share)")});
}

void CatalogImpl::RebuildRuleIndexes() {
  rule_indexes_stale_ = true;
  resource_owner_.clear();
  resource_of_.clear();
  public_.clear();
  // Called with apply_mu_ held (RebuildRuleIndexes requires it); the
  // analysis does not follow the lock into the lambda.
  table_.ForEachShare([&](const Share& s) ABSL_NO_THREAD_SAFETY_ANALYSIS {
    if (!s.resource().empty()) {
      resource_owner_.emplace(s.resource(), s.path);
      resource_of_.emplace(s.path, s.resource());
    }
    if (s.effective_options()->public_fh) public_.push_back(s.path);
  });
  rule_indexes_stale_ = false;
}

void CatalogImpl::UpdateRuleIndexes(const BatchResult& result,
                                    absl::Span<const Share* const> touched,
                                    absl::Span<const Share* const> dead_set) {
  if (!result.changes_complete) {
    rule_indexes_stale_ = true;
    return;
  }
  try {
    absl::ReaderMutexLock l(&mu_);
    auto forget =
        [&](const std::string& path) ABSL_EXCLUSIVE_LOCKS_REQUIRED(apply_mu_) {
          if (auto it = resource_of_.find(path); it != resource_of_.end()) {
            auto owner = resource_owner_.find(it->second);
            if (owner != resource_owner_.end() && owner->second == path) {
              resource_owner_.erase(owner);
            }
            resource_of_.erase(it);
          }
          public_.erase(std::remove(public_.begin(), public_.end(), path),
                        public_.end());
        };
    // The removed shares first: a path removed and added again ends with
    // its new share's entries.
    for (const Share* d : dead_set) forget(d->path);
    for (const Share* s : touched) {
      forget(s->path);
      // Touched, then removed by the same batch: forgotten above.
      if (!dead_set.empty() &&
          std::binary_search(dead_set.begin(), dead_set.end(), s)) {
        continue;
      }
      if (!s->resource().empty()) {
        resource_owner_.emplace(s->resource(), s->path);
        resource_of_.emplace(s->path, s->resource());
      }
      if (s->effective_options()->public_fh) public_.push_back(s->path);
    }
  } catch (const std::bad_alloc&) {
    rule_indexes_stale_ = true;  // the next Apply rebuilds them
  }
}

absl::Status CatalogImpl::Commit(const std::vector<Step>& steps,
                                 uint64_t generation,
                                 const absl::Status* written) {
  if (written == nullptr) {
    if (absl::Status s = store_->Begin(); !s.ok()) return s;
  }
  absl::Status status;
  // An allocation failure must not leave the transaction open: every later
  // Begin() would fail ("transaction within a transaction").
  try {
    status = written != nullptr ? *written : WriteSteps(steps);
    if (status.ok()) status = store_->SaveGeneration(generation);
    if (status.ok()) status = store_->Commit();
  } catch (const std::bad_alloc&) {
    status =
        absl::ResourceExhaustedError("out of memory while writing the batch");
  }
  if (!status.ok()) store_->Rollback();
  return status;
}

absl::Status CatalogImpl::WriteSteps(const std::vector<Step>& steps) {
  StepWriter w(*store_);
  for (const Step& step : steps) {
    if (absl::Status s = w.Write(step); !s.ok()) return s;
  }
  return w.Finish();
}

bool CatalogImpl::Link(std::vector<Step>& steps, std::size_t begin,
                       std::size_t end, std::vector<PendingInherit>& pending,
                       uint64_t gen,
                       std::vector<std::unique_ptr<Share>>* dead_shares,
                       std::vector<std::unique_ptr<ShareGroup>>* dead_groups,
                       TouchedShares* touched) {
  bool changed = false;
  ShareGroup* last_group = nullptr;  // the group the last add went to
  // Adds link into random buckets of the path index: each is fetched
  // kPrefetchAhead adds before its insert.
  constexpr std::size_t kPrefetchAhead = 8;
  for (std::size_t i = begin; i < end; ++i) {
    if (i + kPrefetchAhead < end) {
      const Step& ahead = steps[i + kPrefetchAhead];
      if (!ahead.noop && ahead.share != nullptr &&
          ahead.op->type == Op::kAddShare) {
        table_.PrefetchBucket(ahead.share->path);
      }
    }
    Step& step = steps[i];
    if (step.noop) continue;
    changed = true;
    const Operation& op = *step.op;
    switch (op.type) {
      case Op::kCreateGroup:
        table_.AddGroup(std::move(step.group));
        break;
      case Op::kDeleteGroup: {
        last_group = nullptr;
        ShareGroup* g = table_.FindGroup(op.group);
        while (!g->shares.empty()) {
          dead_shares->push_back(table_.Remove(g->shares.front().path));
        }
        dead_groups->push_back(table_.RemoveGroup(op.group));
        break;
      }
      case Op::kEnableGroup:
      case Op::kDisableGroup: {
        ShareGroup* g = table_.FindGroup(op.group);
        g->enabled = op.type == Op::kEnableGroup;
        for (Share& s : g->shares) {
          s.generation = gen;
          touched->Note(&s);
        }
        break;
      }
      case Op::kAddShare:
        // Adds in a row mostly name one group.
        if (last_group == nullptr || last_group->name != op.group) {
          last_group = table_.FindGroup(op.group);
        }
        step.share->group = last_group;
        step.share->generation = gen;
        touched->Note(step.share.get());
        // Validate refused a path the table or the batch already has, so
        // Insert takes it. If it ever hands one back, the store has
        // committed a path twice: say so and go on serving the table's
        // share. The object is left alive (touched points at it), not
        // counted as removed.
        if (std::unique_ptr<Share> twice =
                table_.Insert(std::move(step.share))) {
          static constexpr char kMessage[] =
              "libshare: a batch committed a share whose path the table "
              "already has (a bug); the next start refuses the store until "
              "one of the two rows is deleted\n";
          (void)!::write(2, kMessage, sizeof kMessage - 1);
          (void)twice.release();
        }
        break;
      case Op::kRemoveShare:
        dead_shares->push_back(table_.Remove(op.path));
        break;
      case Op::kMoveShare: {
        Share* s = table_.FindMutable(op.path);
        table_.MoveToGroup(s, table_.FindGroup(op.group));
        s->generation = gen;
        touched->Note(s);
        break;
      }
      case Op::kModifyShare: {
        Share* s = table_.FindMutable(op.path);
        if (op.set_options) {
          s->options.swap(step.texts->text);
          s->compiled.swap(step.texts->compiled);
        }
        s->texts.swap(step.texts->share_texts);
        s->generation = gen;
        touched->Note(s);
        break;
      }
      case Op::kSetOptions:
      case Op::kUnsetOption: {
        // Swaps, so the old values are freed with `steps`, after unlock.
        if (op.path.empty()) {
          ShareGroup* g = table_.FindGroup(op.group);
          g->options.swap(step.texts->text);
          g->compiled.swap(step.texts->compiled);
          for (Share& s : g->shares) {
            if (!s.options.empty()) continue;
            s.generation = gen;
            touched->Note(&s);
          }
        } else {
          Share* s = table_.FindMutable(op.path);
          s->options.swap(step.texts->text);
          s->compiled.swap(step.texts->compiled);
          s->generation = gen;
          touched->Note(s);
        }
        break;
      }
      case Op::kManageGroup:
        // Swaps, so that linking allocates nothing. No share changes.
        table_.FindGroup(op.group)->managed_by.swap(step.texts->text);
        break;
    }
  }
  // Effective options last, from the table as the batch left it.
  for (PendingInherit& p : pending) {
    Share* s = table_.FindMutable(p.path);
    if (s == nullptr) continue;
    const bool differs =
        (s->inherited == nullptr) != (p.inherited == nullptr) ||
        (s->inherited != nullptr && s->inherited->text != p.inherited->text);
    s->replaces_group = p.replaces;
    s->inherited.swap(p.inherited);
    if (differs) {
      s->generation = gen;
      touched->Note(s);
    }
  }
  return changed;
}

// The shares of `owned` in address order (for binary_search).
std::vector<const Share*> SortedShares(
    absl::Span<const std::unique_ptr<Share>> owned) {
  std::vector<const Share*> out;
  out.reserve(owned.size());
  for (const auto& s : owned) out.push_back(s.get());
  std::sort(out.begin(), out.end());
  return out;
}

// The change list of a committed batch (the shares it touched, and those
// it removed in address order: SortedShares): each path once, in path order.
// A path both removed and present afterwards (removed and re-added) is
// kChanged; a share added by the batch (id >= first_new_id) is kAdded even
// if later steps changed it. Only standard containers: a bad_alloc halfway
// leaves nothing inconsistent behind.
std::vector<ShareChange> ChangesOf(absl::Span<const Share* const> touched,
                                   absl::Span<const Share* const> dead_set,
                                   uint64_t first_new_id) {
  std::vector<const Share*> all;
  all.reserve(dead_set.size() + touched.size());
  all.insert(all.end(), dead_set.begin(), dead_set.end());
  for (const Share* s : touched) {
    // Added or changed, then removed: reported once, as removed.
    if (!std::binary_search(dead_set.begin(), dead_set.end(), s)) {
      all.push_back(s);
    }
  }
  // Dead shares first for each path (stable), so a later live share of the
  // same path turns the removal into a change. A batch of adds in path
  // order (a sorted list of datasets) is in order already: one pass.
  const auto by_path = [](const Share* x, const Share* y) {
    return x->path < y->path;
  };
  if (!std::is_sorted(all.begin(), all.end(), by_path)) {
    std::stable_sort(all.begin(), all.end(), by_path);
  }
  std::vector<ShareChange> out;
  ReserveHuge(out, all.size());
  for (const Share* s : all) {
    const bool is_dead =
        std::binary_search(dead_set.begin(), dead_set.end(), s);
    if (out.empty() || out.back().path != s->path) {
      ShareChange c;
      c.kind = is_dead                 ? ShareChange::Kind::kRemoved
               : s->id >= first_new_id ? ShareChange::Kind::kAdded
                                       : ShareChange::Kind::kChanged;
      c.path = s->path;
      c.id = s->id;
      c.active = !is_dead && s->active();
      out.push_back(std::move(c));
      continue;
    }
    ShareChange& c = out.back();
    if (is_dead) continue;
    if (c.kind == ShareChange::Kind::kRemoved)
      c.kind = ShareChange::Kind::kChanged;
    c.id = s->id;
    c.active = s->active();
  }
  return out;
}

BatchResult CatalogImpl::Apply(const Batch& batch) {
  BatchResult result;
  const Batch* one = &batch;
  ApplyGroup(absl::MakeConstSpan(&one, 1), absl::MakeSpan(&result, 1));
  return result;
}

void CatalogImpl::ApplyGroup(absl::Span<const Batch* const> batches,
                             absl::Span<BatchResult> results) {
  // Runs of batches that can share a transaction, in order.
  std::size_t begin = 0;
  while (begin < batches.size()) {
    auto alone = [](const Batch& b) { return b.dry_run || b.ops.empty(); };
    std::size_t end = begin + 1;
    if (!alone(*batches[begin])) {
      while (end < batches.size() && !alone(*batches[end]) &&
             batches[end]->manager == batches[begin]->manager) {
        ++end;
      }
    }
    // No exception leaves the library: running out of memory before the
    // commit is a refusal that changes nothing.
    try {
      ApplyRun(batches.subspan(begin, end - begin),
               results.subspan(begin, end - begin));
    } catch (const std::bad_alloc&) {
      const uint64_t gen = generation();
      for (std::size_t i = begin; i < end; ++i) {
        results[i] = BatchResult();
        results[i].commit_error = "out of memory while preparing the batch";
        results[i].generation = gen;
      }
    }
    begin = end;
  }
}

void CatalogImpl::ApplyRun(absl::Span<const Batch* const> run,
                           absl::Span<BatchResult> results) {
  absl::MutexLock a(&apply_mu_);
  using Clock = std::chrono::steady_clock;
  auto ms = [](Clock::time_point from, Clock::time_point to) {
    return std::chrono::duration<double, std::milli>(to - from).count();
  };
  const Clock::time_point t_start = Clock::now();
  Clock::time_point t_validated;
  // The batches still in the group, their operations one after another
  // (copied only for a group of two or more) and where each ends.
  std::vector<std::size_t> live(run.size());
  for (std::size_t i = 0; i < run.size(); ++i) live[i] = i;
  Batch combined;
  const Batch* batch = run.front();
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
  uint64_t next_generation = 0;
  // A big batch alone: its steps are written to the store on a second
  // thread while Validate goes on with the operations after them, so the
  // SQLite inserts (half of such a batch's time) overlap its validation.
  // The transaction is begun then, not after validation: a refusal rolls
  // it back, and nothing is committed before the whole batch is valid.
  ValidationProgress progress;
  absl::Status written;
  std::thread writer;
  struct WriterGuard {
    ValidationProgress& progress;
    std::thread& writer;
    Store& store;
    bool committed = false;
    ~WriterGuard() {
      if (!writer.joinable()) return;
      progress.Finish();
      writer.join();
      if (!committed) store.Rollback();
    }
  } guard{progress, writer, *store_};
  if (run.size() == 1 && !run.front()->dry_run &&
      run.front()->ops.size() >= kWriteAheadOps) {
    try {
      const std::size_t reserve_bytes =
          std::min(run.front()->ops.size() * kWriterReservePerOp,
                   kWriterReserveMax);
      writer = std::thread(
          [&progress, &steps, &written, store = store_.get(),
           reserve_bytes] {
            absl::Status st;
            try {
              // SQLite's page cache grows on this thread as the rows go
              // in: made resident in one go (libshare/heap_reserve.h).
              HeapReserve reserve(reserve_bytes);
              st = store->Begin();
              StepWriter w(*store);
              std::size_t i = 0;
              while (st.ok()) {
                const std::size_t n = progress.Wait(i);
                if (n <= i) {  // Validate finished
                  st = w.Finish();
                  break;
                }
                for (; i < n && st.ok(); ++i) st = w.Write(steps[i]);
              }
            } catch (const std::bad_alloc&) {
              st = absl::ResourceExhaustedError(
                  "out of memory while writing the batch");
            }
            written = std::move(st);
          });
    } catch (const std::system_error&) {
      // No thread: validated first, then written, as a small batch.
    }
  }
  {
    // apply_mu_ already excludes the only writer; the shared lock is for
    // the annotations and costs readers nothing.
    absl::ReaderMutexLock r(&mu_);
    if (rule_indexes_stale_) RebuildRuleIndexes();
    for (;;) {
      ends.clear();
      if (live.size() > 1) {
        combined.ops.clear();
        combined.manager = run.front()->manager;
        for (std::size_t k : live) {
          combined.ops.insert(combined.ops.end(), run[k]->ops.begin(),
                              run[k]->ops.end());
          ends.push_back(combined.ops.size());
        }
        batch = &combined;
      } else {
        batch = run[live.front()];
        ends.push_back(batch->ops.size());
      }
      steps.clear();
      pending.clear();
      std::vector<OperationError> errors;
      const std::size_t refused =
          Validate(*batch, ends, &steps, &pending, &errors,
                   writer.joinable() ? &progress : nullptr);
      if (refused == ends.size()) break;
      // Refused: its own errors, numbered within its own batch; the others
      // are validated again without it.
      const std::size_t first = refused == 0 ? 0 : ends[refused - 1];
      BatchResult& result = results[live[refused]];
      for (OperationError& e : errors) e.index -= first;
      result.errors = std::move(errors);
      result.generation = table_.generation();
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(refused));
      if (live.empty()) return;
    }
    if (batch->dry_run) {
      results.front().generation = table_.generation();
      return;
    }
    t_validated = Clock::now();
    // The table's generation once every segment that changes something
    // has its own.
    next_generation = table_.generation();
    for (std::size_t k = 0, first = 0; k < ends.size(); first = ends[k++]) {
      for (std::size_t i = first; i < ends[k]; ++i) {
        if (!steps[i].noop) {
          ++next_generation;
          break;
        }
      }
    }
    std::size_t adds = 0;
    std::size_t removed_shares = 0;
    std::size_t removed_groups = 0;
    for (const Step& s : steps) {
      adds += s.share != nullptr;
      if (s.noop) continue;
      if (s.op->type == Op::kRemoveShare) ++removed_shares;
      if (s.op->type == Op::kDeleteGroup) {
        ++removed_groups;
        if (const ShareGroup* g = table_.FindGroup(s.op->group)) {
          removed_shares += g->shares.size();
        }
      }
    }
    // Shares this batch adds to a group it then deletes.
    if (removed_groups > 0) removed_shares += adds;
    // Shares Link reports as added or changed: a group operation reports
    // the group's shares, at most those it has now plus this batch's adds.
    // A group also holds the shares this batch moves into it before the
    // group operation.
    std::size_t moves = 0;
    for (const Step& s : steps) {
      moves += !s.noop && s.op->type == Op::kMoveShare;
    }
    std::size_t touches = adds;
    for (const Step& s : steps) {
      if (s.noop) continue;
      switch (s.op->type) {
        case Op::kMoveShare:
        case Op::kModifyShare:
          ++touches;
          break;
        case Op::kSetOptions:
        case Op::kUnsetOption:
        case Op::kEnableGroup:
        case Op::kDisableGroup:
          if (!s.op->path.empty()) {
            ++touches;
          } else if (const ShareGroup* g = table_.FindGroup(s.op->group)) {
            touches += g->shares.size() + adds + moves;
          } else {
            touches += adds + moves;
          }
          break;
        default:
          break;
      }
    }
    for (const std::vector<PendingInherit>& p : pending) touches += p.size();
    ReserveHuge(touched.shares, touches);
    buckets = table_.PrepareCapacity(table_.size() + adds);
    // Room for what Link removes, so that linking after the commit does
    // not allocate for it.
    dead_shares.reserve(removed_shares);
    dead_groups.reserve(removed_groups);
    touched_ends.reserve(ends.size());
    dead_ends.reserve(ends.size());
  }
  // Per segment: the first id its adds got (ids are given in order), so
  // that a share an earlier segment added is "changed" in a later one.
  std::vector<uint64_t> first_ids;
  first_ids.reserve(ends.size());
  uint64_t id = next_id_;
  for (std::size_t k = 0, first = 0; k < ends.size(); first = ends[k++]) {
    first_ids.push_back(id);
    for (std::size_t i = first; i < ends[k]; ++i)
      id += steps[i].share != nullptr;
  }
  const absl::Status* ahead = nullptr;
  if (writer.joinable()) {
    progress.Finish();
    writer.join();
    ahead = &written;
    guard.committed = true;  // Commit commits or rolls back
  }
  if (absl::Status s = Commit(steps, next_generation, ahead); !s.ok()) {
    // Every batch of the transaction fails; nothing changed.
    const uint64_t gen = generation();
    for (std::size_t k : live) {
      results[k].commit_error = std::string(s.message());
      results[k].generation = gen;
    }
    return;
  }
  commits_.fetch_add(1);
  const Clock::time_point t_committed = Clock::now();
  for (const Step& s : steps) {
    if (s.share != nullptr) next_id_ = std::max(next_id_, s.share->id + 1);
  }

  {
    absl::WriterMutexLock w(&mu_);
    // The store has committed: a table that stopped half-way would serve a
    // state that is neither the old one nor the new one. Stop instead; the
    // next start loads the committed state.
    try {
      buckets = table_.InstallCapacity(std::move(buckets));
      // Segment by segment, each with its own generation.
      for (std::size_t k = 0, first = 0; k < ends.size(); first = ends[k++]) {
        uint64_t gen = table_.generation() + 1;
        const bool changed = Link(steps, first, ends[k], pending[k], gen,
                                  &dead_shares, &dead_groups, &touched);
        if (changed) table_.set_generation(gen);
        results[live[k]].changed = changed;
        results[live[k]].generation = table_.generation();
        touched_ends.push_back(touched.shares.size());
        dead_ends.push_back(dead_shares.size());
      }
    } catch (const std::bad_alloc&) {
      static constexpr char kMessage[] =
          "libshare: out of memory after a commit; the in-memory table "
          "cannot follow the store; aborting (a restart loads it)\n";
      (void)!::write(2, kMessage, sizeof kMessage - 1);
      std::abort();
    }
  }
  const Clock::time_point t_linked = Clock::now();
  // apply_mu_ is still held: no other writer can change the shares read
  // here, and removed ones live in dead_shares until the function ends.
  // Out of memory now costs the report, not the committed change.
  for (std::size_t k = 0, first = 0; k < ends.size(); first = ends[k++]) {
    BatchResult& result = results[live[k]];
    result.applied = ends[k] - first;
    try {
      if (touched.overflow) throw std::bad_alloc();  // see TouchedShares
      absl::Span<const Share* const> t(touched.shares);
      absl::Span<const std::unique_ptr<Share>> d(dead_shares);
      const std::size_t t0 = k == 0 ? 0 : touched_ends[k - 1];
      const std::size_t d0 = k == 0 ? 0 : dead_ends[k - 1];
      const std::vector<const Share*> dead_set =
          SortedShares(d.subspan(d0, dead_ends[k] - d0));
      result.changes = ChangesOf(t.subspan(t0, touched_ends[k] - t0), dead_set,
                                 first_ids[k]);
      UpdateRuleIndexes(result, t.subspan(t0, touched_ends[k] - t0), dead_set);
    } catch (const std::bad_alloc&) {
      result.changes.clear();
      result.changes_complete = false;
      UpdateRuleIndexes(result, {}, {});
    }
  }
  BatchResult::Times times;
  times.validate_ms = ms(t_start, t_validated);
  times.commit_ms = ms(t_validated, t_committed);
  times.link_ms = ms(t_committed, t_linked);
  times.changes_ms = ms(t_linked, Clock::now());
  for (std::size_t k : live) results[k].times = times;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Catalog>> Catalog::Open(const Config& config) {
  absl::StatusOr<std::unique_ptr<Store>> store =
      Store::Open(config.db_path, config.busy_timeout_ms);
  if (!store.ok()) return store.status();
  // A batch's commit, or a single change's, never waits for a checkpoint
  // (Store::CheckpointInBackground). Best effort: without the thread,
  // SQLite's automatic checkpoint stays, in the commits, as before.
  (void)(*store)->CheckpointInBackground();
  absl::StatusOr<std::unique_ptr<Store>> mounts =
      Store::Open(config.db_path, config.busy_timeout_ms);
  if (!mounts.ok()) return mounts.status();
  auto catalog =
      std::make_unique<CatalogImpl>(*std::move(store), *std::move(mounts),
                                    config.read_slice, config.between_slices);
  // What beside_load throws is thrown here, after the join, as if it had
  // run on this thread.
  std::exception_ptr thrown;
  std::thread beside;
  if (config.beside_load) {
    try {
      beside = std::thread([&config, &thrown] {
        try {
          config.beside_load();
        } catch (...) {
          thrown = std::current_exception();
        }
      });
    } catch (const std::system_error&) {
      config.beside_load();  // no thread: before the load, on this one
    } catch (const std::bad_alloc&) {
      config.beside_load();
    }
  }
  struct Join {
    std::thread& t;
    ~Join() {
      if (t.joinable()) t.join();
    }
  };
  absl::Status loaded;
  {
    Join join{beside};
    loaded = catalog->Load(config.load_threads);
  }
  if (thrown) std::rethrow_exception(thrown);
  if (!loaded.ok()) return loaded;
  return catalog;
}

}  // namespace libshare
