// RequestStats: per-procedure call counts, error counts and latency
// percentiles for STATS, recorded lock-free on every call.
//
// Latencies go into a log-linear histogram (8 sub-buckets per power of two
// of microseconds, so a percentile is within 12.5%); Record() is a few
// relaxed atomic increments. Thread-safe.
#ifndef SHAREMGRD_REQUEST_STATS_H_
#define SHAREMGRD_REQUEST_STATS_H_

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace sharemgrd {

class LatencyHistogram {
 public:
  static constexpr int kSubBits = 3;
  static constexpr int kBuckets = 40 << kSubBits;

  void Record(uint64_t micros, bool error);
  uint64_t count() const { return count_.load(std::memory_order_relaxed); }
  uint64_t errors() const { return errors_.load(std::memory_order_relaxed); }
  // Upper bound (us) of the bucket holding quantile q (0 < q <= 1); 0 if
  // nothing was recorded.
  double Percentile(double q) const;

  static int BucketOf(uint64_t micros);
  static double BucketUpper(int bucket);

 private:
  std::atomic<uint64_t> count_{0};
  std::atomic<uint64_t> errors_{0};
  std::array<std::atomic<uint64_t>, kBuckets> buckets_{};
};

struct ProcedureStats {
  std::string name;
  uint64_t count = 0;
  uint64_t errors = 0;
  double p50_us = 0;
  double p99_us = 0;
};

// A fixed set of named procedures, indexed by the caller's enum.
class RequestStats {
 public:
  explicit RequestStats(std::vector<std::string> names);
  // An index past the names is not counted (a procedure added without a
  // name must not write past the table).
  void Record(std::size_t index, uint64_t micros, bool error) {
    if (index < hist_.size()) hist_[index].Record(micros, error);
  }
  // Procedures called at least once.
  std::vector<ProcedureStats> Snapshot() const;

 private:
  std::vector<std::string> names_;
  std::vector<LatencyHistogram> hist_;
};

}  // namespace sharemgrd

#endif  // SHAREMGRD_REQUEST_STATS_H_
