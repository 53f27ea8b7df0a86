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
#include "libshare/catalog.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <memory_resource>
#include <new>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "internal_text.h"
#include "libshare/dir_walk.h"
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
    std::size_t count = 0;  // shares in the group
  };
  struct ShareState {
    bool exists = false;
    std::string_view group;
    uint64_t dev = 0;
  };

  Overlay(const ShareTable& table, std::size_t ops) : table_(table) {
    shares_.reserve(ops);
  }
  Overlay(const Overlay&) = delete;
  Overlay& operator=(const Overlay&) = delete;

  // The group's state, or nullptr if it does not exist.
  Group* FindGroup(std::string_view name) {
    auto it = groups_.find(ToAbsl(name));
    if (it == groups_.end()) {
      const ShareGroup* g = table_.FindGroup(name);
      if (g == nullptr) return nullptr;
      // The key views the caller's name (a batch operation's or a table
      // group's), which outlives the overlay.
      it = groups_
               .emplace(ToAbsl(name), Group{true, g->enabled, g->shares.size()})
               .first;
    }
    return it->second.exists ? &it->second : nullptr;
  }

  void CreateGroup(std::string_view name) {
    groups_[ToAbsl(name)] = Group{true, true, 0};
  }

  // Removes the group and every share in it.
  void DeleteGroup(std::string_view name) {
    std::vector<std::string_view> victims;
    if (const ShareGroup* g = table_.FindGroup(name)) {
      for (const Share& s : g->shares) {
        if (shares_.find(ToAbsl(s.path)) == shares_.end()) {
          victims.push_back(s.path);
        }
      }
    }
    for (const auto& [path, st] : shares_) {
      if (st.exists && st.group == name) {
        victims.push_back(std::string_view(path.data(), path.size()));
      }
    }
    for (std::string_view p : victims) RemoveShare(p);
    groups_[ToAbsl(name)] = Group{false, true, 0};
  }

  std::optional<ShareState> FindShare(std::string_view path) const {
    auto it = shares_.find(ToAbsl(path));
    if (it != shares_.end()) {
      if (!it->second.exists) return std::nullopt;
      return it->second;
    }
    const Share* s = table_.Find(path);
    if (s == nullptr) return std::nullopt;
    return ShareState{true, s->group->name, s->dev};
  }

  void AddShare(std::string_view path, std::string_view group, uint64_t dev) {
    if (clear_folder_ == path || IsBelow(clear_folder_, path)) {
      clear_folder_ = {};
    }
    shares_[ToAbsl(path)] = ShareState{true, group, dev};
    FindGroup(group)->count++;
    CountAncestors(path, dev, +1);
  }

  void RemoveShare(std::string_view path) {
    std::optional<ShareState> s = FindShare(path);
    if (!s) return;
    if (Group* g = FindGroup(s->group)) g->count--;
    CountAncestors(path, s->dev, -1);
    shares_[ToAbsl(path)] = ShareState{false, {}, 0};
  }

  void MoveShare(std::string_view path, std::string_view group) {
    std::optional<ShareState> s = FindShare(path);
    if (Group* g = FindGroup(s->group)) g->count--;
    FindGroup(group)->count++;
    s->group = group;
    shares_[ToAbsl(path)] = *s;
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
    for (const auto& [p, st] : shares_) {
      std::string_view v(p.data(), p.size());
      if (st.exists && st.dev == dev && IsBelow(v, path)) consider(v);
    }
    table_.ForEachShare([&](const Share& s) {
      if (s.dev == dev && IsBelow(s.path, path) &&
          shares_.find(ToAbsl(s.path)) == shares_.end()) {
        consider(s.path);
      }
    });
    return std::string(best);
  }

  void CountAncestors(std::string_view path, uint64_t dev, int delta) {
    for (std::string_view p = ParentPath(path); !p.empty(); p = ParentPath(p)) {
      below_[ToAbsl(p)][dev] += delta;
    }
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
  ViewMap<ShareState> shares_{&arena_};
  // The inner maps take arena_ too (uses-allocator construction).
  ViewMap<std::pmr::unordered_map<uint64_t, int64_t>> below_{&arena_};
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

// One validated operation with everything it needs prepared, so that
// linking it into the table allocates (almost) nothing.
struct Step {
  const Operation* op = nullptr;
  bool noop = false;
  std::unique_ptr<Share> share;                  // kAddShare
  std::unique_ptr<ShareGroup> group;             // kCreateGroup
  std::shared_ptr<const ShareOptions> compiled;  // kSetOptions
  std::string text;                              // kSetOptions
};

ShareInfo MakeInfo(const Share& s) {
  ShareInfo i;
  i.id = s.id;
  i.generation = s.generation;
  i.path = s.path;
  i.group = s.group->name;
  i.resource = s.resource;
  i.description = s.description;
  i.options = s.options;
  i.effective_options = s.effective_options_text();
  i.active = s.active();
  return i;
}

std::vector<const Share*> SortedByPath(std::vector<const Share*> v) {
  std::sort(v.begin(), v.end(),
            [](const Share* a, const Share* b) { return a->path < b->path; });
  return v;
}

class CatalogImpl : public Catalog {
 public:
  CatalogImpl(std::unique_ptr<Store> store, std::unique_ptr<Store> mounts)
      : store_(std::move(store)), mounts_(std::move(mounts)) {}

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
    absl::StatusOr<uint64_t> max_id = store_->MaxShareId();
    if (!max_id.ok()) return max_id.status();
    next_id_ = *max_id + 1;
    return absl::OkStatus();
  }

  BatchResult Apply(const Batch& batch) override;
  // Apply() without its out-of-memory boundary.
  BatchResult ApplyOrThrow(const Batch& batch);

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

  std::vector<GroupInfo> ListGroups() const override {
    absl::ReaderMutexLock l(&mu_);
    std::vector<GroupInfo> out;
    for (const ShareGroup* g : table_.SortedGroups()) {
      out.push_back({g->name, g->enabled, g->options, g->shares.size()});
    }
    return out;
  }

  std::vector<SharetabEntry> SharetabEntries() const override {
    std::vector<SharetabEntry> out;
    {
      // Only the copy is done under the lock; the sort (most of the cost)
      // runs after it, so a batch's link step does not wait for it.
      absl::ReaderMutexLock l(&mu_);
      out.reserve(table_.size());
      for (const ShareGroup* g : table_.SortedGroups()) {
        if (!g->enabled) continue;
        for (const Share& s : g->shares) {
          SharetabEntry& e = out.emplace_back();
          e.path = s.path;
          e.resource = s.resource;
          e.options = s.effective_options_text();
          e.description = s.description;
        }
      }
    }
    std::sort(out.begin(), out.end(),
              [](const SharetabEntry& a, const SharetabEntry& b) {
                return a.path < b.path;
              });
    return out;
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

  // Validates the batch; fills `steps` (one per operation) and `errors`.
  void Validate(const Batch& batch, std::vector<Step>* steps,
                std::vector<OperationError>* errors)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(apply_mu_) ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // Writes the steps in one transaction.
  // Writes the steps and the table's next generation in one transaction.
  absl::Status Commit(const std::vector<Step>& steps, uint64_t generation)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(apply_mu_);
  absl::Status WriteSteps(const std::vector<Step>& steps)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(apply_mu_);
  // Links the committed steps into the table; returns whether anything
  // changed. Removed objects go to the garbage vectors.
  // `touched` receives every share added or changed (with repeats); its
  // capacity must already fit them (linking must not allocate).
  bool Link(std::vector<Step>& steps, uint64_t generation,
            std::vector<std::unique_ptr<Share>>* dead_shares,
            std::vector<std::unique_ptr<ShareGroup>>* dead_groups,
            TouchedShares* touched)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

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
  ShareTable table_ ABSL_GUARDED_BY(mu_);
  LoadStats load_stats_ ABSL_GUARDED_BY(mu_);
};

void CatalogImpl::Validate(const Batch& batch, std::vector<Step>* steps,
                           std::vector<OperationError>* errors) {
  Overlay ov(table_, batch.ops.size());
  OptionsCache cache;
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
        ov.CreateGroup(op.group);
        absl::StatusOr<std::shared_ptr<const ShareOptions>> compiled =
            cache.Get(op.options);
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
        if (g->count > 0 && !op.force) {
          refuse(absl::StrCat("group ", op.group, " has ", g->count,
                              g->count == 1 ? " share" : " shares",
                              "; use -f"));
          break;
        }
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
        if (std::optional<Overlay::ShareState> s = ov.FindShare(op.path)) {
          refuse(absl::StrCat(op.path, ": already shared (group ",
                              ToAbsl(s->group), ")"));
          break;
        }
        absl::StatusOr<uint64_t> dev = CanonicalDirectoryDevice(op.path);
        if (!dev.ok()) {
          refuse_status(dev.status());
          break;
        }
        if (absl::Status s = ov.CheckNesting(op.path, *dev); !s.ok()) {
          refuse_status(s);
          break;
        }
        ov.AddShare(op.path, op.group, *dev);
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
        step.share->dev = *dev;
        step.share->path = op.path;
        step.share->resource = op.resource;
        step.share->description = op.description;
        step.share->options = op.options;
        step.share->compiled = std::move(compiled);
        break;
      }
      case Op::kRemoveShare: {
        std::optional<Overlay::ShareState> s = ov.FindShare(op.path);
        if (!s) {
          refuse(absl::StrCat(op.path, ": not shared"));
          break;
        }
        if (!op.group.empty() && op.group != s->group) {
          refuse(absl::StrCat(op.path, ": share is in group ", ToAbsl(s->group),
                              ", not ", op.group));
          break;
        }
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
        step.noop = s->group == op.group;
        if (!step.noop) ov.MoveShare(op.path, op.group);
        break;
      }
      case Op::kSetOptions: {
        if (ov.FindGroup(op.group) == nullptr) {
          group_missing();
          break;
        }
        if (!op.path.empty()) {
          std::optional<Overlay::ShareState> s = ov.FindShare(op.path);
          if (!s) {
            refuse(absl::StrCat(op.path, ": not shared"));
            break;
          }
          if (s->group != op.group) {
            refuse(absl::StrCat(op.path, ": share is in group ",
                                ToAbsl(s->group), ", not ", op.group));
            break;
          }
        }
        if (!op.path.empty() && op.options.empty()) break;  // inherit again
        absl::StatusOr<std::shared_ptr<const ShareOptions>> c =
            cache.Get(op.options);
        if (!c.ok()) {
          refuse(absl::StrCat(op.path.empty() ? "group " + op.group : op.path,
                              ": ", c.status().message()));
          break;
        }
        step.compiled = *std::move(c);
        break;
      }
    }
    if (!errors->empty()) {
      // Nothing will be linked; free what was prepared as we go.
      step.share.reset();
      step.group.reset();
      step.compiled.reset();
    } else if (step.op->type == Op::kSetOptions) {
      step.text = op.options;
    }
  }
}

