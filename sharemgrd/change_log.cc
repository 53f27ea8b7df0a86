#include "change_log.h"

#include <utility>

namespace sharemgrd {

ChangeLog::ChangeLog(uint64_t start_generation, std::size_t max_shares,
                     std::size_t max_batches)
    : max_shares_(max_shares),
      max_batches_(max_batches),
      oldest_(start_generation),
      whole_history_(start_generation <= kFirstGeneration) {}

void ChangeLog::Add(libshare::ChangeRecord record, bool complete) {
  absl::MutexLock l(&mu_);
  // Generations only grow: a record under one already listed (a batch
  // that changed nothing keeps the generation before it; AfterBatch does
  // not add those) is dropped rather than listed twice.
  if (record.generation <= oldest_ ||
      (!batches_.empty() && record.generation <= batches_.back().generation)) {
    return;
  }
  if (!complete || record.shares.size() > max_shares_) {
    // Cannot be kept whole: nothing before it can be answered either.
    batches_.clear();
    shares_ = 0;
    oldest_ = record.generation;
    whole_history_ = false;
    return;
  }
  shares_ += record.shares.size();
  batches_.push_back(std::move(record));
  while (shares_ > max_shares_ || batches_.size() > max_batches_) {
    shares_ -= batches_.front().shares.size();
    oldest_ = batches_.front().generation;
    batches_.pop_front();
    whole_history_ = false;
  }
}

ChangeLog::Answer ChangeLog::Since(uint64_t generation) const {
  absl::MutexLock l(&mu_);
  Answer a;
  a.oldest = oldest_;
  if (generation < oldest_ && !whole_history_) {
    a.too_old = true;
    return a;
  }
  for (const libshare::ChangeRecord& r : batches_) {
    if (r.generation > generation) a.batches.push_back(r);
  }
  return a;
}

uint64_t ChangeLog::oldest() const {
  absl::MutexLock l(&mu_);
  return oldest_;
}

}  // namespace sharemgrd
