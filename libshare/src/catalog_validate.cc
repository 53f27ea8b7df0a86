// The Catalog's validation: each operation's rules against the overlay
// (the table as the batch so far leaves it), the table-wide share_nfs
// rules at the end of each segment, and the rule indexes they read.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "catalog_impl.h"
#include "catalog_overlay.h"
#include "internal_text.h"
#include "libshare/dir_walk.h"
#include "libshare/fs_identity.h"
#include "libshare/options.h"
#include "libshare/path.h"
#include "libshare/share_table.h"
#include "options_cache.h"
#include "share_rules.h"

namespace libshare {
namespace catalog_internal {
namespace {

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
    if (adds < kMinPaths || batch.ops.size() > UINT32_MAX) return;
    ops_.reserve(adds);
    results_.reserve(adds);
    for (std::size_t i = 0; i < batch.ops.size(); ++i) {
      if (batch.ops[i].type == Op::kAddShare) {
        ops_.push_back(static_cast<uint32_t>(i));
      }
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
  // The add-shares' indices (4 bytes each: a batch is far below 2^32).
  std::vector<uint32_t> ops_;
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

}  // namespace

// One Validate call: the overlay as the batch's operations so far leave
// the table, what they gave, and the operation being validated, with the
// ways to refuse it.
struct BatchValidation {
  BatchValidation(const ShareTable& table, const Batch& batch,
                  std::vector<Step>* steps,
                  std::vector<std::vector<PendingInherit>>* pending,
                  std::vector<OperationError>* errors)
      : batch(batch),
        steps(steps),
        pending(pending),
        errors(errors),
        ov(table, batch.ops.size()),
        checks(batch) {}
  BatchValidation(const BatchValidation&) = delete;
  BatchValidation& operator=(const BatchValidation&) = delete;

  void Refuse(std::string msg) { errors->push_back({i, std::move(msg)}); }
  void RefuseStatus(const absl::Status& s) { Refuse(std::string(s.message())); }
  void GroupMissing() {
    Refuse(absl::StrCat("group ", op->group.str(), " does not exist"));
  }
  // True (and the operation refused) if `group` mirrors an exports file
  // and this batch does not come from that file.
  bool ManagedElsewhere(std::string_view group) {
    Overlay::Group* g = ov.FindGroup(group);
    if (replay || g == nullptr || g->managed_by.empty() ||
        g->managed_by == batch.manager) {
      return false;
    }
    Refuse(absl::StrCat("group ", ToAbsl(group), " is managed by ",
                        ToAbsl(g->managed_by),
                        " (sharemgrd --follow-exports): edit that file "
                        "instead"));
    return true;
  }
  // The share at op->path, if it is shared and (when op->group is given)
  // in op->group; otherwise the operation is refused and nullopt returned.
  std::optional<Overlay::ShareState> ShareOfOp() {
    std::optional<Overlay::ShareState> st = ov.FindShare(op->path);
    if (!st) {
      Refuse(absl::StrCat(op->path.str(), ": not shared"));
    } else if (!op->group.empty() && op->group != st->group) {
      Refuse(absl::StrCat(op->path.str(), ": share is in group ",
                          ToAbsl(st->group), ", not ", op->group.str()));
      st.reset();
    } else {
      step->share_id = st->id;
    }
    return st;
  }

