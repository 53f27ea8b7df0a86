// The Catalog in cluster mode (Catalog::Config::engine): the table is the
// engine's (PostgreSQL), shared by several heads; each head keeps a copy
// in its own SQLite store and serves from it.
//
// A local batch: ApplyRun's ClusterBegin locks the engine's generation
// row, catches this head up to it (the records after its generation, as
// replays), and the run is validated against that; EngineWrite writes its
// rows, one change record per batch and the new generation into the
// engine's transaction, which commits before the head's copy does.
//
// Other heads' batches: the follower thread waits for the engine's
// notifications (or follow_ms), and replays the records after this head's
// generation through the same validation and linking as a local batch
// (BatchValidation::replay skips only what depends on this head's own file
// systems), each taking the generation it made in the cluster. A record
// this head cannot take (a gap in the log, a generation that went
// backwards, a copy of another cluster, a record its table refuses) makes
// a full resynchronization: the differences between the engine's table
// and this head's, applied as one batch, so unchanged shares are untouched
// (their kernel entries are not rewritten).
//
// Without the engine a head serves its copy and refuses changes, naming
// the engine and why; the follower reconnects every follow_ms.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "batch_codec.h"
#include "catalog_impl.h"
#include "libshare/cluster_engine.h"
#include "libshare/store.h"

