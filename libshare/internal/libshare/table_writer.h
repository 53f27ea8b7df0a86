// TableWriter: the row writes a committed batch makes, the seam between
// the Catalog and what keeps its table. The SQLite store (store.h) is one;
// the cluster engine (cluster_engine.h: PostgreSQL) is another, written in
// the same transaction as the head's own SQLite copy. The Catalog is the
// only caller: it writes a batch's steps through one of these, in order,
// inside the implementation's own transaction.
//
// Rows are named by the share's path (and, for the SQLite store, which
// keeps no index by path, by its id: ids are a store's own and differ
// between the heads of a cluster).
#ifndef LIBSHARE_TABLE_WRITER_H_
#define LIBSHARE_TABLE_WRITER_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/types/span.h"

namespace libshare {

struct GroupRow {
  std::string name;
  bool enabled = true;
  std::string options;
  std::string managed_by{};  // the followed exports file; "" = by hand
  bool operator==(const GroupRow& o) const {
    return name == o.name && enabled == o.enabled && options == o.options &&
           managed_by == o.managed_by;
  }
};

// A share row from views (a batch's adds need no ShareRow of their own).
struct ShareFields {
  uint64_t id = 0;
  std::string_view path, group, resource, description, options;
  uint64_t dev = 0;
  // The recorded file-system identity's text (fs_identity.h); "" = none.
  std::string_view fs_identity{};
};

class TableWriter {
 public:
  virtual ~TableWriter() = default;
  [[nodiscard]] virtual absl::Status InsertGroup(const GroupRow& g) = 0;
  // Deletes the group and every share in it; `has_shares` false (the
  // caller knows the group is empty) may skip looking for them.
  [[nodiscard]] virtual absl::Status DeleteGroup(std::string_view name,
                                                 bool has_shares = true) = 0;
  [[nodiscard]] virtual absl::Status SetGroupEnabled(std::string_view name,
                                                     bool enabled) = 0;
  [[nodiscard]] virtual absl::Status SetGroupOptions(
      std::string_view name, std::string_view options) = 0;
  // Marks the group as managed by `file` ("" clears the mark).
  [[nodiscard]] virtual absl::Status SetGroupManager(std::string_view name,
                                                     std::string_view file) = 0;
  // The rows in order. Stops at the first failure, whose message names
  // the share.
  [[nodiscard]] virtual absl::Status InsertShares(
      absl::Span<const ShareFields> rows) = 0;
  // Each fails (DataLoss) unless it changed exactly one row.
  [[nodiscard]] virtual absl::Status DeleteShare(uint64_t id,
                                                 std::string_view path) = 0;
  [[nodiscard]] virtual absl::Status MoveShare(uint64_t id,
                                               std::string_view path,
                                               std::string_view group) = 0;
  // Also ends replaces_group: options written now inherit per property.
  [[nodiscard]] virtual absl::Status SetShareOptions(
      uint64_t id, std::string_view path, std::string_view options) = 0;
  [[nodiscard]] virtual absl::Status SetShareText(
      uint64_t id, std::string_view path, std::string_view description,
      std::string_view resource) = 0;
};

}  // namespace libshare

#endif  // LIBSHARE_TABLE_WRITER_H_
