// ShareTable: the in-memory hashed share table.
//
// Share objects carry their own Boost.Intrusive hooks: one for the path
// index (an unordered set keyed by path) and one for their group's list.
// The table owns every share and group linked into it exactly once; Insert
// takes ownership, Remove hands it back. Lookup, insert and remove are O(1)
// and allocate nothing beyond the Share itself, provided the bucket array
// was grown beforehand (PrepareCapacity / InstallCapacity). Nearest-ancestor
// lookup and the nesting rule are O(path depth): the table keeps, for every
// ancestor folder of a share, how many shares lie below it per device.
//
// Thread-safety: none. The table is a plain data structure; whoever shares
// it between threads must lock around it. The Catalog (the daemon's owner
// of the table, read from many threads) does it this way:
//   - one absl::Mutex `mu_` (reader/writer) guards the table; lookups take
//     it shared and copy out what they need (a ShareMatch holds a
//     shared_ptr<const ShareOptions>, valid after the lock is dropped);
//   - Apply() calls are serialized by a second mutex and are the only
//     writers. A batch is validated against an overlay (the table plus the
//     batch's earlier effects, never a copy of the table) while readers
//     proceed; every new Share, ShareGroup, compiled option set and the
//     grown bucket array (PrepareCapacity) is built then; the batch is
//     committed to SQLite; only then is `mu_` taken exclusively to link
//     the prepared objects (InstallCapacity, Insert, Remove: no allocation
//     in the common case, no I/O). Removed objects are freed after `mu_` is
//     released. Readers therefore wait at most for that short swap and see
//     the table before a batch or after it, never a part.
#ifndef LIBSHARE_SHARE_TABLE_H_
#define LIBSHARE_SHARE_TABLE_H_

#include <array>
#include <boost/intrusive/list.hpp>
#include <boost/intrusive/unordered_set.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "absl/status/status.h"
#include "libshare/options.h"
#include "libshare/path.h"
#include "libshare/text.h"

namespace libshare {

struct ShareGroup;

// The effective options of a share with options of its own: its group's
// with its own properties overriding (InheritOptions). Immutable; shared by
// every share with the same (group options, own options) pair.
struct InheritedOptions {
  std::string text;  // the own text itself when the group adds nothing
  std::shared_ptr<const ShareOptions> compiled;
};

// One share. Plain fields; the table and its owner keep them consistent.
// A share's resource name and description. Most shares have neither, so
// they are kept apart from Share: one pointer there rather than two empty
// 32-byte strings (64 MB at 1,000,000 shares).
struct ShareTexts {
  std::string resource;
  std::string description;

  // Null when both are empty.
  static std::unique_ptr<ShareTexts> Make(std::string_view resource,
                                          std::string_view description);
};

struct Share {
  uint64_t id = 0;
  uint64_t dev = 0;         // st_dev when the share was added
  uint64_t generation = 0;  // table generation of its last effective change
  // Text (libshare/text.h): 8 bytes, not std::string's 32 (23 MiB at
  // 1,000,000 shares).
  Text path;
  std::string options;  // own text; "" inherits the group's
  // Its resource name and description (resource(), description()); null
  // when it has neither.
  std::unique_ptr<ShareTexts> texts;
  std::shared_ptr<const ShareOptions> compiled;  // own options; null if ""
  // Own options written before per-property inheritance (store schema 1):
  // they replace the group's options whole, as they did then, until the
  // share's options are next written.
  bool replaces_group = false;
  // A file system was mounted at the path when the share was added (or
  // the kernel did not say); true for a share loaded at start, whose add
  // this process did not see. Not stored.
  bool mount_root = true;
  // The file-system identity recorded when the share was added
  // (fs_identity.h); has_fs_uuid false: none recorded.
  bool has_fs_uuid = false;
  std::array<uint8_t, 16> fs_uuid{};
  // Its text form ("" when none); setting it fails on a text that is not
  // one, leaving the share as it was.
  std::string fs_identity() const;
  [[nodiscard]] absl::Status SetFsIdentity(std::string_view text);
  // Effective options when `options` is not "": the group's and the own
  // ones merged (or the own ones alone if replaces_group). Null otherwise.
  std::shared_ptr<const InheritedOptions> inherited;
  ShareGroup* group = nullptr;

