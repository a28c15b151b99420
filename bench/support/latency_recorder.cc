#include "support/latency_recorder.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace quick::bench {

double percentile_of(const std::vector<double>& sorted, double percentile) {
  if (sorted.empty()) return 0;
  // percentile / 100 x n carries floating-point error (99.9 / 100 is 0.9990000000000001): a rank
  // that is an integer could come out just above it, and ceil would take the next sample.
  const double exact = percentile / 100.0 * static_cast<double>(sorted.size());
  const auto rank = static_cast<std::size_t>(std::ceil(exact - 1e-9 * std::max(1.0, exact)));
  return sorted[std::min(sorted.size(), std::max<std::size_t>(rank, 1)) - 1];
}

Percentiles LatencyRecorder::summary() const {
  std::vector<double> sorted = samples_ms();
  Percentiles result;
  result.count = sorted.size();
  if (sorted.empty()) return result;
  std::sort(sorted.begin(), sorted.end());
  result.p50_ms = percentile_of(sorted, 50);
  result.p99_ms = percentile_of(sorted, 99);
  result.p999_ms = percentile_of(sorted, 99.9);
  result.max_ms = sorted.back();
  result.mean_ms = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(sorted.size());
  return result;
}

}  // namespace quick::bench
