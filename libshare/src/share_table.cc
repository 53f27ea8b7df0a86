#include "libshare/share_table.h"

#include <algorithm>
#include <cassert>
#include <mutex>
#include <new>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "libshare/fs_identity.h"
#include "internal_text.h"

namespace libshare {
namespace {

using internal::ToAbsl;

constexpr std::size_t kInitialBuckets = 64;

// True if `p` lies strictly below folder `dir`.
bool IsBelow(std::string_view p, std::string_view dir) {
  if (dir == "/") return p.size() > 1 && p[0] == '/';
  return p.size() > dir.size() && p.compare(0, dir.size(), dir) == 0 &&
         p[dir.size()] == '/';
}

// What resource() and description() give a share with neither: never
// destroyed, so valid in any destructor.
const std::string& NoText() {
  static const std::string* const kNone = new std::string();
  return *kNone;
}

}  // namespace

std::unique_ptr<ShareTexts> ShareTexts::Make(std::string_view resource,
                                             std::string_view description) {
  if (resource.empty() && description.empty()) return nullptr;
  return std::make_unique<ShareTexts>(
      ShareTexts{std::string(resource), std::string(description)});
}

std::string Share::fs_identity() const {
  return has_fs_uuid ? FormatFsIdentity(fs_uuid) : std::string();
}

absl::Status Share::SetFsIdentity(std::string_view text) {
  absl::StatusOr<std::optional<FsUuid>> id = ParseFsIdentity(text);
  if (!id.ok()) return id.status();
  has_fs_uuid = id->has_value();
  fs_uuid = has_fs_uuid ? **id : FsUuid{};
  return absl::OkStatus();
}

const std::string& Share::resource() const {
  return texts != nullptr ? texts->resource : NoText();
}

const std::string& Share::description() const {
  return texts != nullptr ? texts->description : NoText();
}

const std::string& Share::effective_options_text() const {
  return inherited != nullptr ? inherited->text : group->options;
}

const std::shared_ptr<const ShareOptions>& Share::effective_options() const {
  return inherited != nullptr ? inherited->compiled : group->compiled;
}

bool Share::active() const { return group != nullptr && group->enabled; }

ShareTable::Buckets ShareTable::MakeBuckets(std::size_t n) {
  Buckets b;
  b.array_ = std::make_unique<PathIndex::bucket_type[]>(n);
  b.count_ = n;
  return b;
}

ShareTable::ShareTable()
    : buckets_(MakeBuckets(kInitialBuckets)),
      index_(PathIndex::bucket_traits(buckets_.array_.get(), buckets_.count_)) {
}

ShareTable::~ShareTable() {
  if (keep_at_exit_) {
    // Moved out whole (each in constant time: the moved-from index keeps
    // no bucket to clear) into a holder that is never destroyed: the
    // bucket array reaches every share, each group its list; the counts
    // below each folder go too (one per parent folder of a share).
    // Without the memory for the holder, freed as usual.
    struct Kept {
      Buckets buckets;
      PathIndex index;
      absl::flat_hash_map<std::string, std::unique_ptr<ShareGroup>> groups;
      absl::flat_hash_map<std::string, DeviceCounts> below;
    };
    try {
      static std::mutex mu;  // tables may be destroyed on several threads
      static auto* const kept = new std::vector<Kept*>();
      std::lock_guard<std::mutex> l(mu);
      kept->reserve(kept->size() + 1);
      kept->push_back(new Kept{std::move(buckets_), std::move(index_),
                               std::move(groups_), std::move(below_)});
      return;
    } catch (const std::bad_alloc&) {
    }
  }
  for (auto& [name, group] : groups_) group->shares.clear();
  index_.clear_and_dispose([](Share* s) { delete s; });
}

ShareGroup* ShareTable::FindGroup(std::string_view name) const {
  auto it = groups_.find(ToAbsl(name));
  return it == groups_.end() ? nullptr : it->second.get();
}

void ShareTable::AddGroup(std::unique_ptr<ShareGroup> group) {
  std::string name = group->name;
  auto [it, inserted] = groups_.emplace(std::move(name), std::move(group));
  ++layout_changes_;
  assert(inserted);
  (void)it;
  (void)inserted;
}

std::unique_ptr<ShareGroup> ShareTable::RemoveGroup(std::string_view name) {
  auto it = groups_.find(ToAbsl(name));
  if (it == groups_.end()) return nullptr;
  assert(it->second->shares.empty());
  std::unique_ptr<ShareGroup> g = std::move(it->second);
  groups_.erase(it);
  ++layout_changes_;
  return g;
}

std::vector<const ShareGroup*> ShareTable::SortedGroups() const {
  std::vector<const ShareGroup*> out;
  out.reserve(groups_.size());
  for (const auto& [name, group] : groups_) out.push_back(group.get());
  std::sort(out.begin(), out.end(),
            [](const ShareGroup* a, const ShareGroup* b) {
              return a->name < b->name;
            });
  return out;
}

Share* ShareTable::FindInIndex(std::string_view path) const {
  auto it = index_.find(path, PathHash(), PathEq());
  if (it == index_.end()) return nullptr;
  return const_cast<Share*>(&*it);
}

const Share* ShareTable::Find(std::string_view path) const {
  return FindInIndex(path);
}

Share* ShareTable::FindMutable(std::string_view path) {
  return FindInIndex(path);
}

const Share* ShareTable::FindAncestorOnDevice(std::string_view path,
                                              uint64_t dev) const {
  for (std::string_view p = ParentPath(path); !p.empty(); p = ParentPath(p)) {
    const Share* s = FindInIndex(p);
    if (s != nullptr && s->dev == dev) return s;
  }
  return nullptr;
}

uint32_t ShareTable::CountBelow(std::string_view path, uint64_t dev) const {
  auto it = below_.find(ToAbsl(path));
  if (it == below_.end()) return 0;
  auto c = it->second.find(dev);
  return c == it->second.end() ? 0 : c->second;
}

const Share* ShareTable::AnyShareBelow(std::string_view path,
                                       uint64_t dev) const {
  const Share* best = nullptr;
  for (const Share& s : index_) {
    if (s.dev == dev && IsBelow(s.path, path) &&
        (best == nullptr || s.path < best->path)) {
      best = &s;
    }
  }
  return best;
}

absl::Status ShareTable::CheckNesting(std::string_view path,
                                      uint64_t dev) const {
  if (const Share* above = FindAncestorOnDevice(path, dev)) {
    return absl::FailedPreconditionError(absl::StrCat(
        ToAbsl(path), ": path is inside share ", ToAbsl(above->path)));
  }
  if (CountBelow(path, dev) > 0) {
    const Share* below = AnyShareBelow(path, dev);
    return absl::FailedPreconditionError(
        absl::StrCat(ToAbsl(path), ": path contains share ",
                     below ? ToAbsl(below->path) : "(unknown)"));
  }
  return absl::OkStatus();
}

void ShareTable::CountAncestors(const Share& s, int delta) {
  const std::string_view parent = ParentPath(s.path);
  if (delta > 0) {
    if (!chain_.empty() && parent == chain_parent_ && s.dev == chain_dev_) {
      for (uint32_t* c : chain_) *c += static_cast<uint32_t>(delta);
      return;
    }
    chain_.clear();  // stays empty if an allocation below fails
    std::vector<uint32_t*> chain;
    for (std::string_view p = parent; !p.empty(); p = ParentPath(p)) {
      auto it = below_.find(ToAbsl(p));
      if (it == below_.end()) {
        it = below_.emplace(std::string(p), DeviceCounts()).first;
      }
      uint32_t& c = it->second[s.dev];
      c += static_cast<uint32_t>(delta);
      chain.push_back(&c);
    }
    chain_.swap(chain);
    chain_parent_ = parent;
    chain_dev_ = s.dev;
    return;
  }
  // Erasing can free counters the chain points to.
  chain_.clear();
  for (std::string_view p = parent; !p.empty(); p = ParentPath(p)) {
    auto it = below_.find(ToAbsl(p));
    assert(it != below_.end());
    auto c = it->second.find(s.dev);
    assert(c != it->second.end());
    c->second += delta;
    if (c->second == 0) {
      it->second.erase(c);
      if (it->second.empty()) below_.erase(it);
    }
  }
}

std::unique_ptr<Share> ShareTable::Insert(std::unique_ptr<Share> share) {
  assert(share->group != nullptr);
  if (index_.size() + 1 > buckets_.count_) {
    InstallCapacity(PrepareCapacity(index_.size() + 1));
  }
  Share* s = share.get();
  if (!index_.insert(*s).second) return share;
  share.release();
  s->group->shares.push_back(*s);
  CountAncestors(*s, +1);
  return nullptr;
}

void ShareTable::PrefetchBucket(std::string_view path) const {
  __builtin_prefetch(&buckets_.array_[index_.bucket(path, PathHash())],
                     /*rw=*/1);
}

std::unique_ptr<Share> ShareTable::Remove(std::string_view path) {
  Share* s = FindInIndex(path);
  if (s == nullptr) return nullptr;
  CountAncestors(*s, -1);
  index_.erase(index_.iterator_to(*s));
  s->group->shares.erase(s->group->shares.iterator_to(*s));
  return std::unique_ptr<Share>(s);
}

void ShareTable::MoveToGroup(Share* share, ShareGroup* group) {
  share->group->shares.erase(share->group->shares.iterator_to(*share));
  share->group = group;
  group->shares.push_back(*share);
  ++layout_changes_;
}

ShareTable::Buckets ShareTable::PrepareCapacity(std::size_t shares) const {
  std::size_t n = buckets_.count_;
  if (shares <= n) return Buckets();
  while (n < shares) n *= 2;
  return MakeBuckets(n);
}

ShareTable::Buckets ShareTable::InstallCapacity(Buckets b) {
  if (b.empty() || b.count_ <= buckets_.count_) return b;
  index_.rehash(PathIndex::bucket_traits(b.array_.get(), b.count_));
  std::swap(buckets_, b);
  return b;
}

}  // namespace libshare