  const Batch& batch;
  std::vector<Step>* steps;
  std::vector<std::vector<PendingInherit>>* pending;
  std::vector<OperationError>* errors;  // indexed in the whole batch
  Overlay ov;
  OptionsCache cache;
  DirectoryChecks checks;
  // A batch another head committed (catalog_cluster.cc): it was valid
  // there, against the same table. Only what depends on this head's own
  // file systems is not asked again: whether the folder exists here and
  // what it is nested in (a share is served where its file system is
  // mounted, fs_watch), and whose followed file manages a group.
  bool replay = false;
  // Resource names the batch gives, with the share that took each last.
  std::unordered_map<std::string_view, std::string_view> batch_resources;
  // File-system identities found for this batch's adds, by device
  // (Config::identify's answers that are the device's).
  absl::flat_hash_map<uint64_t, std::optional<FsUuid>> identities;
  // Descriptions the batch gives (add-share, set-share -d), by share: a
  // later set-share without -d keeps the latest, not the table's.
  std::unordered_map<std::string_view, std::string_view> batch_descriptions;
  std::size_t segment = 0;
  std::size_t segment_begin = 0;
  uint64_t id = 0;  // the store row of the next share added
  // The operation being validated: batch.ops[i], and its step.
  std::size_t i = 0;
  const Operation* op = nullptr;
  Step* step = nullptr;
};

namespace {

// Each operation's rules, on the operation `v` is at: refuse it (v.Refuse),
// or record its effect in v.ov and prepare its step.

void ValidateCreateGroup(BatchValidation& v) {
  const Operation& op = *v.op;
  Step& step = *v.step;
  if (absl::Status s = ValidateGroupName(op.group); !s.ok()) {
    v.RefuseStatus(s);
    return;
  }
  if (v.ov.FindGroup(op.group) != nullptr) {
    v.Refuse(absl::StrCat("group ", op.group.str(), " already exists"));
    return;
  }
  // A group with bad options is still created in the overlay, so the
  // batch's later operations on it are not refused in cascade.
  absl::StatusOr<std::shared_ptr<const ShareOptions>> compiled =
      v.cache.Get(op.options);
  v.ov.CreateGroup(op.group, op.options, compiled.ok() ? *compiled : nullptr);
  if (!compiled.ok()) {
    v.Refuse(absl::StrCat("group ", op.group.str(), ": ",
                          compiled.status().message()));
    return;
  }
  std::unique_ptr<ShareGroup>& g = step.Texts().group;
  g = std::make_unique<ShareGroup>();
  g->name = op.group;
  g->enabled = true;
  g->options = op.options;
  g->compiled = *std::move(compiled);
}

void ValidateDeleteGroup(BatchValidation& v) {
  const Operation& op = *v.op;
  Step& step = *v.step;
  Overlay::Group* g = v.ov.FindGroup(op.group);
  if (g == nullptr) {
    v.GroupMissing();
    return;
  }
  if (v.ManagedElsewhere(op.group)) return;
  if (g->count > 0 && !op.force) {
    v.Refuse(absl::StrCat("group ", op.group.str(), " has ", g->count,
                          g->count == 1 ? " share" : " shares", "; use -f"));
    return;
  }
  step.group_has_shares = g->count > 0;
  v.ov.DeleteGroup(op.group);
}

// kEnableGroup and kDisableGroup.
void ValidateEnableGroup(BatchValidation& v) {
  const Operation& op = *v.op;
  Step& step = *v.step;
  Overlay::Group* g = v.ov.FindGroup(op.group);
  if (g == nullptr) {
    v.GroupMissing();
    return;
  }
  bool enable = op.type == Op::kEnableGroup;
  step.noop = g->enabled == enable;
  g->enabled = enable;
}

void ValidateRemoveShare(BatchValidation& v) {
  const Operation& op = *v.op;
  std::optional<Overlay::ShareState> s = v.ShareOfOp();
  if (!s) return;
  if (v.ManagedElsewhere(s->group)) return;
  v.ov.RemoveShare(op.path);
}

void ValidateMoveShare(BatchValidation& v) {
  const Operation& op = *v.op;
  Step& step = *v.step;
  std::optional<Overlay::ShareState> s = v.ov.FindShare(op.path);
  if (!s) {
    v.Refuse(absl::StrCat(op.path.str(), ": not shared"));
    return;
  }
  if (v.ov.FindGroup(op.group) == nullptr) {
    v.GroupMissing();
    return;
  }
  if (v.ManagedElsewhere(s->group) || v.ManagedElsewhere(op.group)) return;
  step.share_id = s->id;
  step.noop = s->group == op.group;
  if (!step.noop) v.ov.MoveShare(op.path, op.group);
}

void ValidateSetOptions(BatchValidation& v) {
  const Operation& op = *v.op;
  Step& step = *v.step;
  if (v.ov.FindGroup(op.group) == nullptr) {
    v.GroupMissing();
    return;
  }
  if (v.ManagedElsewhere(op.group)) return;
  std::optional<Overlay::ShareState> st;
  if (!op.path.empty() && !(st = v.ShareOfOp())) return;
  std::shared_ptr<const ShareOptions> compiled;
  if (op.path.empty() || !op.options.empty()) {
    absl::StatusOr<std::shared_ptr<const ShareOptions>> c =
        v.cache.Get(op.options);
    if (!c.ok()) {
      v.Refuse(absl::StrCat(
          op.path.empty() ? "group " + op.group.str() : op.path.str(), ": ",
          c.status().message()));
      return;
    }
    compiled = *std::move(c);
  }
  // The same text again changes nothing (a configuration tool that
  // applies its settings on every run): no new generation, no row
  // written, and no change reported for the group's shares, which
  // would have their kernel entries rewritten.
  step.noop = st ? st->own == op.options && !st->replaces
                 : v.ov.FindGroup(op.group)->options == op.options;
  if (step.noop) return;
  StepTexts& t = step.Texts();
  t.text = op.options;
  t.compiled = compiled;
  SetOwnOptions(v.ov, op.group, op.path, op.options, std::move(compiled));
}

void ValidateUnsetOption(BatchValidation& v) {
  const Operation& op = *v.op;
  Step& step = *v.step;
  Overlay::Group* g = v.ov.FindGroup(op.group);
  if (g == nullptr) {
    v.GroupMissing();
    return;
  }
  std::string_view own = g->options;
  std::string who = absl::StrCat("group ", op.group.str());
  if (!op.path.empty()) {
    std::optional<Overlay::ShareState> st = v.ShareOfOp();
    if (!st) return;
    own = st->own;
    who = op.path;
  }
  if (!op.path.empty() && op.options == "all") {
    if (own.empty()) {
      v.Refuse(absl::StrCat(who,
                            ": has no options of its own (all come "
                            "from group ",
                            op.group.str(), ")"));
      return;
    }
    StepTexts& t = step.Texts();
    t.text.clear();
    SetOwnOptions(v.ov, op.group, op.path, t.text, nullptr);
    return;
  }
  absl::StatusOr<std::shared_ptr<const ShareOptions>> before = v.cache.Get(own);
  if (!before.ok()) {
    v.Refuse(absl::StrCat(who, ": ", before.status().message()));
    return;
  }
  absl::StatusOr<ShareOptions> after =
      RemoveOptionProperty(**before, op.options);
  if (!after.ok()) {
    std::string why(after.status().message());
    if (absl::IsNotFound(after.status())) {
      absl::StrAppend(&why, op.path.empty() ? " in the group's options"
                                            : " in the share's own options");
    }
    v.Refuse(absl::StrCat(who, ": ", why));
    return;
  }
  if (op.path.empty() && !OpensReadWriteToAll(**before) &&
      OpensReadWriteToAll(*after)) {
    v.Refuse(absl::StrCat(
        who, ": removing ", op.options.str(),
        " would make its shares read-write to every client; write "
        "the options you want with set -o (\"rw\" says so explicitly)"));
    return;
  }
  StepTexts& t = step.Texts();
  t.text = after->Canonical();
  if (op.path.empty() || !t.text.empty()) {
    absl::StatusOr<std::shared_ptr<const ShareOptions>> c = v.cache.Get(t.text);
    if (!c.ok()) {
      v.Refuse(absl::StrCat(who, ": ", c.status().message()));
      return;
    }
    t.compiled = *std::move(c);
  }
  SetOwnOptions(v.ov, op.group, op.path, t.text, t.compiled);
}

void ValidateManageGroup(BatchValidation& v) {
  const Operation& op = *v.op;
  Step& step = *v.step;
  Overlay::Group* g = v.ov.FindGroup(op.group);
  if (g == nullptr) {
    v.GroupMissing();
    return;
  }
  if (v.batch.manager.empty() ||
      (!op.path.empty() && op.path != v.batch.manager)) {
    v.Refuse(absl::StrCat("group ", op.group.str(),
                          ": only the daemon's exports follower marks "
                          "groups as managed"));
    return;
  }
  if (v.ManagedElsewhere(op.group)) return;
  step.noop = g->managed_by == op.path;
  g->managed_by = op.path;
}
}  // namespace

std::size_t CatalogImpl::Validate(
    const Batch& batch, const std::vector<std::size_t>& ends,
    std::vector<Step>* steps, std::vector<std::vector<PendingInherit>>* pending,
    std::vector<OperationError>* errors, ValidationProgress* progress) {
  BatchValidation v(table_, batch, steps, pending, errors);
  v.replay = replaying_;
  pending->resize(ends.size());
  while (v.segment < ends.size() && ends[v.segment] == 0) {
    if (EndSegment(v, 0)) return v.segment;
  }
  v.id = next_id_;
  steps->resize(batch.ops.size());
  for (std::size_t i = 0; i < batch.ops.size(); ++i) {
    const Operation& op = batch.ops[i];
    Step& step = (*steps)[i];
    step.op = &op;
    v.i = i;
    v.op = &op;
    v.step = &step;
    if (!op.fs_identity.empty() && op.type != Op::kAddShare) {
      v.Refuse(absl::StrCat(op.path.empty() ? op.group.str() : op.path.str(),
                            ": a file-system identity is recorded only when "
                            "a share is added"));
    } else {
      ValidateOne(v);
    }
    if (!errors->empty()) {
      // Nothing will be linked; free what was prepared as we go.
      step.share.reset();
      // Not the text: the overlay may view it.
      if (step.texts != nullptr) {
        step.texts->group.reset();
        step.texts->compiled.reset();
      }
    } else {
      if (step.op->type == Op::kManageGroup) step.Texts().text = op.path;
      if (progress != nullptr) progress->Publish(i + 1);
    }
    while (v.segment < ends.size() && ends[v.segment] == i + 1) {
      if (EndSegment(v, i + 1)) return v.segment;
    }
  }
  while (v.segment < ends.size()) {  // empty segments at the end
    if (EndSegment(v, batch.ops.size())) return v.segment;
  }
  return ends.size();
}

void CatalogImpl::ValidateOne(BatchValidation& v) {
  switch (v.op->type) {
    case Op::kCreateGroup:
      ValidateCreateGroup(v);
      break;
    case Op::kDeleteGroup:
      ValidateDeleteGroup(v);
      break;
    case Op::kEnableGroup:
    case Op::kDisableGroup:
      ValidateEnableGroup(v);
      break;
    case Op::kAddShare:
      ValidateAddShare(v);
      break;
    case Op::kRemoveShare:
      ValidateRemoveShare(v);
      break;
    case Op::kMoveShare:
      ValidateMoveShare(v);
      break;
    case Op::kSetOptions:
      ValidateSetOptions(v);
      break;
    case Op::kModifyShare:
      ValidateModifyShare(v);
      break;
    case Op::kUnsetOption:
      ValidateUnsetOption(v);
      break;
    case Op::kManageGroup:
      ValidateManageGroup(v);
      break;
  }
}

std::optional<FsUuid> CatalogImpl::IdentityOf(BatchValidation& v,
                                              std::string_view path,
                                              uint64_t dev) {
  if (auto it = v.identities.find(dev); it != v.identities.end()) {
    return it->second;
  }
  Config::FsIdentityAnswer a = identify_(std::string(path), dev);
  if (a.per_device) v.identities.emplace(dev, a.uuid);
  return a.uuid;
}

bool CatalogImpl::EndSegment(BatchValidation& v, std::size_t end) {
  if (v.errors->empty()) {
    InheritPass(table_, *v.steps, end, static_cast<uint32_t>(v.segment),
                public_, v.ov, v.cache, &(*v.pending)[v.segment]);
    CheckPublic(v.batch, v.segment_begin, end, v.ov, (*v.pending)[v.segment],
                v.errors);
  }
  if (!v.errors->empty()) return true;
  v.segment_begin = end;
  ++v.segment;
  return false;
}

std::optional<std::string_view> CatalogImpl::ResourceUser(
    BatchValidation& v, std::string_view res, std::string_view path) {
  if (res.empty()) return std::nullopt;
  auto claimed = [&](std::string_view p) {
    if (p == path) return false;
    std::optional<Overlay::ShareState> st = v.ov.FindShare(p);
    return st && st->resource == res;
  };
  if (auto it = v.batch_resources.find(res);
      it != v.batch_resources.end() && claimed(it->second)) {
    return it->second;
  }
  if (auto it = resource_owner_.find(std::string(res));
      it != resource_owner_.end() && claimed(it->second)) {
    return std::string_view(it->second);
  }
  return std::nullopt;
}

void CatalogImpl::ValidateAddShare(BatchValidation& v) {
  const Operation& op = *v.op;
  Step& step = *v.step;
  if (absl::Status s =
          internal::ValidateShareFields(op.path, op.resource, op.description);
      !s.ok()) {
    v.RefuseStatus(s);
    return;
  }
  if (v.ov.FindGroup(op.group) == nullptr) {
    v.GroupMissing();
    return;
  }
  if (v.ManagedElsewhere(op.group)) return;
  bool touched = false;
  if (std::optional<Overlay::ShareState> s =
          v.ov.FindShare(op.path, &touched)) {
    v.Refuse(absl::StrCat(op.path.str(), ": already shared (group ",
                          ToAbsl(s->group), ")"));
    return;
  }
  if (absl::Status s =
          internal::CheckShareLimits(op.path, op.resource, op.description);
      !s.ok()) {
    v.RefuseStatus(s);
    return;
  }
  if (std::optional<std::string_view> user =
          ResourceUser(v, op.resource, op.path)) {
    v.Refuse(internal::ResourceTakenMessage(op.path, op.resource, *user));
    return;
  }
  if (absl::StatusOr<std::optional<FsUuid>> id =
          ParseFsIdentity(op.fs_identity);
      !id.ok()) {
    v.Refuse(absl::StrCat(op.path.str(), ": ", id.status().message()));
    return;
  }
  absl::StatusOr<DirectoryPlace> place = v.checks.Get(v.i);
  if (!place.ok()) {
    if (!v.replay) {
      v.RefuseStatus(place.status());
      return;
    }
    place = DirectoryPlace{};  // not here (yet): not served until it is
  }
  const uint64_t dev = place->dev;
  if (absl::Status s = v.ov.CheckNesting(op.path, dev);
      !s.ok() && !v.replay) {
    v.RefuseStatus(s);
    return;
  }
  v.ov.AddShare(op.path, op.group, dev, op.options, op.resource,
                static_cast<uint32_t>(v.segment), v.id);
  if (!op.resource.empty()) v.batch_resources[op.resource] = op.path;
  // An empty description needs an entry only to shadow one the
  // table or an earlier operation gives the path (removed, then
  // added again); without it ValidateModifyShare's lookup finds ""
  // anyway. Most adds have none: no map insert for them.
  // Untouched by the batch, the path is not in the table either
  // (FindShare looked there).
  if (!op.description.empty() || (touched && table_.Find(op.path) != nullptr) ||
      v.batch_descriptions.count(op.path) != 0) {
    v.batch_descriptions[op.path] = op.description;
  }
  std::shared_ptr<const ShareOptions> compiled;
  if (!op.options.empty()) {
    absl::StatusOr<std::shared_ptr<const ShareOptions>> c =
        v.cache.Get(op.options);
    if (!c.ok()) {
      v.Refuse(absl::StrCat(op.path.str(), ": ", c.status().message()));
      return;
    }
    compiled = *std::move(c);
  }
  step.share = std::make_unique<Share>();
  step.share->id = v.id++;
  step.share->dev = dev;
  step.share->mount_root = place->mount_root;
  if (!op.fs_identity.empty() || v.replay || !identify_) {
    // Given (an import's uuid=, another head's record), or none to find:
    // the text was checked above.
    (void)step.share->SetFsIdentity(op.fs_identity);
  } else if (std::optional<FsUuid> id = IdentityOf(v, op.path, dev)) {
    step.share->has_fs_uuid = true;
    step.share->fs_uuid = *id;
  }
  step.share->path = op.path;
  step.share->texts = ShareTexts::Make(op.resource, op.description);
  step.share->options = op.options;
  step.share->compiled = std::move(compiled);
}

void CatalogImpl::ValidateModifyShare(BatchValidation& v) {
  const Operation& op = *v.op;
  Step& step = *v.step;
  std::optional<Overlay::ShareState> st = v.ShareOfOp();
  if (!st) return;
  if (!op.set_options && !op.set_description && !op.set_resource) {
    v.Refuse(absl::StrCat(op.path.str(), ": nothing to change"));
    return;
  }
  std::string_view description;
  if (op.set_description) {
    description = op.description;
  } else if (auto it = v.batch_descriptions.find(op.path);
             it != v.batch_descriptions.end()) {
    description = it->second;  // added or described earlier
  } else if (const Share* current = table_.Find(op.path)) {
    description = current->description();
  }
  std::string_view resource =
      op.set_resource ? std::string_view(op.resource) : st->resource;
  if (absl::Status s =
          internal::ValidateShareFields(op.path, resource, description);
      !s.ok()) {
    v.RefuseStatus(s);
    return;
  }
  if (absl::Status s =
          internal::CheckShareLimits(op.path, resource, description);
      !s.ok()) {
    v.RefuseStatus(s);
    return;
  }
  if (std::optional<std::string_view> user =
          ResourceUser(v, resource, op.path)) {
    v.Refuse(internal::ResourceTakenMessage(op.path, resource, *user));
    return;
  }
  std::shared_ptr<const ShareOptions> compiled;
  if (op.set_options && !op.options.empty()) {
    absl::StatusOr<std::shared_ptr<const ShareOptions>> c =
        v.cache.Get(op.options);
    if (!c.ok()) {
      v.Refuse(absl::StrCat(op.path.str(), ": ", c.status().message()));
      return;
    }
    compiled = *std::move(c);
  }
  StepTexts& t = step.Texts();
  t.share_texts = ShareTexts::Make(resource, description);
  st->resource = op.set_resource ? std::string_view(op.resource) : st->resource;
  v.ov.UpdateShare(op.path, *st);
  if (op.set_resource && !op.resource.empty()) {
    v.batch_resources[op.resource] = op.path;
  }
  if (op.set_description) v.batch_descriptions[op.path] = op.description;
  if (op.set_options) {
    t.text = op.options;
    t.compiled = compiled;
    SetOwnOptions(v.ov, st->group, op.path, op.options, std::move(compiled));
  }
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
      resource_owner_.emplace(s.resource(), s.path.str());
      resource_of_.emplace(s.path.str(), s.resource());
    }
    if (s.effective_options()->public_fh) public_.push_back(s.path.str());
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
        [&](std::string_view view) ABSL_EXCLUSIVE_LOCKS_REQUIRED(apply_mu_) {
          const std::string path(view);
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
        resource_owner_.emplace(s->resource(), s->path.str());
        resource_of_.emplace(s->path.str(), s->resource());
      }
      if (s->effective_options()->public_fh) public_.push_back(s->path.str());
    }
  } catch (const std::bad_alloc&) {
    rule_indexes_stale_ = true;  // the next Apply rebuilds them
  }
}

}  // namespace catalog_internal
}  // namespace libshare
