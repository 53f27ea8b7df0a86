// The Catalog's listings: the readers that copy out many shares, and the
// sliced walk that keeps a whole-table copy from holding the table.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "catalog_impl.h"
#include "internal_text.h"
#include "libshare/share_table.h"
#include "libshare/sharetab.h"

namespace libshare {
namespace catalog_internal {
namespace {

using internal::ToAbsl;

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
  i.mountpoint = s.effective_options()->mountpoint;
  i.fs_identity = s.fs_identity();
  return i;
}

std::vector<const Share*> SortedByPath(std::vector<const Share*> v) {
  std::sort(v.begin(), v.end(),
            [](const Share* a, const Share* b) { return a->path < b->path; });
  return v;
}

}  // namespace

std::vector<const Share*> CatalogImpl::ActiveSorted() const {
  std::vector<const Share*> v;
  for (const ShareGroup* g : table_.SortedGroups()) {
    if (!g->enabled) continue;
    for (const Share& s : g->shares) v.push_back(&s);
  }
  return SortedByPath(std::move(v));
}

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

void CatalogImpl::ForEachActive(
    const std::function<void(const ShareInfo&, const ShareOptions&)>& fn)
    const {
  absl::ReaderMutexLock l(&mu_);
  for (const Share* s : ActiveSorted()) {
    fn(MakeInfo(*s), *s->effective_options());
  }
}

absl::StatusOr<std::vector<ShareInfo>> CatalogImpl::ListShares(
    const std::vector<std::string>& groups) const {
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

std::vector<ShareLocation> CatalogImpl::ListLocations() const {
  std::vector<ShareLocation> out;
  WalkInSlices([&](std::size_t shares) { out.reserve(shares); },
               [&](const ShareGroup&, const Share& s) {
                 out.push_back({s.id, s.dev, s.path.str(), s.mount_root,
                                s.effective_options()->mountpoint});
               },
               [&] { out.clear(); });
  return out;
}

std::vector<ShareLocation> CatalogImpl::LocationsOf(
    const std::vector<std::string>& paths) const {
  absl::ReaderMutexLock l(&mu_);
  std::vector<ShareLocation> out;
  out.reserve(paths.size());
  for (const std::string& path : paths) {
    if (const Share* s = table_.Find(path)) {
      out.push_back({s->id, s->dev, s->path.str(), s->mount_root,
                     s->effective_options()->mountpoint});
    }
  }
  return out;
}

std::vector<GroupInfo> CatalogImpl::ListGroups() const {
  absl::ReaderMutexLock l(&mu_);
  std::vector<GroupInfo> out;
  for (const ShareGroup* g : table_.SortedGroups()) {
    out.push_back(
        {g->name, g->enabled, g->options, g->shares.size(), g->managed_by});
  }
  return out;
}

SharetabLines CatalogImpl::SharetabText() const {
  SharetabLines out;
  // Only the copy is done under the lock, a slice at a time; the sort
  // (most of the cost) runs after it.
  WalkInSlices([&](std::size_t shares) { out.Reserve(shares); },
               [&](const ShareGroup& g, const Share& s) {
                 if (!g.enabled) return;
                 out.Add(s.path, s.resource(), s.effective_options_text(),
                         s.description(), s.effective_options()->mountpoint);
               },
               [&] { out.Clear(); });
  out.SortUnique();
  return out;
}

// The fields themselves, not SharetabText's lines read back: the text
// cannot tell a resource "-" from none.
std::vector<SharetabEntry> CatalogImpl::SharetabEntries() const {
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
                 e.mountpoint = s.effective_options()->mountpoint;
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

}  // namespace catalog_internal
}  // namespace libshare
