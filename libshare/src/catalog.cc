// The Catalog: opening and loading it, lookups, counts and mount records.
// Validation, commit and listings are in catalog_validate.cc,
// catalog_commit.cc and catalog_listings.cc (see catalog_impl.h).
#include "libshare/catalog.h"

#include <algorithm>
#include <cstdint>
#include <exception>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "catalog_impl.h"
#include "libshare/loader.h"
#include "libshare/path.h"
#include "libshare/share_table.h"
#include "libshare/store.h"

namespace libshare {
namespace catalog_internal {

absl::Status CatalogImpl::Load(int threads) {
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
  RebuildRuleIndexes();
  absl::StatusOr<uint64_t> max_id = store_->MaxShareId();
  if (!max_id.ok()) return max_id.status();
  next_id_ = *max_id + 1;
  return absl::OkStatus();
}

std::optional<ShareMatch> CatalogImpl::FindNearest(
    std::string_view path) const {
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
  m.dev = s->dev;
  m.mount_root = s->mount_root;
  if (s->has_fs_uuid) m.fs_uuid = s->fs_uuid;
  return m;
}

uint64_t CatalogImpl::generation() const {
  absl::ReaderMutexLock l(&mu_);
  return table_.generation();
}

void CatalogImpl::KeepTableMemoryAtExit() {
  absl::MutexLock l(&mu_);
  table_.KeepMemoryAtExit();
}

LoadStats CatalogImpl::load_stats() const {
  absl::ReaderMutexLock l(&mu_);
  return load_stats_;
}

std::size_t CatalogImpl::share_count() const {
  absl::ReaderMutexLock l(&mu_);
  return table_.size();
}

std::size_t CatalogImpl::group_count() const {
  absl::ReaderMutexLock l(&mu_);
  return table_.group_count();
}

absl::Status CatalogImpl::RecordMounts(
    const std::vector<MountRecord>& added,
    const std::vector<MountRecord>& removed) {
  absl::MutexLock m(&mounts_mu_);
  return mounts_->RecordMounts(added, removed);
}

absl::StatusOr<std::vector<MountRecord>> CatalogImpl::LoadMounts() const {
  absl::MutexLock m(&mounts_mu_);
  return mounts_->LoadMounts();
}

}  // namespace catalog_internal

absl::StatusOr<std::unique_ptr<Catalog>> Catalog::Open(const Config& config) {
  absl::StatusOr<std::unique_ptr<Store>> store =
      Store::Open(config.db_path, config.busy_timeout_ms);
  if (!store.ok()) return store.status();
  // A batch's commit, or a single change's, never waits for a checkpoint
  // (Store::CheckpointInBackground). Best effort: without the thread,
  // SQLite's automatic checkpoint stays, in the commits, as before.
  (void)(*store)->CheckpointInBackground();
  absl::StatusOr<std::unique_ptr<Store>> mounts =
      Store::Open(config.db_path, config.busy_timeout_ms);
  if (!mounts.ok()) return mounts.status();
  absl::StatusOr<std::unique_ptr<Store>> places =
      Store::Open(config.db_path, config.busy_timeout_ms);
  if (!places.ok()) return places.status();
  auto catalog = std::make_unique<catalog_internal::CatalogImpl>(
      *std::move(store), *std::move(mounts), *std::move(places),
      config.read_slice, config.between_slices);
  catalog->UseIdentify(config.identify);
  if (config.engine) {
    auto cluster = std::make_unique<catalog_internal::ClusterState>();
    cluster->connect = config.engine;
    cluster->head = config.head_name;
    cluster->follow_ms = std::max(10, config.follow_interval_ms);
    cluster->on_replicated = config.on_replicated;
    cluster->log = config.log;
    {
      absl::MutexLock l(&cluster->status_mu);
      cluster->status.kind = "postgresql";
      cluster->status.engine = config.engine_where;
      cluster->status.head = config.head_name;
    }
    catalog->UseEngine(std::move(cluster));
  }
  FsPlaceRecords* const fs_places = catalog->fs_places();
  // What beside_load throws is thrown here, after the join, as if it had
  // run on this thread.
  std::exception_ptr thrown;
  std::thread beside;
  if (config.beside_load) {
    try {
      beside = std::thread([&config, &thrown, fs_places] {
        try {
          config.beside_load(fs_places);
        } catch (...) {
          thrown = std::current_exception();
        }
      });
    } catch (const std::system_error&) {
      config.beside_load(fs_places);  // no thread: before the load, here
    } catch (const std::bad_alloc&) {
      config.beside_load(fs_places);
    }
  }
  struct Join {
    std::thread& t;
    ~Join() {
      if (t.joinable()) t.join();
    }
  };
  absl::Status loaded;
  {
    Join join{beside};
    loaded = catalog->Load(config.load_threads);
  }
  if (thrown) std::rethrow_exception(thrown);
  if (!loaded.ok()) return loaded;
  if (config.engine) catalog->StartFollowing();
  return catalog;
}

}  // namespace libshare
