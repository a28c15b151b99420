#include "support/latency_recorder.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace quick::bench {

Percentiles LatencyRecorder::summary() const {
  std::vector<double> sorted = samples_ms();
  Percentiles result;
  result.count = sorted.size();
  if (sorted.empty()) return result;
  std::sort(sorted.begin(), sorted.end());
  auto at = [&](double fraction) {
    const auto index = static_cast<std::size_t>(std::ceil(fraction * static_cast<double>(sorted.size()))) - 1;
    return sorted[std::min(index, sorted.size() - 1)];
  };
  result.p50_ms = at(0.50);
  result.p99_ms = at(0.99);
  result.p999_ms = at(0.999);
  result.max_ms = sorted.back();
  result.mean_ms = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(sorted.size());
  return result;
}

}  // namespace quick::bench
