#include "util/latency_histogram.h"

#include <algorithm>
#include <cmath>

namespace quick::util {
namespace {
constexpr double kGrowth = 1.04;
}

int LatencyHistogram::bucket_of(double micros) {
  if (micros <= 1) return 0;
  const int bucket = static_cast<int>(std::ceil(std::log(micros) / std::log(kGrowth)));
  return std::min(bucket, kBuckets - 1);
}

double LatencyHistogram::bucket_upper_micros(int bucket) { return std::pow(kGrowth, bucket); }

namespace {
std::size_t fixed_bound_of(double micros) {
  const auto& bounds = kLatencyBucketBoundsMs;
  return static_cast<std::size_t>(std::lower_bound(bounds.begin(), bounds.end(), micros / 1000.0) - bounds.begin());
}
}  // namespace

void LatencyHistogram::record(std::chrono::microseconds latency) {
  const double micros = std::max<double>(0, static_cast<double>(latency.count()));
  std::lock_guard<std::mutex> lock(mutex_);
  ++counts_[static_cast<std::size_t>(bucket_of(micros))];
  ++bound_counts_[fixed_bound_of(micros)];
  ++total_;
  sum_micros_ += micros;
  max_micros_ = std::max(max_micros_, micros);
}

LatencySummary LatencyHistogram::summary() const {
  std::lock_guard<std::mutex> lock(mutex_);
  LatencySummary summary;
  summary.count = total_;
  if (total_ == 0) return summary;
  summary.sum_ms = sum_micros_ / 1000.0;
  std::uint64_t at_most = 0;
  for (std::size_t i = 0; i < summary.cumulative_counts.size(); ++i) {
    at_most += bound_counts_[i];
    summary.cumulative_counts[i] = at_most;
  }
  auto percentile = [&](double fraction) {
    const auto rank = static_cast<std::uint64_t>(std::ceil(fraction * static_cast<double>(total_)));
    std::uint64_t seen = 0;
    for (int b = 0; b < kBuckets; ++b) {
      seen += counts_[static_cast<std::size_t>(b)];
      if (seen >= std::max<std::uint64_t>(rank, 1)) return std::min(bucket_upper_micros(b), max_micros_) / 1000.0;
    }
    return max_micros_ / 1000.0;
  };
  summary.p50_ms = percentile(0.50);
  summary.p99_ms = percentile(0.99);
  summary.p999_ms = percentile(0.999);
  summary.max_ms = max_micros_ / 1000.0;
  summary.mean_ms = sum_micros_ / static_cast<double>(total_) / 1000.0;
  return summary;
}

void LatencyHistogram::reset() {
  std::lock_guard<std::mutex> lock(mutex_);
  counts_.fill(0);
  bound_counts_.fill(0);
  total_ = 0;
  sum_micros_ = 0;
  max_micros_ = 0;
}

}  // namespace quick::util