namespace libshare {
namespace catalog_internal {
namespace {

constexpr char kClusterIdKey[] = "cluster_id";

// The operations that turn the table `groups`/`shares` into `target`:
// only what differs, so that a share left as it was is not reported.
Batch DiffBatch(const std::vector<GroupInfo>& groups,
                const std::vector<ShareInfo>& shares,
                const EngineTable& target) {
  Batch b;
  std::map<std::string_view, const GroupInfo*> have_groups;
  for (const GroupInfo& g : groups) have_groups[g.name] = &g;
  std::map<std::string_view, const ShareInfo*> have_shares;
  for (const ShareInfo& s : shares) have_shares[s.path] = &s;
  std::map<std::string_view, const GroupRow*> want_groups;
  for (const GroupRow& g : target.groups) want_groups[g.name] = &g;
  std::map<std::string_view, const EngineShareRow*> want_shares;
  for (const EngineShareRow& s : target.shares) want_shares[s.path] = &s;

  auto op = [&b](Operation::Type t, std::string_view group,
                 std::string_view path = {}) -> Operation& {
    Operation& o = b.ops.emplace_back();
    o.type = t;
    o.group = std::string(group);
    o.path = std::string(path);
    return o;
  };
  for (const GroupRow& g : target.groups) {
    auto it = have_groups.find(g.name);
    if (it == have_groups.end()) {
      op(Operation::Type::kCreateGroup, g.name).options = g.options;
      if (!g.enabled) op(Operation::Type::kDisableGroup, g.name);
      if (!g.managed_by.empty()) {
        op(Operation::Type::kManageGroup, g.name, g.managed_by);
      }
      continue;
    }
    const GroupInfo& h = *it->second;
    if (h.options != g.options) {
      op(Operation::Type::kSetOptions, g.name).options = g.options;
    }
    if (h.enabled != g.enabled) {
      op(g.enabled ? Operation::Type::kEnableGroup
                   : Operation::Type::kDisableGroup,
         g.name);
    }
    if (h.managed_by != g.managed_by) {
      op(Operation::Type::kManageGroup, g.name, g.managed_by);
    }
  }
  for (const ShareInfo& s : shares) {
    if (want_shares.count(s.path) == 0) {
      op(Operation::Type::kRemoveShare, "", s.path);
    }
  }
  for (const EngineShareRow& w : target.shares) {
    auto it = have_shares.find(w.path);
    if (it == have_shares.end()) continue;
    const ShareInfo& h = *it->second;
    if (h.group != w.group) op(Operation::Type::kMoveShare, w.group, w.path);
    if (h.options != w.options || h.description != w.description ||
        h.resource != w.resource) {
      Operation& m = op(Operation::Type::kModifyShare, "", w.path);
      m.set_options = h.options != w.options;
      m.set_description = h.description != w.description;
      m.set_resource = h.resource != w.resource;
      m.options = w.options;
      m.description = w.description;
      m.resource = w.resource;
    }
  }
  for (const EngineShareRow& w : target.shares) {
    if (have_shares.count(w.path) != 0) continue;
    Operation& a = op(Operation::Type::kAddShare, w.group, w.path);
    a.options = w.options;
    a.description = w.description;
    a.resource = w.resource;
    a.fs_identity = w.fs_identity;
  }
  for (const GroupInfo& g : groups) {
    if (want_groups.count(g.name) == 0) {
      op(Operation::Type::kDeleteGroup, g.name).force = true;
    }
  }
  return b;
}

// A new engine's generation is 1, as a new table's (loader.cc).
bool EngineIsEmpty(const EngineTable& t) {
  return t.head.generation <= 1 && t.groups.empty() && t.shares.empty();
}

}  // namespace

void ClusterState::Reached(uint64_t cluster_generation) {
  bool back = false;
  {
    absl::MutexLock l(&status_mu);
    back = !status.reachable;
    status.reachable = true;
    status.unreachable_since = 0;
    status.cluster = cluster_generation;
    status.error.clear();
  }
  if (back) Log(absl::StrCat("cluster engine reached again: ", status_where()));
}

void ClusterState::Lost(const absl::Status& why) {
  bool first = false;
  {
    absl::MutexLock l(&status_mu);
    first = status.reachable;
    status.reachable = false;
    if (first) status.unreachable_since = absl::ToUnixSeconds(absl::Now());
    status.error = std::string(why.message());
  }
  if (first) {
    Log(absl::StrCat("cluster engine unreachable: ", why.message(),
                     "; serving this head's copy, changes refused until it "
                     "is back"));
  }
}

std::string ClusterState::status_where() const {
  absl::MutexLock l(&status_mu);
  return status.engine;
}

CatalogImpl::~CatalogImpl() {
  if (cluster_ == nullptr) return;
  {
    absl::MutexLock l(&cluster_->stop_mu);
    cluster_->stop = true;
  }
  if (cluster_->follower.joinable()) cluster_->follower.join();
}

StoreStatus CatalogImpl::store_status() const {
  if (cluster_ == nullptr) {
    StoreStatus s;
    s.applied = generation();
    s.cluster = s.applied;
    return s;
  }
  StoreStatus s;
  {
    absl::MutexLock l(&cluster_->status_mu);
    s = cluster_->status;
  }
  s.applied = generation();
  return s;
}

absl::StatusOr<ClusterEngine*> CatalogImpl::ClusterBegin() {
  ClusterState& c = *cluster_;
  absl::Status why;
  // Twice: a connection the engine dropped since the last batch (a
  // restart) fails only when used; a new one is then tried at once.
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (c.writer == nullptr) {
      absl::StatusOr<std::unique_ptr<ClusterEngine>> e = c.connect();
      if (!e.ok()) {
        why = e.status();
        break;
      }
      c.writer = *std::move(e);
    }
    absl::StatusOr<EngineHead> head = c.writer->Lock();
    if (!head.ok()) {
      why = head.status();
      c.writer->Rollback();
      c.writer.reset();
      continue;
    }
    c.Reached(head->generation);
    if (absl::Status s = CatchUp(*c.writer, *head); !s.ok()) {
      c.writer->Rollback();
      if (absl::IsUnavailable(s)) {  // the engine went while catching up
        why = s;
        c.writer.reset();
        continue;
      }
      return absl::FailedPreconditionError(absl::StrCat(
          "changes are refused: this head cannot catch up with the cluster "
          "(",
          s.message(), ")"));
    }
    return c.writer.get();
  }
  c.Lost(why);
  return absl::UnavailableError(absl::StrCat(
      "changes are refused while the cluster's engine is unreachable (",
      why.message(), "); this head serves its copy at generation ",
      generation()));
}

absl::Status CatalogImpl::CatchUp(ClusterEngine& engine,
                                  const EngineHead& head) {
  ClusterState& c = *cluster_;
  const uint64_t applied = generation();
  if (head.cluster_id != c.local_cluster_id) {
    return Resync(engine, c.local_cluster_id.empty()
                              ? "this head's copy has not been of a cluster"
                              : "this head's copy is of another cluster");
  }
  if (head.generation == applied) return absl::OkStatus();
  if (head.generation < applied) {
    return Resync(engine,
                  absl::StrCat("the engine's generation ", head.generation,
                               " is behind this head's ", applied,
                               " (restored from an older copy, or a standby "
                               "that lagged took over)"));
  }
  absl::StatusOr<std::vector<EngineChange>> changes =
      engine.ChangesAfter(applied, head.generation);
  if (!changes.ok()) return changes.status();
  uint64_t expect = applied + 1;
  for (const EngineChange& ch : *changes) {
    if (ch.generation != expect) break;
    ++expect;
  }
  if (expect != head.generation + 1) {
    return Resync(engine, absl::StrCat("the change log lacks generation ",
                                       expect, " (trimmed)"));
  }
  for (const EngineChange& ch : *changes) {
    absl::StatusOr<Batch> batch = internal::DecodeBatch(ch.batch);
    if (!batch.ok()) {
      return Resync(engine, absl::StrCat("generation ", ch.generation, ": ",
                                         batch.status().message()));
    }
    absl::StatusOr<BatchResult> r = Replay(*batch, ch.generation, ch.head);
    if (!r.ok()) {
      if (absl::IsFailedPrecondition(r.status())) {
        return Resync(engine, absl::StrCat("generation ", ch.generation,
                                           " from head ", ch.head,
                                           " is refused here: ",
                                           r.status().message()));
      }
      return r.status();  // this head's copy: try again later
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<BatchResult> CatalogImpl::Replay(const Batch& batch,
                                                uint64_t generation,
                                                std::string_view from_head) {
  BatchResult r;
  const Batch* one = &batch;
  RunMode mode;
  mode.forced_generation = generation;
  replaying_ = true;
  try {
    ApplyRunLocked(absl::MakeConstSpan(&one, 1), absl::MakeSpan(&r, 1), mode);
  } catch (const std::bad_alloc&) {
    replaying_ = false;
    return absl::ResourceExhaustedError("out of memory applying a change");
  }
  replaying_ = false;
  if (!r.errors.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("operation ", r.errors.front().index + 1, ": ",
                     r.errors.front().message));
  }
  if (!r.commit_error.empty()) return absl::InternalError(r.commit_error);
  ClusterState& c = *cluster_;
  if (c.started && c.on_replicated) c.on_replicated(batch, r, from_head);
  return r;
}

absl::Status CatalogImpl::Resync(ClusterEngine& engine, std::string_view why) {
  ClusterState& c = *cluster_;
  absl::StatusOr<EngineTable> table = engine.LoadTable();
  if (!table.ok()) return table.status();
  const uint64_t applied = generation();
  const std::vector<GroupInfo> groups = ListGroups();
  absl::StatusOr<std::vector<ShareInfo>> shares = ListShares({});
  if (!shares.ok()) return shares.status();
  if (EngineIsEmpty(*table) && c.local_cluster_id.empty() &&
      !groups.empty()) {
    // A new cluster: this head's table seeds it (a single server moving
    // to the engine keeps its shares). Generation 1 holds them all.
    EngineTable mine;
    for (const GroupInfo& g : groups) {
      mine.groups.push_back({g.name, g.enabled, g.options, g.managed_by});
    }
    for (const ShareInfo& s : *shares) {
      mine.shares.push_back({s.path, s.group, s.resource, s.description,
                             s.options, s.fs_identity});
    }
    Batch seed = DiffBatch({}, {}, mine);
    seed.origin = absl::StrCat("seeded from head ", c.head);
    if (engine.in_transaction()) {
      // A batch's transaction (ClusterBegin): seeding commits on its own,
      // which the follower does within follow_ms.
      return absl::UnavailableError(
          "the cluster's engine is empty and about to be seeded from this "
          "head's table; try again in a moment");
    }
    absl::StatusOr<EngineHead> locked = engine.Lock();
    if (!locked.ok()) return locked.status();
    absl::Status s;
    if (locked->generation > 1) {
      engine.Rollback();
      return absl::AbortedError("another head seeded the cluster first");
    }
    for (const GroupRow& g : mine.groups) {
      if (s.ok()) s = engine.InsertGroup(g);
      if (s.ok() && !g.managed_by.empty()) {
        s = engine.SetGroupManager(g.name, g.managed_by);
      }
    }
    std::vector<ShareFields> rows;
    rows.reserve(mine.shares.size());
    for (const EngineShareRow& r : mine.shares) {
      rows.push_back(ShareFields{0, r.path, r.group, r.resource, r.description,
                                 r.options, 0, r.fs_identity});
    }
    if (s.ok()) s = engine.InsertShares(rows);
    const uint64_t gen = std::max<uint64_t>(applied, 1);
    if (s.ok()) s = engine.AppendChange(gen, c.head, internal::EncodeBatch(seed));
    if (s.ok()) s = engine.Publish(gen);
    if (s.ok()) s = engine.Commit();
    if (!s.ok()) {
      engine.Rollback();
      return s;
    }
    table->head.generation = gen;
    c.Log(absl::StrCat("cluster seeded from this head's table: ",
                       mine.groups.size(), " groups, ", mine.shares.size(),
                       " shares, generation ", gen));
    // This head's table is the engine's now; only the generation moves.
    table->groups = std::move(mine.groups);
    table->shares = std::move(mine.shares);
  }
  Batch diff = DiffBatch(groups, *shares, *table);
  diff.origin = absl::StrCat("resynchronization with the cluster");
  // A first contact that finds the same table (a new head of a new
  // cluster, or the head that just seeded it) is not worth a line.
  const bool quiet = diff.ops.empty() && applied == table->head.generation;
  if (!quiet) c.Log(absl::StrCat("resynchronizing with the cluster: ", std::string(why),
                     "; this head was at generation ", applied,
                     ", the engine is at ", table->head.generation, "; ",
                     diff.ops.size(),
                     diff.ops.size() == 1 ? " operation brings"
                                          : " operations bring",
                     " this head's table to the engine's"));
  absl::StatusOr<BatchResult> r = Replay(diff, table->head.generation, "");
  if (!r.ok()) {
    c.Log(absl::StrCat("resynchronization refused: ", r.status().message()));
    return absl::InternalError(
        absl::StrCat("resynchronization refused: ", r.status().message()));
  }
  if (absl::Status s = store_->SaveMeta(kClusterIdKey, table->head.cluster_id);
      !s.ok()) {
    return s;
  }
  c.local_cluster_id = table->head.cluster_id;
  if (!quiet) {
    absl::MutexLock l(&c.status_mu);
    ++c.status.resyncs;
  }
  return absl::OkStatus();
}

absl::Status CatalogImpl::EngineWrite(ClusterEngine& engine,
                                      absl::Span<const Batch* const> run,
                                      RunState& state) {
  if (absl::Status s = WriteStepsTo(engine, state.steps); !s.ok()) return s;
  uint64_t gen = generation();
  for (std::size_t k = 0, first = 0; k < state.ends.size();
       first = state.ends[k++]) {
    bool changes = false;
    for (std::size_t i = first; i < state.ends[k] && !changes; ++i) {
      changes = !state.steps[i].noop;
    }
    if (!changes) continue;
    const Batch& caller = *run[state.live[k]];
    // Each add's record carries the identity it recorded here, so every
    // head records the same one.
    std::string identity;
    auto identity_of = [&state, &identity](std::size_t i) -> std::string_view {
      const Share* share = state.steps[i].share.get();
      identity = share != nullptr ? share->fs_identity() : std::string();
      return identity;
    };
    if (absl::Status s = engine.AppendChange(
            ++gen, cluster_->head,
            internal::EncodeBatch(*state.batch, first, state.ends[k],
                                  caller.manager, caller.origin, identity_of));
        !s.ok()) {
      return s;
    }
  }
  if (absl::Status s = engine.Publish(state.next_generation); !s.ok()) return s;
  if (absl::Status s = engine.Commit(); !s.ok()) {
    // A connection lost at the commit leaves its outcome unknown: the
    // engine may have committed before it went.
    state.engine_commit_unknown = absl::IsUnavailable(s);
    return s;
  }
  state.engine_committed = true;
  return absl::OkStatus();
}

void CatalogImpl::StartFollowing() {
  ClusterState& c = *cluster_;
  {
    absl::MutexLock a(&apply_mu_);
    absl::StatusOr<std::string> id = store_->LoadMeta(kClusterIdKey);
    c.local_cluster_id = id.ok() ? *id : std::string();
    absl::StatusOr<std::unique_ptr<ClusterEngine>> e = c.connect();
    absl::Status s = e.status();
    if (e.ok()) {
      s = (*e)->Listen();
      absl::StatusOr<EngineHead> head;
      if (s.ok()) head = (*e)->Head();
      if (s.ok()) s = head.status();
      if (s.ok()) {
        c.Reached(head->generation);
        s = CatchUp(**e, *head);
        if (!s.ok()) {
          c.Log(absl::StrCat("catching up with the cluster: ", s.message()));
        }
        c.listener = *std::move(e);
        s = absl::OkStatus();
      }
    }
    if (!s.ok()) c.Lost(s);
    c.started = true;
  }
  try {
    c.follower = std::thread([this] { Follow(); });
  } catch (const std::system_error& e) {
    c.Log(absl::StrCat("cannot start the cluster follower: ", e.what()));
  }
}

void CatalogImpl::Follow() {
  ClusterState& c = *cluster_;
  for (;;) {
    {
      absl::MutexLock l(&c.stop_mu);
      if (c.stop) return;
    }
    FollowOnce();
  }
}

void CatalogImpl::FollowOnce() {
  ClusterState& c = *cluster_;
  auto pause = [&c] {
    absl::MutexLock l(&c.stop_mu);
    c.stop_mu.AwaitWithTimeout(absl::Condition(&c.stop),
                               absl::Milliseconds(c.follow_ms));
  };
  if (c.listener == nullptr) {
    absl::StatusOr<std::unique_ptr<ClusterEngine>> e = c.connect();
    absl::Status s = e.status();
    if (s.ok()) s = (*e)->Listen();
    if (!s.ok()) {
      c.Lost(s);
      pause();
      return;
    }
    c.listener = *std::move(e);
  } else {
    absl::StatusOr<bool> woke = c.listener->Wait(c.follow_ms);
    if (!woke.ok()) {
      c.listener.reset();
      c.Lost(woke.status());
      return;
    }
  }
  absl::StatusOr<EngineHead> head = c.listener->Head();
  if (!head.ok()) {
    c.listener.reset();
    c.Lost(head.status());
    return;
  }
  c.Reached(head->generation);
  absl::MutexLock a(&apply_mu_);
  if (head->generation == generation() &&
      head->cluster_id == c.local_cluster_id) {
    return;
  }
  // Read again now that no batch of this head can commit: one that did
  // since the first read would look like the engine going backwards.
  head = c.listener->Head();
  if (!head.ok()) {
    c.listener.reset();
    c.Lost(head.status());
    return;
  }
  if (absl::Status s = CatchUp(*c.listener, *head); !s.ok()) {
    c.Log(absl::StrCat("catching up with the cluster: ", s.message()));
    absl::MutexLock l(&c.status_mu);
    c.status.error = std::string(s.message());
    if (absl::IsUnavailable(s)) c.listener.reset();
  }
}

}  // namespace catalog_internal
}  // namespace libshare
