// ConsumerStats::to_string, the text `quick worker` prints and logs: latencies in plain
// milliseconds, whatever their size.
#include <gtest/gtest.h>

#include <string>

#include "quick/stats.h"

namespace quick {
namespace {

TEST(ConsumerStatsText, LatenciesArePlainMillisecondsNeverScientific) {
  ConsumerStats stats;
  stats.pickup_latency.count = 3;
  stats.pickup_latency.p50_ms = 0.5124;
  stats.pickup_latency.p99_ms = 1234.5;
  stats.pickup_latency.p999_ms = 98765.4321;
  stats.pickup_latency.max_ms = 98765.4321;
  const std::string text = stats.to_string();
  EXPECT_NE(text.find("pickup latency: n=3 p50=0.512ms p99=1234.500ms p99.9=98765.432ms max=98765.432ms"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("e+"), std::string::npos) << text;
}

}  // namespace
}  // namespace quick
