// VisitSizeLimit (src/core/visit_size_limit.h): cancelled visits halve the zones per visit, fast
// visits at the limit grow it back to the configured size. Pure code.
#include "core/visit_size_limit.h"

#include <gtest/gtest.h>

namespace quick::core {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kPDuration{2000};
constexpr milliseconds kFast{100};  // under a quarter of kPDuration
constexpr milliseconds kSlow{600};  // over it, but within p_duration

TEST(VisitSizeLimit, UnlimitedUntilAVisitIsCancelled) {
  VisitSizeLimit limit;
  EXPECT_EQ(limit.apply(400), 400);
  EXPECT_EQ(limit.finished(400, kSlow, kPDuration), std::nullopt);
  EXPECT_EQ(limit.limit(), 0);
}

TEST(VisitSizeLimit, EachCancelledVisitHalvesWhatItTriedDownToOneZone) {
  VisitSizeLimit limit;
  limit.apply(100);
  EXPECT_EQ(limit.cancelled(100), 50);
  EXPECT_EQ(limit.apply(100), 50);
  EXPECT_EQ(limit.cancelled(50), 25);
  EXPECT_EQ(limit.cancelled(25), 12);
  EXPECT_EQ(limit.cancelled(12), 6);
  EXPECT_EQ(limit.cancelled(6), 3);
  EXPECT_EQ(limit.cancelled(3), 1);
  EXPECT_EQ(limit.cancelled(1), std::nullopt) << "one zone is the least a visit takes";
  EXPECT_EQ(limit.apply(100), 1);
}

TEST(VisitSizeLimit, AVisitSplitOffBeforeTheLastCutDoesNotRaiseTheLimit) {
  VisitSizeLimit limit;
  limit.apply(100);
  EXPECT_EQ(limit.cancelled(100), 50);
  EXPECT_EQ(limit.cancelled(20), 10);
  // Another visit of the old size, cancelled after the cut: halving it (50) would raise the limit.
  EXPECT_EQ(limit.cancelled(100), std::nullopt);
  EXPECT_EQ(limit.apply(100), 10);
}

TEST(VisitSizeLimit, FastVisitsAtTheLimitDoubleItBackToTheConfiguredSize) {
  VisitSizeLimit limit;
  limit.apply(100);
  limit.cancelled(100);
  limit.cancelled(50);  // limit 25
  for (int i = 1; i < VisitSizeLimit::kFastVisitsToGrow; ++i) {
    EXPECT_EQ(limit.finished(25, kFast, kPDuration), std::nullopt) << "visit " << i;
  }
  EXPECT_EQ(limit.finished(25, kFast, kPDuration), 50);
  EXPECT_EQ(limit.apply(100), 50);
  for (int i = 1; i < VisitSizeLimit::kFastVisitsToGrow; ++i) limit.finished(50, kFast, kPDuration);
  EXPECT_EQ(limit.finished(50, kFast, kPDuration), 0) << "doubling reaches the configured 100: no limit";
  EXPECT_EQ(limit.apply(100), 100);
}

TEST(VisitSizeLimit, OnlyAnUnbrokenRunOfFastVisitsThatFillTheLimitCounts) {
  VisitSizeLimit limit;
  limit.apply(100);
  limit.cancelled(100);  // limit 50
  for (int i = 0; i < 3 * VisitSizeLimit::kFastVisitsToGrow; ++i) {
    EXPECT_EQ(limit.finished(25, kFast, kPDuration), std::nullopt) << "a visit of half the limit does not test it";
  }
  for (int round = 0; round < 3; ++round) {
    for (int i = 1; i < VisitSizeLimit::kFastVisitsToGrow; ++i) limit.finished(50, kFast, kPDuration);
    EXPECT_EQ(limit.finished(50, kSlow, kPDuration), std::nullopt) << "a slow visit starts the count again";
  }
  EXPECT_EQ(limit.limit(), 50);
}

// The Scanner splits a selection bigger than the limit evenly: 50 zones under a limit of 26 make
// visits of 25, which count, so the limit is not stuck below what the selections need.
TEST(VisitSizeLimit, VisitsOfAnEvenlySplitSelectionCountTowardsGrowth) {
  VisitSizeLimit limit;
  limit.apply(400);
  limit.cancelled(52);  // limit 26
  for (int i = 1; i < VisitSizeLimit::kFastVisitsToGrow; ++i) limit.finished(25, kFast, kPDuration);
  EXPECT_EQ(limit.finished(25, kFast, kPDuration), 52);
}

// A size that grew back and was cut again is tried again less often: the fast visits growth
// needs double with each such cut, up to a bound; a cut without a growth before it changes
// nothing.
TEST(VisitSizeLimit, EachCutAfterAGrowthDoublesTheFastVisitsTheNextGrowthNeeds) {
  VisitSizeLimit limit;
  limit.apply(100);
  limit.cancelled(100);  // 50
  limit.cancelled(50);   // 25
  EXPECT_EQ(limit.fast_visits_to_grow(), VisitSizeLimit::kFastVisitsToGrow) << "cuts without a growth between";
  for (int i = 0; i < VisitSizeLimit::kFastVisitsToGrow; ++i) limit.finished(25, kFast, kPDuration);
  ASSERT_EQ(limit.limit(), 50);
  EXPECT_EQ(limit.cancelled(50), 25);
  EXPECT_EQ(limit.fast_visits_to_grow(), 2 * VisitSizeLimit::kFastVisitsToGrow);
  for (int i = 1; i < 2 * VisitSizeLimit::kFastVisitsToGrow; ++i) {
    EXPECT_EQ(limit.finished(25, kFast, kPDuration), std::nullopt) << "visit " << i;
  }
  EXPECT_EQ(limit.finished(25, kFast, kPDuration), 50);
  for (int cycle = 0; cycle < 10; ++cycle) {
    limit.cancelled(50);
    for (int i = 0; i < limit.fast_visits_to_grow(); ++i) limit.finished(25, kFast, kPDuration);
  }
  EXPECT_EQ(limit.fast_visits_to_grow(), VisitSizeLimit::kMostFastVisitsToGrow);
}

}  // namespace
}  // namespace quick::core