absl::Status CatalogImpl::Commit(const std::vector<Step>& steps,
                                 uint64_t generation) {
  if (absl::Status s = store_->Begin(); !s.ok()) return s;
  absl::Status status;
  // An allocation failure must not leave the transaction open: every later
  // Begin() would fail ("transaction within a transaction").
  try {
    status = WriteSteps(steps);
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
  absl::Status status;
  for (const Step& step : steps) {
    if (step.noop) continue;
    const Operation& op = *step.op;
    switch (op.type) {
      case Op::kCreateGroup:
        status = store_->InsertGroup({op.group, true, op.options});
        break;
      case Op::kDeleteGroup:
        status = store_->DeleteGroup(op.group);
        break;
      case Op::kEnableGroup:
      case Op::kDisableGroup:
        status = store_->SetGroupEnabled(op.group, op.type == Op::kEnableGroup);
        break;
      case Op::kAddShare: {
        const Share& s = *step.share;
        status = store_->InsertShare({s.id, s.path, op.group, s.resource,
                                      s.description, s.options, s.dev});
        break;
      }
      case Op::kRemoveShare:
        status = store_->DeleteShare(op.path);
        break;
      case Op::kMoveShare:
        status = store_->MoveShare(op.path, op.group);
        break;
      case Op::kSetOptions:
        status = op.path.empty() ? store_->SetGroupOptions(op.group, op.options)
                                 : store_->SetShareOptions(op.path, op.options);
        break;
    }
    if (!status.ok()) break;
  }
  return status;
}

bool CatalogImpl::Link(std::vector<Step>& steps, uint64_t gen,
                       std::vector<std::unique_ptr<Share>>* dead_shares,
                       std::vector<std::unique_ptr<ShareGroup>>* dead_groups,
                       TouchedShares* touched) {
  bool changed = false;
  for (Step& step : steps) {
    if (step.noop) continue;
    changed = true;
    const Operation& op = *step.op;
    switch (op.type) {
      case Op::kCreateGroup:
        table_.AddGroup(std::move(step.group));
        break;
      case Op::kDeleteGroup: {
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
        step.share->group = table_.FindGroup(op.group);
        step.share->generation = gen;
        touched->Note(step.share.get());
        table_.Insert(std::move(step.share));
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
      case Op::kSetOptions: {
        // Swaps, so the old values are freed with `steps`, after unlock.
        if (op.path.empty()) {
          ShareGroup* g = table_.FindGroup(op.group);
          g->options.swap(step.text);
          g->compiled.swap(step.compiled);
          for (Share& s : g->shares) {
            if (!s.options.empty()) continue;
            s.generation = gen;
            touched->Note(&s);
          }
        } else {
          Share* s = table_.FindMutable(op.path);
          s->options.swap(step.text);
          s->compiled.swap(step.compiled);
          s->generation = gen;
          touched->Note(s);
        }
        break;
      }
    }
  }
  return changed;
}

// The change list of a committed batch: each path once, in path order.
// A path both removed and present afterwards (removed and re-added) is
// kChanged; a share added by the batch (id >= first_new_id) is kAdded even
// if later steps changed it. Only standard containers: a bad_alloc halfway
// leaves nothing inconsistent behind.
std::vector<ShareChange> ChangesOf(
    const std::vector<const Share*>& touched,
    const std::vector<std::unique_ptr<Share>>& dead, uint64_t first_new_id) {
  std::vector<const Share*> dead_set;
  dead_set.reserve(dead.size());
  for (const auto& d : dead) dead_set.push_back(d.get());
  std::sort(dead_set.begin(), dead_set.end());
  std::vector<const Share*> all;
  all.reserve(dead.size() + touched.size());
  all.insert(all.end(), dead_set.begin(), dead_set.end());
  for (const Share* s : touched) {
    // Added or changed, then removed: reported once, as removed.
    if (!std::binary_search(dead_set.begin(), dead_set.end(), s)) {
      all.push_back(s);
    }
  }
  // Dead shares first for each path (stable), so a later live share of the
  // same path turns the removal into a change.
  std::stable_sort(all.begin(), all.end(), [](const Share* x, const Share* y) {
    return x->path < y->path;
  });
  std::vector<ShareChange> out;
  out.reserve(all.size());
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
  // No exception leaves the library: running out of memory before the
  // commit is a refusal that changes nothing.
  try {
    return ApplyOrThrow(batch);
  } catch (const std::bad_alloc&) {
    BatchResult result;
    result.commit_error = "out of memory while preparing the batch";
    result.generation = generation();
    return result;
  }
}

BatchResult CatalogImpl::ApplyOrThrow(const Batch& batch) {
  BatchResult result;
  absl::MutexLock a(&apply_mu_);
  std::vector<Step> steps;
  ShareTable::Buckets buckets;
  std::vector<std::unique_ptr<Share>> dead_shares;
  std::vector<std::unique_ptr<ShareGroup>> dead_groups;
  TouchedShares touched;
  uint64_t next_generation = 0;
  {
    // apply_mu_ already excludes the only writer; the shared lock is for
    // the annotations and costs readers nothing.
    absl::ReaderMutexLock r(&mu_);
    Validate(batch, &steps, &result.errors);
    result.generation = table_.generation();
    if (!result.errors.empty() || batch.dry_run) return result;
    next_generation = table_.generation() + 1;
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
          ++touches;
          break;
        case Op::kSetOptions:
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
    touched.shares.reserve(touches);
    buckets = table_.PrepareCapacity(table_.size() + adds);
    // Room for what Link removes, so that linking after the commit does
    // not allocate for it.
    dead_shares.reserve(removed_shares);
    dead_groups.reserve(removed_groups);
  }
  const uint64_t first_new_id = next_id_;
  if (absl::Status s = Commit(steps, next_generation); !s.ok()) {
    result.commit_error = std::string(s.message());
    return result;
  }
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
      uint64_t gen = table_.generation() + 1;
      if (Link(steps, gen, &dead_shares, &dead_groups, &touched)) {
        table_.set_generation(gen);
      }
    } catch (const std::bad_alloc&) {
      static constexpr char kMessage[] =
          "libshare: out of memory after a commit; the in-memory table "
          "cannot follow the store; aborting (a restart loads it)\n";
      (void)!::write(2, kMessage, sizeof kMessage - 1);
      std::abort();
    }
    result.generation = table_.generation();
  }
  result.applied = batch.ops.size();
  // apply_mu_ is still held: no other writer can change the shares read
  // here, and removed ones live in dead_shares until the function ends.
  // Out of memory now costs the report, not the committed change.
  try {
    if (touched.overflow) throw std::bad_alloc();  // see TouchedShares
    result.changes = ChangesOf(touched.shares, dead_shares, first_new_id);
  } catch (const std::bad_alloc&) {
    result.changes.clear();
    result.changes_complete = false;
  }
  return result;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Catalog>> Catalog::Open(const Config& config) {
  absl::StatusOr<std::unique_ptr<Store>> store =
      Store::Open(config.db_path, config.busy_timeout_ms);
  if (!store.ok()) return store.status();
  absl::StatusOr<std::unique_ptr<Store>> mounts =
      Store::Open(config.db_path, config.busy_timeout_ms);
  if (!mounts.ok()) return mounts.status();
  auto catalog =
      std::make_unique<CatalogImpl>(*std::move(store), *std::move(mounts));
  if (absl::Status s = catalog->Load(config.load_threads); !s.ok()) return s;
  return catalog;
}

}  // namespace libshare
