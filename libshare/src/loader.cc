#include "libshare/loader.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "libshare/options.h"
#include "libshare/path.h"
#include "options_cache.h"
#include "internal_text.h"
#include "share_rules.h"

namespace libshare {
namespace {

// Every refusal names the row, so an administrator can fix or delete it
// (the daemon does not start with a row add-share would refuse).
absl::Status BadRow(uint64_t id, absl::string_view why) {
  return absl::DataLossError(absl::StrCat(
      "store row ", id, " (shares table): ", why,
      "; fix or delete the row (sharemgrd refuses to start with it)"));
}

// One group and its shares as the scan sorted them, not yet checked,
// compiled or linked into the table.
struct GroupWork {
  ShareGroup* group;
  std::vector<std::unique_ptr<Share>> shares;
};

// Group name (owned by the table) -> index in the GroupWork vector.
using GroupIndex = absl::flat_hash_map<absl::string_view, std::size_t>;

// Links the groups into *table, each with its options compiled, and gives
// each its GroupWork and its entry in *index.
absl::Status AddGroups(std::vector<GroupRow>& groups, ShareTable* table,
                       std::vector<GroupWork>* work, GroupIndex* index) {
  OptionsCache cache;
  for (GroupRow& row : groups) {
    // The rules create applies: a name edited into the store (an ESC and
    // a newline, a blank) would be printed raw by list and the log.
    absl::Status name = ValidateGroupName(row.name);
    if (name.ok() && !row.managed_by.empty()) name = ValidatePath(row.managed_by);
    if (!name.ok()) {
      return absl::DataLossError(absl::StrCat(
          "store row of group ", internal::Quote(row.name), " (groups table): ",
          name.message(),
          "; fix or delete the row (sharemgrd refuses to start with it)"));
    }
    absl::StatusOr<std::shared_ptr<const ShareOptions>> compiled =
        cache.Get(row.options);
    if (!compiled.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("group ", row.name, ": ", compiled.status().message()));
    }
    auto g = std::make_unique<ShareGroup>();
    g->name = std::move(row.name);
    g->enabled = row.enabled;
    g->options = std::move(row.options);
    g->managed_by = std::move(row.managed_by);
    g->compiled = *std::move(compiled);
    index->emplace(g->name, work->size());
    work->push_back({g.get(), {}});
    table->AddGroup(std::move(g));
  }
  return absl::OkStatus();
}

// The rows become Share objects as SQLite hands them over (no vector of
// rows: at 1,000,000 shares that was ~200 MiB, most of it kept by malloc
// after the load), sorted into their groups' GroupWork; the checks and the
// option compiling run later, per group (ShareLinker). Counts them in
// *total.
absl::Status ScanShares(Store& store, uint64_t generation,
                        const GroupIndex& index, std::vector<GroupWork>* work,
                        std::size_t* total) {
  return store.ScanAllShares([&](const ShareRowView& row) {
    auto it = index.find(absl::string_view(row.group.data(), row.group.size()));
    if (it == index.end()) {
      return absl::DataLossError(absl::StrCat(
          "share ", absl::string_view(row.path.data(), row.path.size()),
          ": group ", absl::string_view(row.group.data(), row.group.size()),
          " does not exist"));
    }
    auto s = std::make_unique<Share>();
    s->id = row.id;
    s->dev = row.dev;
    s->generation = generation;
    s->path = row.path;
    s->texts = ShareTexts::Make(row.resource, row.description);
    s->options.assign(row.options);
    // Only a share with own options replaces its group's (as before).
    s->replaces_group = !row.options.empty() && row.replaces_group;
    if (absl::Status st = s->SetFsIdentity(row.fs_identity); !st.ok()) {
      return absl::DataLossError(absl::StrCat(
          "share ", absl::string_view(row.path.data(), row.path.size()), ": ",
          st.message()));
    }
    GroupWork& w = (*work)[it->second];
    s->group = w.group;
    w.shares.push_back(std::move(s));
    ++*total;
    return absl::OkStatus();
  });
}

// Reads the groups (into *table) and the shares (into *work) on this
// thread.
absl::Status ReadRows(Store& store, std::vector<GroupRow>& groups,
                      uint64_t generation, ShareTable* table,
                      std::vector<GroupWork>* work, std::size_t* total) {
  GroupIndex index;
  if (absl::Status added = AddGroups(groups, table, work, &index);
      !added.ok()) {
    return added;
  }
  return ScanShares(store, generation, index, work, total);
}

// Checks and compiles each group's shares and links them into the table,
// groups taken in turn by up to `threads` threads. The first error stops
// every thread (at its next group) and is the result.
class ShareLinker {
 public:
  ShareLinker(std::vector<GroupWork>& work, ShareTable* table)
      : work_(work), table_(table) {}

