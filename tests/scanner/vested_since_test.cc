// Unit tests (no database) for scanner::VestedSince: a pointer that stays vested from peek to peek
// ages even when its owner keeps requeuing it to vest "now"; one that leaves the peek starts anew.
#include "scanner/vested_since.h"

#include <gtest/gtest.h>

#include <chrono>

namespace quick::scanner {
namespace {

using std::chrono::milliseconds;

const DbTime t0 = DbTime(std::chrono::hours(24 * 365 * 50));

TEST(VestedSince, AFirstSightingIsTheVestingTime) {
  VestedSince since;
  EXPECT_EQ(since.observe("a", t0), t0);
  since.end_peek();
  EXPECT_EQ(since.tracked(), 1u);
}

// The throttled owner's case: every visit requeues the pointer to vest at the visit's time, but
// every peek in between still shows it vested, so it has been vested since the first peek.
TEST(VestedSince, APointerVestedInEveryPeekKeepsItsFirstTimeThoughItsVestingTimeMovesLater) {
  VestedSince since;
  since.observe("a", t0);
  since.end_peek();
  EXPECT_EQ(since.observe("a", t0 + milliseconds(30)), t0);
  since.end_peek();
  EXPECT_EQ(since.observe("a", t0 + milliseconds(60)), t0);
  since.end_peek();
}

// A pull request moves a pointer earlier: the earlier time counts.
TEST(VestedSince, AnEarlierVestingTimeWins) {
  VestedSince since;
  since.observe("a", t0);
  since.end_peek();
  EXPECT_EQ(since.observe("a", t0 - milliseconds(10)), t0 - milliseconds(10));
}

// A pointer the last peek did not show was visited and parked (or collected) meanwhile: its next
// vested spell starts at its new vesting time.
TEST(VestedSince, APointerMissingFromAPeekIsForgotten) {
  VestedSince since;
  since.observe("a", t0);
  since.observe("b", t0);
  since.end_peek();
  since.observe("b", t0 + milliseconds(5));
  since.end_peek();
  EXPECT_EQ(since.tracked(), 1u);
  EXPECT_EQ(since.observe("a", t0 + milliseconds(100)), t0 + milliseconds(100));
  EXPECT_EQ(since.observe("b", t0 + milliseconds(100)), t0);
}

}  // namespace
}  // namespace quick::scanner
