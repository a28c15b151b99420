// Unit tests (no database) for util::LatencyHistogram.
#include "util/latency_histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <thread>
#include <vector>

namespace quick::util {
namespace {

using std::chrono::microseconds;

// Nearest-rank percentile in milliseconds.
double exact_percentile_ms(std::vector<long long> micros, double fraction) {
  std::sort(micros.begin(), micros.end());
  auto rank = static_cast<std::size_t>(std::ceil(fraction * static_cast<double>(micros.size())));
  rank = std::max<std::size_t>(rank, 1);
  return static_cast<double>(micros[rank - 1]) / 1000.0;
}

void expect_close(double actual, double exact, const char* what) {
  EXPECT_NEAR(actual, exact, exact * 0.05 + 0.001) << what;
}

void check_against_exact(const std::vector<long long>& samples) {
  LatencyHistogram histogram;
  double sum = 0;
  for (auto us : samples) {
    histogram.record(microseconds(us));
    sum += static_cast<double>(us);
  }
  const auto s = histogram.summary();
  EXPECT_EQ(s.count, samples.size());
  expect_close(s.p50_ms, exact_percentile_ms(samples, 0.50), "p50");
  expect_close(s.p99_ms, exact_percentile_ms(samples, 0.99), "p99");
  expect_close(s.p999_ms, exact_percentile_ms(samples, 0.999), "p999");
  EXPECT_DOUBLE_EQ(s.max_ms, static_cast<double>(*std::max_element(samples.begin(), samples.end())) / 1000.0);
  EXPECT_NEAR(s.mean_ms, sum / static_cast<double>(samples.size()) / 1000.0, 1e-6);
  EXPECT_LE(s.p50_ms, s.p99_ms);
  EXPECT_LE(s.p99_ms, s.p999_ms);
  EXPECT_LE(s.p999_ms, s.max_ms);
}

TEST(LatencyHistogram, EmptySummaryIsZeros) {
  LatencyHistogram histogram;
  const auto s = histogram.summary();
  EXPECT_EQ(s.count, 0u);
  EXPECT_EQ(s.p50_ms, 0);
  EXPECT_EQ(s.p99_ms, 0);
  EXPECT_EQ(s.p999_ms, 0);
  EXPECT_EQ(s.max_ms, 0);
  EXPECT_EQ(s.mean_ms, 0);
}

TEST(LatencyHistogram, UniformDistribution) {
  std::vector<long long> samples;
  for (long long us = 1; us <= 100000; ++us) samples.push_back(us);
  check_against_exact(samples);
}

TEST(LatencyHistogram, ExponentialDistribution) {
  std::mt19937_64 random(5);
  std::exponential_distribution<double> dist(1.0 / 20000.0);  // mean 20ms
  std::vector<long long> samples;
  for (int i = 0; i < 50000; ++i) samples.push_back(1 + static_cast<long long>(dist(random)));
  check_against_exact(samples);
}

TEST(LatencyHistogram, LogNormalDistributionWithLongTail) {
  std::mt19937_64 random(6);
  std::lognormal_distribution<double> dist(std::log(5000.0), 1.5);
  std::vector<long long> samples;
  for (int i = 0; i < 50000; ++i) samples.push_back(1 + static_cast<long long>(dist(random)));
  check_against_exact(samples);
}

TEST(LatencyHistogram, BimodalDistribution) {
  std::vector<long long> samples;
  for (int i = 0; i < 9900; ++i) samples.push_back(2000);    // 2ms
  for (int i = 0; i < 100; ++i) samples.push_back(3000000);  // 3s
  check_against_exact(samples);
}

TEST(LatencyHistogram, SingleValueIsExact) {
  LatencyHistogram histogram;
  histogram.record(microseconds(12345));
  const auto s = histogram.summary();
  EXPECT_EQ(s.count, 1u);
  EXPECT_DOUBLE_EQ(s.max_ms, 12.345);
  EXPECT_DOUBLE_EQ(s.p50_ms, 12.345);  // capped at max
  EXPECT_DOUBLE_EQ(s.p999_ms, 12.345);
  EXPECT_DOUBLE_EQ(s.mean_ms, 12.345);
}

TEST(LatencyHistogram, MaxIsExactEvenForHugeValues) {
  LatencyHistogram histogram;
  histogram.record(microseconds(100));
  histogram.record(std::chrono::hours(24 * 400));  // beyond the last bucket
  const auto s = histogram.summary();
  EXPECT_DOUBLE_EQ(s.max_ms, 24.0 * 400 * 3600 * 1000);
  EXPECT_LE(s.p50_ms, s.max_ms);
}

TEST(LatencyHistogram, ZeroAndNegativeLatencies) {
  LatencyHistogram histogram;
  histogram.record(microseconds(0));
  histogram.record(microseconds(-5));  // clock skew: counted as 0
  const auto s = histogram.summary();
  EXPECT_EQ(s.count, 2u);
  EXPECT_EQ(s.max_ms, 0);
  EXPECT_EQ(s.p50_ms, 0);
  EXPECT_EQ(s.mean_ms, 0);
}

TEST(LatencyHistogram, ResetClears) {
  LatencyHistogram histogram;
  for (int i = 0; i < 100; ++i) histogram.record(microseconds(1000 + i));
  histogram.reset();
  const auto s = histogram.summary();
  EXPECT_EQ(s.count, 0u);
  EXPECT_EQ(s.max_ms, 0);
  histogram.record(microseconds(500));
  EXPECT_DOUBLE_EQ(histogram.summary().max_ms, 0.5);
}

TEST(LatencyHistogram, ConcurrentRecordCountsEverything) {
  LatencyHistogram histogram;
  constexpr int kThreads = 4, kPerThread = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        histogram.record(microseconds(1 + (i % 1000) + t));
        if (i % 5000 == 0) (void)histogram.summary();
      }
    });
  }
  for (auto& t : threads) t.join();
  const auto s = histogram.summary();
  EXPECT_EQ(s.count, static_cast<std::uint64_t>(kThreads * kPerThread));
  EXPECT_DOUBLE_EQ(s.max_ms, (1000.0 + kThreads - 1) / 1000.0);
}

}  // namespace
}  // namespace quick::util