  absl::Status Run(int threads) {
    const int workers =
        static_cast<int>(std::min<std::size_t>(threads, work_.size()));
    if (workers <= 1) {
      Work();
    } else {
      std::vector<std::thread> pool;
      for (int i = 0; i < workers; ++i) pool.emplace_back([this] { Work(); });
      for (std::thread& t : pool) t.join();
    }
    std::lock_guard<std::mutex> l(mu_);
    return first_error_;
  }

 private:
  // One thread's loop: the next group not yet taken, until none is left
  // or a thread failed.
  void Work() {
    OptionsCache cache;
    InheritedCache inherited;
    for (std::size_t i = next_++; i < work_.size() && !failed_; i = next_++) {
      if (absl::Status s = Compile(work_[i], cache, inherited); !s.ok()) {
        return Fail(std::move(s));
      }
      if (absl::Status s = Link(work_[i]); !s.ok()) return Fail(std::move(s));
      std::vector<std::unique_ptr<Share>>().swap(work_[i].shares);
    }
  }

  // The rules add-share applies to one share's own fields, and its own
  // options compiled and merged with its group's.
  static absl::Status Compile(GroupWork& w, OptionsCache& cache,
                              InheritedCache& inherited) {
    const ShareGroup* group = w.group;
    for (std::unique_ptr<Share>& s : w.shares) {
      if (absl::Status v = internal::ValidateShareFields(s->path, s->resource(),
                                                         s->description());
          !v.ok()) {
        return BadRow(s->id, v.message());
      }
      if (s->options.empty()) continue;
      absl::StatusOr<std::shared_ptr<const ShareOptions>> compiled =
          cache.Get(s->options);
      if (!compiled.ok()) {
        return BadRow(s->id, absl::StrCat(s->path.str(), ": ",
                                          compiled.status().message()));
      }
      s->compiled = *std::move(compiled);
      s->inherited = inherited.Get(group->options, *group->compiled, s->options,
                                   s->compiled, s->replaces_group);
    }
    return absl::OkStatus();
  }

  // Moves a group's shares into the table.
  absl::Status Link(GroupWork& w) {
    std::lock_guard<std::mutex> l(mu_);
    for (auto& s : w.shares) {
      // The store keeps no index by path (schema 5): a path written
      // twice (by hand) is found here.
      if (std::unique_ptr<Share> again = table_->Insert(std::move(s))) {
        const Share* first = table_->Find(again->path);
        return BadRow(again->id,
                      absl::StrCat(again->path.str(), ": path is also row ",
                                   first != nullptr ? first->id : 0));
      }
    }
    return absl::OkStatus();
  }

  void Fail(absl::Status s) {
    std::lock_guard<std::mutex> l(mu_);
    if (first_error_.ok()) first_error_ = std::move(s);
    failed_ = true;
  }