  // Stores the path's hash: a lookup skips non-matching entries without
  // touching their path strings (cache misses dominate at 100,000 shares).
  boost::intrusive::unordered_set_member_hook<
      boost::intrusive::store_hash<true>>
      path_hook;
  boost::intrusive::list_member_hook<> group_hook;

  const std::string& resource() const;
  const std::string& description() const;

  // The group's options, with the share's own properties overriding.
  const std::string& effective_options_text() const;
  const std::shared_ptr<const ShareOptions>& effective_options() const;
  bool active() const;  // its group is enabled
};

struct ShareGroup {
  using ShareList = boost::intrusive::list<
      Share,
      boost::intrusive::member_hook<Share, boost::intrusive::list_member_hook<>,
                                    &Share::group_hook>,
      boost::intrusive::constant_time_size<true>>;

  std::string name;
  bool enabled = true;
  std::string options;                           // defaults text
  std::shared_ptr<const ShareOptions> compiled;  // never null
  std::string managed_by;  // exports file it mirrors; "" = by hand
  ShareList shares;        // not owning: the table owns the shares
};

class ShareTable {
 private:
  struct PathOf {
    using type = std::string_view;
    std::string_view operator()(const Share& s) const { return s.path; }
  };
  struct PathHash {
    std::size_t operator()(std::string_view p) const {
      return absl::Hash<std::string_view>()(p);
    }
  };
  struct PathEq {
    bool operator()(std::string_view a, std::string_view b) const {
      return a == b;
    }
  };
  using PathIndex = boost::intrusive::unordered_set<
      Share,
      boost::intrusive::member_hook<Share,
                                    boost::intrusive::unordered_set_member_hook<
                                        boost::intrusive::store_hash<true>>,
                                    &Share::path_hook>,
      boost::intrusive::key_of_value<PathOf>, boost::intrusive::hash<PathHash>,
      boost::intrusive::equal<PathEq>, boost::intrusive::power_2_buckets<true>,
      // The stored hash is compared before the path: same-length paths
      // in one bucket (u00001, u00002) cost no memcmp.
      boost::intrusive::compare_hash<true>,
      boost::intrusive::constant_time_size<true>>;

 public:
  // A bucket array for the path index; movable, empty when not needed.
  class Buckets {
   public:
    Buckets() = default;
    bool empty() const { return count_ == 0; }
    std::size_t size() const { return count_; }

   private:
    friend class ShareTable;
    std::unique_ptr<PathIndex::bucket_type[]> array_;
    std::size_t count_ = 0;
  };

  ShareTable();
  ~ShareTable();
  ShareTable(const ShareTable&) = delete;
  ShareTable& operator=(const ShareTable&) = delete;

  // For a table destroyed as its process exits: the destructor then frees
  // no share and unlinks none (a pass over every share, each a cache miss,
  // and a free() each: about 1 s of the 1.1-1.25 s a 1,000,000-share
  // daemon took to stop), and leaves their memory to the exit. It stays
  // reachable from a static, so that leak checkers do not count it as
  // lost.
  void KeepMemoryAtExit() { keep_at_exit_ = true; }

  // ---- Groups (few; kept in a hash map by name).
  ShareGroup* FindGroup(std::string_view name) const;
  // The name must be new. Takes ownership.
  void AddGroup(std::unique_ptr<ShareGroup> group);
  // The group must exist and have no shares; returns it.
  std::unique_ptr<ShareGroup> RemoveGroup(std::string_view name);
  std::size_t group_count() const { return groups_.size(); }
  // Groups ordered by name.
  std::vector<const ShareGroup*> SortedGroups() const;
  // Grows with every group added or removed and every share moved to
  // another group: while it stays, each share keeps its place in its
  // group's list among those still linked (a walk in slices, Catalog,
  // resumes after the share it stopped at).
  uint64_t layout_changes() const { return layout_changes_; }

  // ---- Shares.
  std::size_t size() const { return index_.size(); }
  const Share* Find(std::string_view path) const;
  Share* FindMutable(std::string_view path);

  // The share at `path` or its nearest ancestor for which pred(share) is
  // true, or nullptr. O(depth).
  template <typename Pred>
  const Share* FindNearest(std::string_view path, Pred pred) const;

