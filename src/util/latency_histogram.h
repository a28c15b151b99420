// A latency distribution with fixed logarithmic buckets (about 4% wide), cheap enough to record
// every item: percentiles are read from the buckets, so they are approximate within a bucket.
// It also counts exactly at the fixed bounds of kLatencyBucketBoundsMs, which the Prometheus
// histograms export (a log bucket does not end on 1 ms, 5 ms, ...).
//
// Thread safety: record() and summary() may be called concurrently (guarded by a mutex).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <mutex>

#include "quick/stats.h"

namespace quick::util {

class LatencyHistogram {
 public:
  void record(std::chrono::microseconds latency);
  LatencySummary summary() const;
  void reset();

 private:
  static constexpr int kBuckets = 600;  // 1us .. ~ 1e10 us with 4% steps
  static int bucket_of(double micros);
  static double bucket_upper_micros(int bucket);

  mutable std::mutex mutex_;
  std::array<std::uint64_t, kBuckets> counts_{};  // guarded by mutex_
  // Samples per fixed bound (not cumulative): at index i, those above the previous bound and at
  // most kLatencyBucketBoundsMs[i]; the last element holds those above every bound.
  std::array<std::uint64_t, kLatencyBucketBoundsMs.size() + 1> bound_counts_{};  // guarded by mutex_
  std::uint64_t total_ = 0;                                                      // guarded by mutex_
  double sum_micros_ = 0;                                                        // guarded by mutex_
  double max_micros_ = 0;                                                        // guarded by mutex_
};

}  // namespace quick::util
