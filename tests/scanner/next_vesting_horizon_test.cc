// Unit tests (no database) for scanner::NextVestingHorizon: an idle scan's look ahead starts at the
// shortest idle wait after a busy round, doubles with each idle round in a row up to the longest
// idle wait, where an idle queue stays, and never goes outside those bounds.
#include "scanner/next_vesting_horizon.h"

#include <gtest/gtest.h>

#include <vector>

namespace quick::scanner {
namespace {

using std::chrono::milliseconds;

TEST(NextVestingHorizon, StartsAtTheShortestWait) {
  EXPECT_EQ(NextVestingHorizon(milliseconds(20), milliseconds(1000)).next(), milliseconds(20));
}

TEST(NextVestingHorizon, DoublesWithEachIdleRoundUpToTheLongestWaitAndStaysThere) {
  NextVestingHorizon horizon(milliseconds(20), milliseconds(1000));
  std::vector<milliseconds> seen;
  for (int round = 0; round < 8; ++round) {
    horizon.observe(false);
    seen.push_back(horizon.next());
  }
  EXPECT_EQ(seen,
            (std::vector<milliseconds>{milliseconds(40), milliseconds(80), milliseconds(160), milliseconds(320),
                                       milliseconds(640), milliseconds(1000), milliseconds(1000), milliseconds(1000)}));
}

TEST(NextVestingHorizon, ARoundThatSawVestedPointersStartsItShortAgain) {
  NextVestingHorizon horizon(milliseconds(20), milliseconds(1000));
  for (int round = 0; round < 10; ++round) horizon.observe(false);
  horizon.observe(true);
  EXPECT_EQ(horizon.next(), milliseconds(20));
  horizon.observe(false);
  EXPECT_EQ(horizon.next(), milliseconds(40));
}

// A configuration whose idle_poll_interval exceeds the longest wait (or is zero) still gets a
// horizon between 1 ms and the longest wait.
TEST(NextVestingHorizon, StaysWithinOneMillisecondAndTheLongestWait) {
  NextVestingHorizon longer_than_longest(milliseconds(5000), milliseconds(1000));
  EXPECT_EQ(longer_than_longest.next(), milliseconds(1000));
  longer_than_longest.observe(false);
  EXPECT_EQ(longer_than_longest.next(), milliseconds(1000));
  NextVestingHorizon zero(milliseconds(0), milliseconds(1000));
  EXPECT_EQ(zero.next(), milliseconds(1));
  zero.observe(false);
  EXPECT_EQ(zero.next(), milliseconds(2));
}

}  // namespace
}  // namespace quick::scanner
