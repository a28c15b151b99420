// Exact latency percentiles for benchmarks: keeps every sample (benchmarks record at most a few
// hundred thousand), sorted once when summarized.
//
// Thread safety: record() from any thread; summary() any time.
#pragma once

#include <chrono>
#include <mutex>
#include <vector>

namespace quick::bench {

struct Percentiles {
  std::size_t count = 0;
  double p50_ms = 0, p99_ms = 0, p999_ms = 0, max_ms = 0, mean_ms = 0;
};

// The value at `percentile` (0..100] of sorted samples: nearest rank, the sample at rank
// ceil(percentile / 100 x n) (0 for none). LatencyRecorder's summaries use it too.
double percentile_of(const std::vector<double>& sorted, double percentile);

class LatencyRecorder {
 public:
  void record(std::chrono::microseconds latency) {
    std::lock_guard<std::mutex> lock(mutex_);
    samples_ms_.push_back(static_cast<double>(latency.count()) / 1000.0);
  }
  Percentiles summary() const;
  std::vector<double> samples_ms() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return samples_ms_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<double> samples_ms_;  // guarded by mutex_
};

}  // namespace quick::bench
