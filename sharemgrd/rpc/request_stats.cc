#include "request_stats.h"

#include <cmath>
#include <utility>

namespace sharemgrd {

int LatencyHistogram::BucketOf(uint64_t micros) {
  // Values below 2^kSubBits map linearly; above, bucket = (exponent, top
  // kSubBits bits of the mantissa).
  if (micros < (1u << kSubBits)) return static_cast<int>(micros);
  int msb = 63 - __builtin_clzll(micros);
  int shift = msb - kSubBits;
  int sub = static_cast<int>((micros >> shift) & ((1u << kSubBits) - 1));
  int b = ((shift + 1) << kSubBits) + sub;
  return b < kBuckets ? b : kBuckets - 1;
}

double LatencyHistogram::BucketUpper(int bucket) {
  if (bucket < (1 << kSubBits)) return bucket + 1;
  int shift = (bucket >> kSubBits) - 1;
  int sub = bucket & ((1 << kSubBits) - 1);
  double base = std::ldexp(1.0, shift + kSubBits);
  return base + (sub + 1) * std::ldexp(1.0, shift);
}

void LatencyHistogram::Record(uint64_t micros, bool error) {
  buckets_[BucketOf(micros)].fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  if (error) errors_.fetch_add(1, std::memory_order_relaxed);
}

double LatencyHistogram::Percentile(double q) const {
  uint64_t total = 0;
  for (const auto& b : buckets_) total += b.load(std::memory_order_relaxed);
  if (total == 0) return 0;
  uint64_t rank =
      static_cast<uint64_t>(std::ceil(q * static_cast<double>(total)));
  if (rank == 0) rank = 1;
  uint64_t seen = 0;
  for (int i = 0; i < kBuckets; ++i) {
    seen += buckets_[i].load(std::memory_order_relaxed);
    if (seen >= rank) return BucketUpper(i);
  }
  return BucketUpper(kBuckets - 1);
}

RequestStats::RequestStats(std::vector<std::string> names)
    : names_(std::move(names)), hist_(names_.size()) {}

std::vector<ProcedureStats> RequestStats::Snapshot() const {
  std::vector<ProcedureStats> out;
  for (std::size_t i = 0; i < names_.size(); ++i) {
    const LatencyHistogram& h = hist_[i];
    if (h.count() == 0) continue;
    out.push_back({names_[i], h.count(), h.errors(), h.Percentile(0.5),
                   h.Percentile(0.99)});
  }
  return out;
}

}  // namespace sharemgrd
