// The benchmark harness's percentiles (bench/support/latency_recorder.h): nearest rank, the value
// at rank ceil(p/100 x n). steady_state_latency.csv's curve (percentile_of) and the tables'
// p50/p99/p99.9 (LatencyRecorder) must agree.
#include <chrono>
#include <vector>

#include <gtest/gtest.h>

#include "support/latency_recorder.h"

namespace quick::bench {
namespace {

// 1, 2, ..., n milliseconds.
std::vector<double> one_to(int n) {
  std::vector<double> values;
  for (int i = 1; i <= n; ++i) values.push_back(i);
  return values;
}

TEST(PercentilesTest, NearestRankOfSortedSamples) {
  const auto thousand = one_to(1000);
  EXPECT_DOUBLE_EQ(percentile_of(thousand, 50), 500);
  EXPECT_DOUBLE_EQ(percentile_of(thousand, 99), 990);
  EXPECT_DOUBLE_EQ(percentile_of(thousand, 100), 1000);
  EXPECT_DOUBLE_EQ(percentile_of(thousand, 1), 10);
  EXPECT_DOUBLE_EQ(percentile_of({}, 99), 0);
  EXPECT_DOUBLE_EQ(percentile_of({7}, 0.01), 7);
}

// 99.9 / 100 is 0.9990000000000001 in floating point: ceil(0.999... x 1000) gave rank 1000, the
// maximum, instead of 999 (at every n a multiple of 1,000).
TEST(PercentilesTest, TheRankIsNotPushedUpByFloatingPointError) {
  for (const int n : {1000, 2000, 5000, 20000}) {
    const auto values = one_to(n);
    EXPECT_DOUBLE_EQ(percentile_of(values, 99.9), 0.999 * n) << n << " samples";
  }
}

TEST(PercentilesTest, TheCurveAgreesWithTheRecordersSummary) {
  for (const int n : {1, 7, 100, 999, 1000, 1001, 3000}) {
    LatencyRecorder recorder;
    for (int i = n; i >= 1; --i) recorder.record(std::chrono::milliseconds(i));  // any order
    const Percentiles summary = recorder.summary();
    const auto values = one_to(n);
    EXPECT_EQ(summary.count, static_cast<std::size_t>(n));
    EXPECT_DOUBLE_EQ(summary.p50_ms, percentile_of(values, 50)) << n;
    EXPECT_DOUBLE_EQ(summary.p99_ms, percentile_of(values, 99)) << n;
    EXPECT_DOUBLE_EQ(summary.p999_ms, percentile_of(values, 99.9)) << n;
    EXPECT_DOUBLE_EQ(summary.max_ms, n);
    EXPECT_DOUBLE_EQ(summary.mean_ms, (n + 1) / 2.0);
  }
}

TEST(PercentilesTest, AnEmptyRecorderSaysSo) {
  const Percentiles summary = LatencyRecorder().summary();
  EXPECT_EQ(summary.count, 0u);
  EXPECT_EQ(summary.p99_ms, 0);
}

}  // namespace
}  // namespace quick::bench
