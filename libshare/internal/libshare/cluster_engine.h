// ClusterEngine: the database several heads share their table through
// (sharemgrd --store postgresql://...; the implementation is
// libshare/pg/pg_engine.h). One object is one connection, used by one
// thread at a time.
//
// What the engine holds: the groups and shares (the cluster's table), one
// generation row that every writer locks, and the change log: each
// committed batch with the generation it made, in order. A head commits a
// batch as one engine transaction: Lock() (waits for the generation row),
// catch up on the records after its own generation, validate, write the
// rows (TableWriter), AppendChange() per batch, Publish() the new
// generation (NOTIFY) and Commit(). Other heads Listen() and apply the
// records after theirs (Catalog: libshare/src/catalog_cluster.cc).
#ifndef LIBSHARE_CLUSTER_ENGINE_H_
#define LIBSHARE_CLUSTER_ENGINE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "libshare/table_writer.h"

namespace libshare {

// The cluster's generation row.
struct EngineHead {
  uint64_t generation = 0;
  // Made once, when the engine's schema is made: a head's copy of another
  // cluster's table (or of a standalone server's) is recognised as such.
  std::string cluster_id;
};

// One committed batch in the change log.
struct EngineChange {
  uint64_t generation = 0;
  std::string head;   // the head that committed it
  std::string batch;  // its operations (libshare/src/batch_codec.h)
};

struct EngineShareRow {
  std::string path, group, resource, description, options;
  std::string fs_identity;  // recorded at add (fs_identity.h); "" = none
};

// The whole table, as of one generation.
struct EngineTable {
  EngineHead head;
  std::vector<GroupRow> groups;
  std::vector<EngineShareRow> shares;
};

class ClusterEngine : public TableWriter {
 public:
  // "PostgreSQL at HOST:PORT, database DB": for messages and stats.
  virtual std::string where() const = 0;

  // Begins a transaction and waits for the generation row (the lock every
  // writing head takes, so their batches are serialized); returns it.
  [[nodiscard]] virtual absl::StatusOr<EngineHead> Lock() = 0;
  // In the transaction: one batch's record.
  [[nodiscard]] virtual absl::Status AppendChange(uint64_t generation,
                                                  std::string_view head,
                                                  std::string_view batch) = 0;
  // In the transaction: the generation row's new value, and a
  // notification to every listening head, delivered at the commit.
  [[nodiscard]] virtual absl::Status Publish(uint64_t generation) = 0;
  [[nodiscard]] virtual absl::Status Commit() = 0;
  // Safe with no transaction open.
  virtual void Rollback() = 0;
  // Lock() has begun a transaction not yet committed or rolled back.
  virtual bool in_transaction() const = 0;

  // Reads, outside a transaction (or inside Lock's).
  [[nodiscard]] virtual absl::StatusOr<EngineHead> Head() = 0;
  // The records after `after` up to and including `up_to`, in order.
  // Fewer than up_to - after when the log has a gap (trimmed).
  [[nodiscard]] virtual absl::StatusOr<std::vector<EngineChange>> ChangesAfter(
      uint64_t after, uint64_t up_to) = 0;
  // The whole table and its generation, as one snapshot.
  [[nodiscard]] virtual absl::StatusOr<EngineTable> LoadTable() = 0;

  // Asks for the notifications Publish sends.
  [[nodiscard]] virtual absl::Status Listen() = 0;
  // Waits at most `timeout_ms` for one; true if one (or more) came. An
  // error when the connection is lost.
  [[nodiscard]] virtual absl::StatusOr<bool> Wait(int timeout_ms) = 0;
};

// Makes a new connection (each call its own).
using EngineConnector =
    std::function<absl::StatusOr<std::unique_ptr<ClusterEngine>>()>;

}  // namespace libshare

#endif  // LIBSHARE_CLUSTER_ENGINE_H_
