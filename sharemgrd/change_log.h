// ChangeLog: the recent committed batches, kept in memory so that a client
// can ask what changed since a generation (MGMTPROC_CHANGES_SINCE) instead
// of listing every share again.
//
// Bounded: at most max_shares share changes and max_batches batches are
// kept; the oldest batches are dropped first. The log holds every batch
// after oldest(): a question about an older generation is answered
// "too old" (list everything), never with a partial list. A daemon start
// begins an empty log at the table's generation. A new store's table is
// at kFirstGeneration, empty: while the log holds every batch since then,
// any earlier generation (0) is answered too, with the whole history.
//
// Thread-safe.
#ifndef SHAREMGRD_CHANGE_LOG_H_
#define SHAREMGRD_CHANGE_LOG_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "libshare/client.h"

namespace sharemgrd {

inline constexpr std::size_t kChangeLogMaxShares = 32768;
inline constexpr std::size_t kChangeLogMaxBatches = 4096;
// The generation of a new store's empty table (the first batch makes 2).
inline constexpr uint64_t kFirstGeneration = 1;

class ChangeLog {
 public:
  ChangeLog(uint64_t start_generation,
            std::size_t max_shares = kChangeLogMaxShares,
            std::size_t max_batches = kChangeLogMaxBatches);

  // Appends a committed batch. One whose generation is not above the
  // last one's (or the start's) changed nothing and is not kept.
  // `complete` false: its share list is unknown (out of memory), so the
  // log restarts after it, as it does for a batch bigger than max_shares.
  void Add(libshare::ChangeRecord record, bool complete = true);
  // Whether a batch of `shares` share changes would be kept (else Add
  // restarts the log after it): a caller need not copy a list that would
  // be dropped.
  bool Keeps(std::size_t shares) const { return shares <= max_shares_; }

  struct Answer {
    bool too_old = false;
    uint64_t oldest = 0;
    std::vector<libshare::ChangeRecord> batches;  // empty when too_old
  };
  // The batches with a generation above `generation`, oldest first.
  Answer Since(uint64_t generation) const;

  uint64_t oldest() const;

 private:
  const std::size_t max_shares_;
  const std::size_t max_batches_;
  mutable absl::Mutex mu_;
  std::deque<libshare::ChangeRecord> batches_ ABSL_GUARDED_BY(mu_);
  std::size_t shares_ ABSL_GUARDED_BY(mu_) = 0;
  // Every batch with a generation above this one is in batches_.
  uint64_t oldest_ ABSL_GUARDED_BY(mu_);
  // batches_ holds every batch the store ever committed (the log began
  // at kFirstGeneration or before and has dropped nothing).
  bool whole_history_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sharemgrd

#endif  // SHAREMGRD_CHANGE_LOG_H_