  std::vector<GroupWork>& work_;
  std::atomic<std::size_t> next_{0};
  std::atomic<bool> failed_{false};
  // Guards *table_ and first_error_. A std::mutex, so without
  // ABSL_GUARDED_BY: absl::Mutex made the 4-thread load about 4% slower
  // (libshare_bench Load/4, alternated runs).
  std::mutex mu_;
  ShareTable* const table_;
  absl::Status first_error_;
};

// One pass over the table (each pass over a million shares is a cache miss
// per share) for:
// - the nesting rule, as add-share applies it, with the stored devices: no
//   share has another on its device below it. The table counts shares
//   below each folder per device as it links them, so this is one lookup
//   per share; naming the inner share scans, but only on failure;
// - the shares that can add a warning or take part in one (a limit, a
//   resource name, public), into *noteworthy, and the number of shares
//   that replace their group's options, into *replacing.
absl::Status CheckNesting(const ShareTable& table,
                          std::vector<const Share*>* noteworthy,
                          std::size_t* replacing) {
  absl::Status nesting;
  table.ForEachShare([&](const Share& s) {
    if (nesting.ok() && table.CountBelow(s.path, s.dev) != 0) {
      const Share* inner = table.AnyShareBelow(s.path, s.dev);
      nesting = BadRow(
          inner != nullptr ? inner->id : s.id,
          absl::StrCat(inner != nullptr ? inner->path.str() : s.path.str(),
                       ": path is inside share ", s.path.str(),
                       " on the same file system"));
    }
    *replacing += s.replaces_group;
    if (!s.resource().empty() || s.effective_options()->public_fh ||
        !internal::CheckShareLimits(s.path, s.resource(), s.description())
             .ok()) {
      noteworthy->push_back(&s);
    }
  });
  return nesting;
}

// Rules added after these rows may have been written: warn, serve. The
// warnings are in path order as before; only the `noteworthy` shares are
// sorted (the others say nothing, and sorting 1,000,000 paths took
// ~0.5 s).
void AddWarnings(std::vector<const Share*>& noteworthy, std::size_t replacing,
                 std::vector<std::string>* warnings) {
  absl::flat_hash_map<absl::string_view, absl::string_view> resources;
  std::vector<const Share*> publics;
  std::sort(noteworthy.begin(), noteworthy.end(),
            [](const Share* a, const Share* b) { return a->path < b->path; });
  for (const Share* s : noteworthy) {
    if (absl::Status v = internal::CheckShareLimits(s->path, s->resource(),
                                                    s->description());
        !v.ok()) {
      warnings->push_back(std::string(v.message()));
    }
    if (!s->resource().empty()) {
      auto [it, fresh] =
          resources.emplace(s->resource(), internal::ToAbsl(s->path));
      if (!fresh) {
        warnings->push_back(internal::ResourceTakenMessage(
            s->path, s->resource(),
            std::string_view(it->second.data(), it->second.size())));
      }
    }
    if (s->effective_options()->public_fh) publics.push_back(s);
  }
  if (publics.size() > 1) {
    std::string names;
    for (const Share* s : publics) absl::StrAppend(&names, " ", s->path.str());
    warnings->push_back(absl::StrCat(
        publics.size(), " public shares (share_nfs allows one):", names));
  }
  if (replacing > 0) {
    warnings->push_back(absl::StrCat(
        replacing, replacing == 1 ? " share keeps" : " shares keep",
        " own options written before per-property inheritance; they "
        "replace the group's options whole until they are next set "
        "(sharectl show -v marks them)"));
  }
}

}  // namespace

absl::StatusOr<LoadStats> LoadShareTable(Store& store, int threads,
                                         ShareTable* table) {
  auto start = std::chrono::steady_clock::now();
  threads = std::max(threads, 1);
  if (table->generation() == 0) table->set_generation(1);
  const uint64_t generation = table->generation();

  absl::StatusOr<std::vector<GroupRow>> groups = store.LoadGroups();
  if (!groups.ok()) return groups.status();
  std::vector<GroupWork> work;
  std::size_t total = 0;
  if (absl::Status read =
          ReadRows(store, *groups, generation, table, &work, &total);
      !read.ok()) {
    return read;
  }
  // The scan filled the page cache with every page of the table.
  store.ReleaseMemory();
  table->InstallCapacity(table->PrepareCapacity(total));
  if (absl::Status linked = ShareLinker(work, table).Run(threads);
      !linked.ok()) {
    return linked;
  }

  LoadStats stats;
  std::vector<const Share*> noteworthy;
  std::size_t replacing = 0;
  if (absl::Status nesting = CheckNesting(*table, &noteworthy, &replacing);
      !nesting.ok()) {
    return nesting;
  }
  AddWarnings(noteworthy, replacing, &stats.warnings);
  stats.load_ms = std::chrono::duration<double, std::milli>(
                      std::chrono::steady_clock::now() - start)
                      .count();
  stats.threads = threads;
  stats.shares = table->size();
  stats.groups = table->group_count();
  return stats;
}

}  // namespace libshare
