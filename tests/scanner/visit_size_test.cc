// Unit tests (no database) for scanner/visit_size.h: a consumer counts as alone only after two
// membership reads in a row found no other live consumer, stops at once when one read finds
// another, and only then visits pointers_per_batch_alone zones at a time.
#include "scanner/visit_size.h"

#include <gtest/gtest.h>

namespace quick::scanner {
namespace {

TEST(LoneConsumerTracker, IsNotAloneBeforeAnyRead) { EXPECT_FALSE(LoneConsumerTracker{}.alone()); }

// Consumers started together each see only themselves in their first read.
TEST(LoneConsumerTracker, OneReadAloneIsNotEnoughTwoInARowAre) {
  LoneConsumerTracker tracker;
  tracker.observe(1);
  EXPECT_FALSE(tracker.alone());
  tracker.observe(1);
  EXPECT_TRUE(tracker.alone());
  tracker.observe(1);
  EXPECT_TRUE(tracker.alone());
}

TEST(LoneConsumerTracker, AReadThatFindsAnotherConsumerEndsItAtOnceAndTheCountStartsOver) {
  LoneConsumerTracker tracker;
  tracker.observe(1);
  tracker.observe(1);
  tracker.observe(2);
  EXPECT_FALSE(tracker.alone());
  tracker.observe(1);
  EXPECT_FALSE(tracker.alone());
  tracker.observe(1);
  EXPECT_TRUE(tracker.alone());
}

TEST(LoneConsumerTracker, AnAloneReadBetweenSharedOnesIsNotEnough) {
  LoneConsumerTracker tracker;
  tracker.observe(3);
  tracker.observe(1);
  tracker.observe(2);
  tracker.observe(1);
  EXPECT_FALSE(tracker.alone());
}

ManagerConfig sizes(int per_batch, int alone) {
  ManagerConfig manager;
  manager.pointers_per_batch = per_batch;
  manager.pointers_per_batch_alone = alone;
  return manager;
}

TEST(PointersPerVisit, TheDefaultsAre100SharedAnd400Alone) {
  EXPECT_EQ(pointers_per_visit(ManagerConfig{}, false), 100);
  EXPECT_EQ(pointers_per_visit(ManagerConfig{}, true), 400);
}

TEST(PointersPerVisit, AloneTakesTheLargerOfTheTwoAndZeroTurnsItOff) {
  EXPECT_EQ(pointers_per_visit(sizes(10, 50), true), 50);
  EXPECT_EQ(pointers_per_visit(sizes(10, 50), false), 10);
  EXPECT_EQ(pointers_per_visit(sizes(500, 400), true), 500);  // never fewer than pointers_per_batch
  EXPECT_EQ(pointers_per_visit(sizes(100, 0), true), 100);
}

}  // namespace
}  // namespace quick::scanner
