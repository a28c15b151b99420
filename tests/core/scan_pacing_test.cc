// ScanPacing (src/core/scan_pacing.h): scans of a database start at least the interval apart,
// unless a visit found a backlog in the last kBacklogMemory. Pure code, its clock passed in.
#include "core/scan_pacing.h"

#include <gtest/gtest.h>

namespace quick::core {
namespace {

using std::chrono::milliseconds;
using Clock = ScanPacing::Clock;

constexpr milliseconds kInterval{2};
constexpr int kDequeueMax = 200;  // a backlog: 100 items or more in one visit
const Clock::time_point kStart = Clock::now();

TEST(ScanPacing, AScanWaitsForTheRestOfTheIntervalSinceTheLast) {
  const ScanPacing pacing;
  EXPECT_EQ(pacing.wait_before_scan(kStart, kInterval, kStart), kInterval);
  EXPECT_EQ(pacing.wait_before_scan(kStart, kInterval, kStart + milliseconds(1)), milliseconds(1));
  EXPECT_EQ(pacing.wait_before_scan(kStart, kInterval, kStart + kInterval), Clock::duration::zero());
  EXPECT_EQ(pacing.wait_before_scan(kStart, kInterval, kStart + milliseconds(50)), Clock::duration::zero());
}

TEST(ScanPacing, TheFirstScanAndAZeroIntervalNeverWait) {
  const ScanPacing pacing;
  EXPECT_EQ(pacing.wait_before_scan(Clock::time_point{}, kInterval, kStart), Clock::duration::zero());
  EXPECT_EQ(pacing.wait_before_scan(kStart, milliseconds(0), kStart), Clock::duration::zero());
}

TEST(ScanPacing, SmallVisitsKeepThePacing) {
  ScanPacing pacing;
  pacing.visit_finished(kDequeueMax / 2 - 1, kDequeueMax, kStart);
  pacing.visit_finished(0, kDequeueMax, kStart);
  EXPECT_EQ(pacing.wait_before_scan(kStart, kInterval, kStart), kInterval);
}

TEST(ScanPacing, AVisitThatFoundABacklogTurnsPacingOffForAWhile) {
  ScanPacing pacing;
  pacing.visit_finished(kDequeueMax / 2, kDequeueMax, kStart);
  EXPECT_EQ(pacing.wait_before_scan(kStart, kInterval, kStart), Clock::duration::zero());
  const auto almost = kStart + ScanPacing::kBacklogMemory - milliseconds(1);
  EXPECT_EQ(pacing.wait_before_scan(almost, kInterval, almost), Clock::duration::zero());
  const auto after = kStart + ScanPacing::kBacklogMemory;
  EXPECT_EQ(pacing.wait_before_scan(after, kInterval, after), kInterval) << "paced again once it is that old";
}

TEST(ScanPacing, WithADequeueMaxOfOneEveryItemIsABacklog) {
  ScanPacing pacing;
  pacing.visit_finished(0, 1, kStart);
  EXPECT_EQ(pacing.wait_before_scan(kStart, kInterval, kStart), kInterval);
  pacing.visit_finished(1, 1, kStart);
  EXPECT_EQ(pacing.wait_before_scan(kStart, kInterval, kStart), Clock::duration::zero());
}

}  // namespace
}  // namespace quick::core
