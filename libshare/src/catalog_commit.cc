// The Catalog's commit: apply runs (group commit), the write-ahead
// pipelining of a big batch, the store transaction, linking into the table
// and the change lists.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <memory>
#include <new>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "catalog_impl.h"
#include "libshare/share_table.h"
#include "libshare/store.h"

namespace libshare {
namespace catalog_internal {
namespace {

// From this many operations on, a batch alone is written while it is
// validated (see ApplyRun).
constexpr std::size_t kWriteAheadOps = 256;

// Writes a batch's steps to the store in order. Adds in a row go in
// statements of many rows (Store::InsertShares), so an add may wait here
// until a step that is not an add, a full run, or Finish writes it.
class StepWriter {
 public:
  explicit StepWriter(TableWriter& store) : store_(store) {}
  absl::Status Write(const Step& step) {
    if (step.noop) return absl::OkStatus();
    const Operation& op = *step.op;
    if (op.type == Op::kAddShare) {
      if (rows_.empty()) rows_.reserve(kRun);  // no-op after the first run
      const Share& s = *step.share;
      std::string_view fs_identity;
      if (s.has_fs_uuid) fs_identity = identities_.emplace_back(s.fs_identity());
      rows_.push_back(ShareFields{s.id, s.path, op.group, s.resource(),
                                  s.description(), s.options, s.dev,
                                  fs_identity});
      return rows_.size() < kRun ? absl::OkStatus() : Finish();
    }
    if (absl::Status s = Finish(); !s.ok()) return s;
    switch (op.type) {
      case Op::kAddShare:  // gathered above
        return absl::OkStatus();
      case Op::kCreateGroup:
        return store_.InsertGroup({op.group.str(), true, op.options.str()});
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
    identities_.clear();
    return s;
  }

 private:
  static constexpr std::size_t kRun = 256;  // a multiple of InsertShares'
  TableWriter& store_;
  std::vector<ShareFields> rows_;  // views of the steps' shares
  // The identities' texts rows_ view (a deque: adding one moves none).
  std::deque<std::string> identities_;
};

// Starts the thread that writes a big batch's steps (`steps`, as Validate
// publishes them in `progress`) into a transaction it begins, while
// Validate goes on; its result goes to `written`. No thread (none could be
// started): an empty one, and the batch is validated first, then written,
// as a small batch.
std::thread StartWriteAhead(Store* store, ValidationProgress& progress,
                            const std::vector<Step>& steps,
                            absl::Status& written) {
  try {
    return std::thread([&progress, &steps, &written, store] {
      absl::Status st;
      try {
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
    return std::thread();
  }
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

}  // namespace


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
  RunMode mode;
  if (cluster_ != nullptr && !run.front()->dry_run) {
    // The engine's generation row stays locked until the commit (or the
    // rollback when the run is refused): validated against the cluster's
    // table as it is, no other head can commit in between.
    absl::StatusOr<ClusterEngine*> engine = ClusterBegin();
    if (!engine.ok()) {
      const uint64_t gen = generation();
      for (BatchResult& r : results) {
        r = BatchResult();
        r.commit_error = std::string(engine.status().message());
        r.store_unreachable = absl::IsUnavailable(engine.status());
        r.generation = gen;
      }
      return;
    }
    mode.engine = *engine;
  }
  struct EngineGuard {
    ClusterEngine* engine;
    ~EngineGuard() {
      if (engine != nullptr) engine->Rollback();  // nothing after a commit
    }
  } engine_guard{mode.engine};
  ApplyRunLocked(run, results, mode);
}

void CatalogImpl::ApplyRunLocked(absl::Span<const Batch* const> run,
                                 absl::Span<BatchResult> results,
                                 const RunMode& mode) {
  using Clock = std::chrono::steady_clock;
  auto ms = [](Clock::time_point from, Clock::time_point to) {
    return std::chrono::duration<double, std::milli>(to - from).count();
  };
  const Clock::time_point t_start = Clock::now();
  Clock::time_point t_validated;
  RunState state;
  state.forced_generation = mode.forced_generation;
  state.live.resize(run.size());
  for (std::size_t i = 0; i < run.size(); ++i) state.live[i] = i;
  state.batch = run.front();
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
    writer = StartWriteAhead(store_.get(), progress, state.steps, written);
  }
  {
    // apply_mu_ already excludes the only writer; the shared lock is for
    // the annotations and costs readers nothing.
    absl::ReaderMutexLock r(&mu_);
    if (rule_indexes_stale_) RebuildRuleIndexes();
    if (!ValidateRun(run, results, state,
                     writer.joinable() ? &progress : nullptr)) {
      return;
    }
    t_validated = Clock::now();
    PrepareLink(state);
  }
  state.first_ids.reserve(state.ends.size());
  uint64_t id = next_id_;
  for (std::size_t k = 0, first = 0; k < state.ends.size();
       first = state.ends[k++]) {
    state.first_ids.push_back(id);
    for (std::size_t i = first; i < state.ends[k]; ++i)
      id += state.steps[i].share != nullptr;
  }
  const absl::Status* ahead = nullptr;
  if (writer.joinable()) {
    progress.Finish();
    writer.join();
    ahead = &written;
    guard.committed = true;  // Commit commits or rolls back
  }
  auto before_commit = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(apply_mu_) {
    return mode.engine != nullptr ? EngineWrite(*mode.engine, run, state)
                                  : absl::OkStatus();
  };
  if (absl::Status s =
          Commit(state.steps, state.next_generation, ahead, before_commit);
      !s.ok()) {
    // Every batch of the transaction fails; nothing changed (here: the
    // cluster's engine may have it, and this head then takes it from the
    // change log, as another head's).
    const uint64_t gen = generation();
    std::string why(s.message());
    if (state.engine_committed) {
      why = absl::StrCat("committed in the cluster at generation ",
                         state.next_generation,
                         ", but this head's copy could not be written (",
                         s.message(),
                         "): this head applies it from the change log");
    } else if (state.engine_commit_unknown) {
      why = absl::StrCat(
          s.message(),
          ": the connection went at the commit, so the cluster may have "
          "taken the batch; this head applies it from the change log if so "
          "(sharectl changes, or stats' generation, tells)");
    }
    // The engine went away during the run: as when it cannot be reached
    // at its start (sharectl exits 3).
    const bool unreachable = mode.engine != nullptr &&
                             !state.engine_committed && absl::IsUnavailable(s);
    for (std::size_t k : state.live) {
      results[k].commit_error = why;
      results[k].store_unreachable = unreachable;
      results[k].generation = gen;
    }
    return;
  }
  commits_.fetch_add(1);
  const Clock::time_point t_committed = Clock::now();
  for (const Step& s : state.steps) {
    if (s.share != nullptr) next_id_ = std::max(next_id_, s.share->id + 1);
  }
  {
    absl::WriterMutexLock w(&mu_);
    LinkSegments(state, results);
  }
  const Clock::time_point t_linked = Clock::now();
  ReportChanges(state, results);
  BatchResult::Times times;
  times.validate_ms = ms(t_start, t_validated);
  times.commit_ms = ms(t_validated, t_committed);
  times.link_ms = ms(t_committed, t_linked);
  times.changes_ms = ms(t_linked, Clock::now());
  for (std::size_t k : state.live) results[k].times = times;
}

bool CatalogImpl::ValidateRun(absl::Span<const Batch* const> run,
                              absl::Span<BatchResult> results, RunState& state,
                              ValidationProgress* progress) {
  std::vector<std::size_t>& live = state.live;
  for (;;) {
    state.ends.clear();
    if (live.size() > 1) {
      state.combined.ops.clear();
      state.combined.manager = run.front()->manager;
      for (std::size_t k : live) {
        state.combined.ops.insert(state.combined.ops.end(), run[k]->ops.begin(),
                                  run[k]->ops.end());
        state.ends.push_back(state.combined.ops.size());
      }
      state.batch = &state.combined;
    } else {
      state.batch = run[live.front()];
      state.ends.push_back(state.batch->ops.size());
    }
    state.steps.clear();
    state.pending.clear();
    std::vector<OperationError> errors;
    const std::size_t refused = Validate(*state.batch, state.ends, &state.steps,
                                         &state.pending, &errors, progress);
    if (refused == state.ends.size()) break;
    // Refused: its own errors, numbered within its own batch; the others
    // are validated again without it.
    const std::size_t first = refused == 0 ? 0 : state.ends[refused - 1];
    BatchResult& result = results[live[refused]];
    for (OperationError& e : errors) e.index -= first;
    result.errors = std::move(errors);
    result.generation = table_.generation();
    live.erase(live.begin() + static_cast<std::ptrdiff_t>(refused));
    if (live.empty()) return false;
  }
  if (state.batch->dry_run) {
    results.front().generation = table_.generation();
    return false;
  }
  return true;
}

void CatalogImpl::PrepareLink(RunState& state) {
  const std::vector<std::size_t>& ends = state.ends;
  const std::vector<Step>& steps = state.steps;
  state.next_generation = table_.generation();
  for (std::size_t k = 0, first = 0; k < ends.size(); first = ends[k++]) {
    for (std::size_t i = first; i < ends[k]; ++i) {
      if (!steps[i].noop) {
        ++state.next_generation;
        break;
      }
    }
  }
  if (state.forced_generation != 0) state.next_generation = state.forced_generation;
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
  for (const std::vector<PendingInherit>& p : state.pending) {
    touches += p.size();
  }
  state.touched.shares.reserve(touches);
  state.buckets = table_.PrepareCapacity(table_.size() + adds);
  // Room for what Link removes, so that linking after the commit does
  // not allocate for it.
  state.dead_shares.reserve(removed_shares);
  state.dead_groups.reserve(removed_groups);
  state.touched_ends.reserve(ends.size());
  state.dead_ends.reserve(ends.size());
}

void CatalogImpl::LinkSegments(RunState& state,
                               absl::Span<BatchResult> results) {
  const std::vector<std::size_t>& ends = state.ends;
  // The store has committed: a table that stopped half-way would serve a
  // state that is neither the old one nor the new one. Stop instead; the
  // next start loads the committed state.
  try {
    state.buckets = table_.InstallCapacity(std::move(state.buckets));
    // Segment by segment, each with its own generation.
    for (std::size_t k = 0, first = 0; k < ends.size(); first = ends[k++]) {
      const uint64_t gen = state.forced_generation != 0
                               ? state.forced_generation
                               : table_.generation() + 1;
      const bool changed =
          Link(state.steps, first, ends[k], state.pending[k], gen,
               &state.dead_shares, &state.dead_groups, &state.touched);
      if (changed || state.forced_generation != 0) table_.set_generation(gen);
      results[state.live[k]].changed = changed;
      results[state.live[k]].generation = table_.generation();
      state.touched_ends.push_back(state.touched.shares.size());
      state.dead_ends.push_back(state.dead_shares.size());
    }
  } catch (const std::bad_alloc&) {
    static constexpr char kMessage[] =
        "libshare: out of memory after a commit; the in-memory table "
        "cannot follow the store; aborting (a restart loads it)\n";
    (void)!::write(2, kMessage, sizeof kMessage - 1);
    std::abort();
  }
}

void CatalogImpl::ReportChanges(RunState& state,
                                absl::Span<BatchResult> results) {
  const std::vector<std::size_t>& ends = state.ends;
  // apply_mu_ is still held: no other writer can change the shares read
  // here, and removed ones live in dead_shares until ApplyRun ends.
  // Out of memory now costs the report, not the committed change.
  for (std::size_t k = 0, first = 0; k < ends.size(); first = ends[k++]) {
    BatchResult& result = results[state.live[k]];
    result.applied = ends[k] - first;
    try {
      if (state.touched.overflow) throw std::bad_alloc();  // see TouchedShares
      absl::Span<const Share* const> t(state.touched.shares);
      absl::Span<const std::unique_ptr<Share>> d(state.dead_shares);
      const std::size_t t0 = k == 0 ? 0 : state.touched_ends[k - 1];
      const std::size_t d0 = k == 0 ? 0 : state.dead_ends[k - 1];
      const std::vector<const Share*> dead_set =
          SortedShares(d.subspan(d0, state.dead_ends[k] - d0));
      result.changes = ChangesOf(t.subspan(t0, state.touched_ends[k] - t0),
                                 dead_set, state.first_ids[k]);
      UpdateRuleIndexes(result, t.subspan(t0, state.touched_ends[k] - t0),
                        dead_set);
    } catch (const std::bad_alloc&) {
      result.changes.clear();
      result.changes_complete = false;
      UpdateRuleIndexes(result, {}, {});
    }
  }
}

absl::Status CatalogImpl::Commit(
    const std::vector<Step>& steps, uint64_t generation,
    const absl::Status* written,
    absl::FunctionRef<absl::Status()> before_commit) {
  if (written == nullptr) {
    if (absl::Status s = store_->Begin(); !s.ok()) return s;
  }
  absl::Status status;
  // An allocation failure must not leave the transaction open: every later
  // Begin() would fail ("transaction within a transaction").
  try {
    status = written != nullptr ? *written : WriteSteps(steps);
    if (status.ok()) status = store_->SaveGeneration(generation);
    if (status.ok()) status = before_commit();
    if (status.ok()) status = store_->Commit();
  } catch (const std::bad_alloc&) {
    status =
        absl::ResourceExhaustedError("out of memory while writing the batch");
  }
  if (!status.ok()) store_->Rollback();
  return status;
}

absl::Status WriteStepsTo(TableWriter& out, const std::vector<Step>& steps) {
  StepWriter w(out);
  for (const Step& step : steps) {
    if (absl::Status s = w.Write(step); !s.ok()) return s;
  }
  return w.Finish();
}

absl::Status CatalogImpl::WriteSteps(const std::vector<Step>& steps) {
  return WriteStepsTo(*store_, steps);
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
        table_.AddGroup(std::move(step.texts->group));
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

}  // namespace catalog_internal
}  // namespace libshare
