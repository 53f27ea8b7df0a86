// ShareTree: the paths of the active shares and every directory above
// them, the index the NFSv4 pseudo-root is answered from (the one good
// split of nfs-utils, v4root.c, without its scan of every export): is a
// path a share, a directory above one, and which shares lie below a
// directory. O(path depth) per change; walking below a directory visits
// only what is below it, and stops at the first share the caller accepts.
//
// Thread-safe. Callbacks run without the lock held.
#ifndef SHAREMGRD_KERNEL_SHARE_TREE_H_
#define SHAREMGRD_KERNEL_SHARE_TREE_H_

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"

namespace sharemgrd::kernel {

class ShareTree {
 public:
  // Adds a share; returns the directories above it that were not in the
  // tree before (from the nearest up), so their identities can be learnt.
  std::vector<std::string> Add(const std::string& share_path);
  // Removes a share; returns the directories above it that left the tree
  // (nothing else is below them). Not an error if it was not there.
  std::vector<std::string> Remove(const std::string& share_path);

  bool IsShare(const std::string& path) const;
  // True if `path` lies strictly above at least one share.
  bool IsAbove(const std::string& path) const;
  // Calls fn on the shares strictly below `dir`, nearest levels first,
  // until fn returns true; returns whether one did.
  bool AnyShareBelow(const std::string& dir,
                     const std::function<bool(const std::string&)>& fn) const;
  std::size_t share_count() const;

  // "/a/b/c" -> {"/a/b", "/a", "/"}; "/" -> {}.
  static std::vector<std::string> Ancestors(const std::string& path);

 private:
  struct Node {
    bool share = false;
    absl::btree_set<std::string> children;  // full paths
  };
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, Node> nodes_ ABSL_GUARDED_BY(mu_);
  std::size_t shares_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace sharemgrd::kernel

#endif  // SHAREMGRD_KERNEL_SHARE_TREE_H_
