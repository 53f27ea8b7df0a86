// The batch overlay: the table as an ordered batch would leave it, without
// copying the table, for the Catalog's validation (catalog_validate.cc).
// Private to libshare. Not thread-safe: one per Validate call.
#ifndef LIBSHARE_SRC_CATALOG_OVERLAY_H_
#define LIBSHARE_SRC_CATALOG_OVERLAY_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <memory_resource>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "absl/hash/hash.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "internal_text.h"
#include "libshare/batch_arena.h"
#include "libshare/options.h"
#include "libshare/path.h"
#include "libshare/share_table.h"

namespace libshare {
namespace catalog_internal {

using internal::ToAbsl;

inline bool IsBelow(std::string_view p, std::string_view dir) {
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
// alloc_failure). Entries are never removed. Its entries and slots come
// from `memory` (the overlay's arena).
template <typename V>
class PathMap {
 public:
  // The hash is not kept (8 bytes an entry): growing, which a batch's
  // reserve makes rare, hashes the keys again.
  struct Entry {
    std::string_view key;
    V value;
  };
  // Bytes a map reserved for n entries takes: its entries and its slots.
  static std::size_t BytesFor(std::size_t n) {
    return n * sizeof(Entry) + SlotsFor(n, 16) * sizeof(uint64_t);
  }

  explicit PathMap(std::pmr::memory_resource* memory)
      : entries_(memory), slots_(1, 0, memory) {}

  void reserve(std::size_t n) {
    entries_.reserve(n);
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
    const uint64_t h = Hash(key);
    entries_.push_back(Entry{key, V()});
    Place(entries_.size() - 1, h);
    return entries_.back().value;
  }
  const std::pmr::vector<Entry>& entries() const { return entries_; }

 private:
  static constexpr uint64_t kIndexMask = 0xffffffff;
  static uint64_t Hash(std::string_view key) {
    return absl::Hash<absl::string_view>()(ToAbsl(key));
  }
  // Slots for n entries at a load of at most one half: `from` (a power of
  // two) doubled as often as needed.
  static std::size_t SlotsFor(std::size_t n, std::size_t from) {
    while (from < 2 * n) from *= 2;
    return from;
  }
  // Room for n entries.
  void Grow(std::size_t n) {
    const std::size_t want = SlotsFor(n, slot_count_ == 0 ? 16 : slot_count_);
    if (want == slot_count_) return;
    // May throw: no change.
    std::pmr::vector<uint64_t> fresh(want, 0, slots_.get_allocator());
    slots_.swap(fresh);
    slot_count_ = want;
    mask_ = want - 1;
    for (std::size_t k = 0; k < entries_.size(); ++k) {
      Place(k, Hash(entries_[k].key));
    }
  }
  void Place(std::size_t k, uint64_t h) {
    std::size_t i = h & mask_;
    while (slots_[i] != 0) i = (i + 1) & mask_;
    slots_[i] = (h & ~kIndexMask) | (k + 1);
  }

  std::pmr::vector<Entry> entries_;
  std::pmr::vector<uint64_t> slots_;  // slot_count_ of them (one before)
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
// tests/reliability alloc_failure). Their nodes and the path map come from
// one arena (BatchArena) that is given back at once with the overlay: a
// node allocation is a pointer bump, and the memory of a batch's overlay
// is mapped and made resident in one call, sized by its operations.
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
  // Its fields ordered so that no padding is left (80 bytes; an entry of
  // the overlay per share a batch touches: 1,000,000 of them at the
  // biggest batches).
  struct ShareState {
    std::string_view group;
    std::string_view own;  // its own options text
    std::string_view resource;
    uint64_t dev = 0;
    uint64_t id = 0;  // its store row (Share::id)
    // The last InheritPass that considered it (see Visit).
    uint32_t inherit_pass = 0;
    // 1 + the segment (ApplyGroup) whose add-share made its Share object,
    // 0 if the object is the table's: a new object starts with no
    // inherited options.
    uint32_t added_in = 0;
    bool exists = false;
    bool replaces = false;  // Share::replaces_group
  };

  Overlay(const ShareTable& table, std::size_t ops)
      : table_(table),
        arena_(PathMap<ShareState>::BytesFor(ops) + kMapNodeBytes) {
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
    ShareState& st = shares_[path];
    st = ShareState();
    st.exists = true;
    st.group = group;
    st.dev = dev;
    st.own = own;
    st.resource = resource;
    st.added_in = segment + 1;
    st.id = id;
    FindGroup(group)->count++;
    CountAncestors(path, dev, +1);
  }

  void RemoveShare(std::string_view path) {
    std::optional<ShareState> s = FindShare(path);
    if (!s) return;
    if (Group* g = FindGroup(s->group)) g->count--;
    CountAncestors(path, s->dev, -1);
    shares_[path] = ShareState();
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
  // Room in the arena beside the path map for its first slot and the
  // groups' and folders' map nodes (a few per group and parent folder);
  // more comes from the heap.
  static constexpr std::size_t kMapNodeBytes = std::size_t{64} << 10;

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
    ShareState st;
    st.exists = true;
    st.group = s->group->name;
    st.dev = s->dev;
    st.own = s->options;
    st.replaces = s->replaces_group;
    st.resource = s->resource();
    st.id = s->id;
    return st;
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
  BatchArena arena_;
  ViewMap<Group> groups_{arena_.resource()};
  // FindGroup's last answer: the entry of a group named last_group_name_
  // (a view of the caller's name, which outlives the overlay).
  std::string_view last_group_name_;
  Group* last_group_ = nullptr;
  PathMap<ShareState> shares_{arena_.resource()};
  // The inner maps take arena_ too (uses-allocator construction).
  ViewMap<std::pmr::unordered_map<uint64_t, int64_t>> below_{arena_.resource()};
  // CountAncestors' last chain: the counters of chain_parent_ and its
  // ancestors for chain_dev_ (empty chain_parent_: none yet).
  std::string_view chain_parent_;
  uint64_t chain_dev_ = 0;
  std::vector<int64_t*> chain_;
  uint32_t inherit_pass_ = 0;
};

}  // namespace catalog_internal
}  // namespace libshare

#endif  // LIBSHARE_SRC_CATALOG_OVERLAY_H_
