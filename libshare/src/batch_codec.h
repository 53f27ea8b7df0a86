// A batch as the cluster's change log keeps it: its operations, manager
// and origin in a compact binary form (lengths before texts, so any byte,
// Latin-1 paths included, survives). Private to libshare.
#ifndef LIBSHARE_SRC_BATCH_CODEC_H_
#define LIBSHARE_SRC_BATCH_CODEC_H_

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "libshare/batch.h"

namespace libshare {
namespace internal {

// The operations ops[begin, end) of `batch`, under `manager` and `origin`
// (a group commit's combined batch holds several callers' operations).
// An add-share's recorded file-system identity is `identity_of(i)` when
// given (what the batch recorded), else its op's fs_identity.
std::string EncodeBatch(
    const Batch& batch, std::size_t begin, std::size_t end,
    std::string_view manager, std::string_view origin,
    const std::function<std::string_view(std::size_t)>& identity_of = nullptr);
inline std::string EncodeBatch(const Batch& batch) {
  return EncodeBatch(batch, 0, batch.ops.size(), batch.manager, batch.origin);
}
// Fails (DataLoss, naming the offset) on anything EncodeBatch did not make.
absl::StatusOr<Batch> DecodeBatch(std::string_view bytes);

}  // namespace internal
}  // namespace libshare

#endif  // LIBSHARE_SRC_BATCH_CODEC_H_
