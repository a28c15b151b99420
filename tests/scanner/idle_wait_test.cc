// Unit tests (no database) for scanner::idle_wait: how long a Scanner round that selected nothing
// sleeps. Its deadlines count from when each database's last scan was sent, so the rest of the
// round (other databases, a backoff, an error's retry delay) never stretches a sleep past the
// moment the scan's horizon or the next vesting time ended; a narrow scan's sleep ends when the
// next wide scan is due; busy databases are polled, left-over pull requests looked at again
// sooner; not listening, the Scanner polls.
#include "scanner/idle_wait.h"

#include <gtest/gtest.h>

#include <utility>

namespace quick::scanner {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

const IdleWaitBounds kListening{milliseconds(20), milliseconds(1000), true};
const IdleWaitBounds kPolling{milliseconds(20), milliseconds(1000), false};

// A scan sent at `sent_at` that found nothing vested and nothing vesting within `horizon`.
LastScan idle_scan(IdleClock::time_point sent_at, milliseconds horizon) {
  LastScan scan;
  scan.sent_at = sent_at;
  scan.looked_ahead = horizon;
  return scan;
}

TEST(IdleWait, SleepsToTheEndOfTheHorizonTheScanReadWithin) {
  const auto t = IdleClock::now();
  const LastScan scan = idle_scan(t, milliseconds(640));
  EXPECT_EQ(idle_wait(kListening, {&scan}, t), milliseconds(640));
}

TEST(IdleWait, CountsFromWhenTheScanWasSentNotFromTheSleep) {
  const auto t = IdleClock::now();
  const LastScan scan = idle_scan(t, milliseconds(1000));
  // The rest of the round took 900 ms (say another database failed and its retry delay ran).
  EXPECT_EQ(idle_wait(kListening, {&scan}, t + milliseconds(900)), milliseconds(100));
}

TEST(IdleWait, AHorizonAlreadyPastIsLookedAtAgainAtOnce) {
  const auto t = IdleClock::now();
  const LastScan scan = idle_scan(t, milliseconds(40));
  EXPECT_EQ(idle_wait(kListening, {&scan}, t + milliseconds(2000)), milliseconds(1));
}

TEST(IdleWait, SleepsUntilTheNextPointerVestsRoundedUpFromTheScan) {
  const auto t = IdleClock::now();
  LastScan scan = idle_scan(t, milliseconds(1000));
  scan.next_vesting_in = microseconds(300500);
  EXPECT_EQ(idle_wait(kListening, {&scan}, t), milliseconds(301));
  EXPECT_EQ(idle_wait(kListening, {&scan}, t + milliseconds(200)), milliseconds(101));
}

TEST(IdleWait, VestedPointersLeftAloneArePolled) {
  const auto t = IdleClock::now();
  LastScan vested = idle_scan(t, milliseconds(20));
  vested.saw_vested = true;
  EXPECT_EQ(idle_wait(kListening, {&vested}, t), milliseconds(20));
}

// Left-over pull requests are looked at again after 1 ms, then 2, 4, ... up to the poll.
TEST(IdleWait, LeftOverPullRequestsAreLookedAtAgainSoonThenLessOften) {
  const auto t = IdleClock::now();
  LastScan leftover = idle_scan(t, milliseconds(1000));
  leftover.next_vesting_in = microseconds(0);
  leftover.saw_vested = true;  // found vested pointers too: the left-over requests still count
  const std::pair<int, milliseconds> expected[] = {{1, milliseconds(1)},  {2, milliseconds(2)},
                                                   {4, milliseconds(8)},  {5, milliseconds(16)},
                                                   {6, milliseconds(20)}, {40, milliseconds(20)}};
  for (const auto& [in_a_row, wait] : expected) {
    leftover.left_over_in_a_row = in_a_row;
    EXPECT_EQ(idle_wait(kListening, {&leftover}, t), wait) << in_a_row << " scans in a row left requests";
  }
}

TEST(LeftOverPullsWait, CountsScansInARowThatLeftRequestsOverUpToALimit) {
  LastScan scan;
  scan.note_left_over(true);
  scan.note_left_over(true);
  EXPECT_EQ(scan.left_over_in_a_row, 2);
  scan.note_left_over(false);
  EXPECT_EQ(scan.left_over_in_a_row, 0) << "a scan that left nothing starts the count again";
  for (int i = 0; i < 1000; ++i) scan.note_left_over(true);
  EXPECT_EQ(scan.left_over_in_a_row, LastScan::kLeftOverCount);
  EXPECT_EQ(left_over_pulls_wait(scan, milliseconds(600000)), milliseconds(600000))
      << "the doubling reaches even the longest configurable wait";
}

TEST(LeftOverPullsWait, ABusyRoundWaitsForTheSoonestDatabase) {
  LastScan quiet;
  LastScan left_over;
  left_over.note_left_over(true);
  EXPECT_EQ(left_over_pulls_wait({&quiet}, milliseconds(5)), milliseconds(5));
  EXPECT_EQ(left_over_pulls_wait({&quiet, &left_over}, milliseconds(5)), milliseconds(1));
}

TEST(LeftOverPullsWait, ShortensOnlyAWaitAfterAScanThatLeftRequestsOver) {
  LastScan scan;
  EXPECT_EQ(left_over_pulls_wait(scan, milliseconds(5)), milliseconds(5)) << "nothing left over";
  scan.left_over_in_a_row = 1;
  EXPECT_EQ(left_over_pulls_wait(scan, milliseconds(5)), milliseconds(1));
  scan.left_over_in_a_row = 3;
  EXPECT_EQ(left_over_pulls_wait(scan, milliseconds(5)), milliseconds(4));
  scan.left_over_in_a_row = 4;
  EXPECT_EQ(left_over_pulls_wait(scan, milliseconds(5)), milliseconds(5)) << "never longer than the wait";
  scan.forget();
  EXPECT_EQ(left_over_pulls_wait(scan, milliseconds(5)), milliseconds(5)) << "a forgotten scan left nothing";
}

TEST(IdleWait, AfterANarrowScanWakesWhenTheWideScanIsDue) {
  const auto t = IdleClock::now();
  LastScan scan = idle_scan(t, milliseconds(1000));
  scan.wide_scan_due = t + milliseconds(250);
  EXPECT_EQ(idle_wait(kListening, {&scan}, t + milliseconds(10)), milliseconds(240));
}

TEST(IdleWait, AScanThatDidNotReadTheNextVestingTimeOrAForgottenOneIsPolled) {
  const auto t = IdleClock::now();
  const LastScan made_while_polling = idle_scan(t, milliseconds(0));
  EXPECT_EQ(idle_wait(kListening, {&made_while_polling}, t), milliseconds(20));

  LastScan failed = idle_scan(t, milliseconds(1000));
  failed.next_vesting_in = microseconds(900000);
  failed.forget();
  EXPECT_EQ(idle_wait(kListening, {&failed}, t), milliseconds(20));
}

TEST(IdleWait, TheEarliestDatabaseDecidesAndTheLongestWaitCapsIt) {
  const auto t = IdleClock::now();
  const LastScan late = idle_scan(t, milliseconds(1000));
  LastScan soon = idle_scan(t + milliseconds(50), milliseconds(1000));
  soon.next_vesting_in = microseconds(70000);
  EXPECT_EQ(idle_wait(kListening, {&late, &soon}, t + milliseconds(60)), milliseconds(60));

  const LastScan far = idle_scan(t, milliseconds(5000));
  EXPECT_EQ(idle_wait(kListening, {&far}, t), milliseconds(1000));
}

TEST(IdleWait, NotListeningItPolls) {
  const auto t = IdleClock::now();
  const LastScan scan = idle_scan(t, milliseconds(1000));
  EXPECT_EQ(idle_wait(kPolling, {&scan}, t), milliseconds(20));
  EXPECT_EQ(idle_wait(IdleWaitBounds{milliseconds(20), milliseconds(5), false}, {&scan}, t), milliseconds(5));

  LastScan left_over = idle_scan(t, milliseconds(0));
  left_over.next_vesting_in = microseconds(0);
  left_over.note_left_over(true);
  EXPECT_EQ(idle_wait(kPolling, {&scan, &left_over}, t), milliseconds(1)) << "left-over pull requests, sooner";
}

}  // namespace
}  // namespace quick::scanner