  // The nearest share strictly above `path` on device `dev`, or nullptr.
  const Share* FindAncestorOnDevice(std::string_view path, uint64_t dev) const;
  // How many shares lie strictly below `path` on device `dev`. O(1).
  uint32_t CountBelow(std::string_view path, uint64_t dev) const;
  // One share strictly below `path` on `dev`, or nullptr. O(N): only for
  // naming the culprit in an error message.
  const Share* AnyShareBelow(std::string_view path, uint64_t dev) const;
  // The nesting rule of DESIGN.md for a new share at `path` on `dev`:
  //   "/export/a: path is inside share /export"
  //   "/export: path contains share /export/a"
  [[nodiscard]] absl::Status CheckNesting(std::string_view path,
                                          uint64_t dev) const;

  // Links `share` (group set to a group of this table) into the path index
  // and its group's list, taking ownership, and returns nullptr. If the
  // table already has a share at that path, links nothing and hands
  // `share` back. Does not check the nesting rule. Allocates only if the
  // bucket array must grow (doubling); call PrepareCapacity/InstallCapacity
  // first to keep linking allocation-free.
  std::unique_ptr<Share> Insert(std::unique_ptr<Share> share);
  // Asks the CPU to fetch the bucket a share at `path` would be linked
  // into: a caller inserting many shares in a row names one a few inserts
  // ahead, so that the bucket's cache miss overlaps the inserts before it
  // (at 1,000,000 shares the bucket array is 8 MiB). Changes nothing.
  void PrefetchBucket(std::string_view path) const;
  // Unlinks the share at `path` and returns it; nullptr if there is none.
  std::unique_ptr<Share> Remove(std::string_view path);
  // Moves a linked share to another group of this table.
  void MoveToGroup(Share* share, ShareGroup* group);

  // A bucket array big enough for `shares` entries (doubling from the
  // current size), or an empty one if the current array suffices.
  // Allocates; reads only bucket_count().
  Buckets PrepareCapacity(std::size_t shares) const;
  // Rehashes into `b` (no allocation) and returns the previous array, for
  // the caller to free outside any lock. No-op on an empty `b` or one not
  // larger than the current array.
  Buckets InstallCapacity(Buckets b);
  std::size_t bucket_count() const { return buckets_.count_; }

  // ---- Generation: changes on every committed change.
  uint64_t generation() const { return generation_; }
  void set_generation(uint64_t g) { generation_ = g; }

  // Calls fn(const Share&) for every share, in no particular order: group
  // by group, each in the order its shares were linked. That is about the
  // order they lie in memory (the loader allocates them in id order); the
  // path index's order is random, a cache and TLB miss per share, which
  // at 1,000,000 shares cost ~0.2 s a pass.
  template <typename Fn>
  void ForEachShare(Fn fn) const {
    for (const auto& [name, group] : groups_) {
      for (const Share& s : group->shares) fn(s);
    }
  }

 private:
  // Shares strictly below a folder, per device. Hashed: /export/home may
  // hold 100,000 datasets, each its own device.
  using DeviceCounts = absl::flat_hash_map<uint64_t, uint32_t>;

  static Buckets MakeBuckets(std::size_t n);
  void CountAncestors(const Share& s, int delta);
  Share* FindInIndex(std::string_view path) const;

  bool keep_at_exit_ = false;
  Buckets buckets_;
  PathIndex index_;
  absl::flat_hash_map<std::string, std::unique_ptr<ShareGroup>> groups_;
  absl::flat_hash_map<std::string, DeviceCounts> below_;
  // The counters CountAncestors last added to, for chain_parent_'s
  // ancestors on chain_dev_ (nearest first): siblings linked in a row (a
  // batch of home directories, a start-up load) count in O(depth) without
  // hashing. A counter keeps its address until its own DeviceCounts grows
  // or loses an entry, which only a walk that rebuilds the chain, or a
  // removal that clears it, does; moving a DeviceCounts when below_ grows
  // keeps its elements in place. chain_parent_ views the path of a linked
  // share, which is not freed before a removal clears the chain.
  std::vector<uint32_t*> chain_;
  std::string_view chain_parent_;
  uint64_t chain_dev_ = 0;
  uint64_t generation_ = 0;
  uint64_t layout_changes_ = 0;
};

template <typename Pred>
const Share* ShareTable::FindNearest(std::string_view path, Pred pred) const {
  for (std::string_view p = path; !p.empty(); p = ParentPath(p)) {
    const Share* s = FindInIndex(p);
    if (s != nullptr && pred(*s)) return s;
  }
  return nullptr;
}

}  // namespace libshare

#endif  // LIBSHARE_SHARE_TABLE_H_
