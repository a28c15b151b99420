// Unit tests (no database) for scanner::ScanFloorKeeper: a full scan first; narrow scans from
// the last refresh's time less 100 ms; a wide refresh every 250 ms from 5 s before the last
// one; full scans every 10 s, or every 1,000 times a slow full scan's duration.
#include "scanner/scan_floors.h"

#include <gtest/gtest.h>

#include <chrono>

namespace quick::scanner {
namespace {

using std::chrono::milliseconds;
using Clock = ScanFloorKeeper::Clock;
using Kind = ScanFloorKeeper::Kind;

const DbTime db_now = DbTime(std::chrono::hours(24 * 365 * 50));

store::Scan scan_at(DbTime database_now, std::optional<DbTime> oldest_vested) {
  store::Scan scan;
  scan.database_now = database_now;
  if (oldest_vested) scan.pointers.push_back(store::PeekedPointer{"a", *oldest_vested});
  return scan;
}

TEST(ScanFloorKeeper, TheFirstScanReadsFromTheBeginning) {
  const auto plan = ScanFloorKeeper().next(Clock::now());
  EXPECT_EQ(plan.kind, Kind::kFull);
  EXPECT_FALSE(plan.floors.requested_from || plan.floors.vested_from);
}

TEST(ScanFloorKeeper, NarrowScansStartJustBelowTheLastRefreshAndKeepTheOldestVestedPointer) {
  ScanFloorKeeper keeper;
  const auto t = Clock::now();
  keeper.observe(scan_at(db_now, db_now - milliseconds(5000)), keeper.next(t), t, milliseconds(2));

  const auto narrow = keeper.next(t + ScanFloorKeeper::kWideEvery / 2);
  ASSERT_EQ(narrow.kind, Kind::kNarrow);
  EXPECT_EQ(*narrow.floors.requested_from, db_now - milliseconds(100));
  EXPECT_EQ(*narrow.floors.vested_from, db_now - milliseconds(5000));

  // A narrow scan is no refresh: its floors stay.
  keeper.observe(scan_at(db_now + ScanFloorKeeper::kWideEvery / 2, std::nullopt), narrow,
                 t + ScanFloorKeeper::kWideEvery / 2, milliseconds(1));
  EXPECT_EQ(*keeper.next(t + ScanFloorKeeper::kWideEvery - milliseconds(1)).floors.requested_from,
            db_now - milliseconds(100));
}

TEST(ScanFloorKeeper, AWideRefreshEveryQuarterSecondReachesFiveSecondsBackAndMovesTheFloorsOn) {
  EXPECT_EQ(ScanFloorKeeper::kWideEvery, milliseconds(250));
  ScanFloorKeeper keeper;
  const auto t = Clock::now();
  keeper.observe(scan_at(db_now, std::nullopt), keeper.next(t), t, milliseconds(2));
  EXPECT_EQ(keeper.next(t + milliseconds(249)).kind, Kind::kNarrow);

  const auto wide = keeper.next(t + milliseconds(250));
  ASSERT_EQ(wide.kind, Kind::kWide);
  EXPECT_EQ(*wide.floors.requested_from, db_now - milliseconds(5000));
  EXPECT_EQ(*wide.floors.vested_from, db_now - milliseconds(5000)) << "nothing was vested: the margin alone";

  keeper.observe(scan_at(db_now + milliseconds(250), std::nullopt), wide, t + milliseconds(250), milliseconds(1));
  const auto after = keeper.next(t + milliseconds(300));
  EXPECT_EQ(after.kind, Kind::kNarrow);
  EXPECT_EQ(*after.floors.requested_from, db_now + milliseconds(150));
}

// What lands below a narrow floor is read by the next wide scan: after a narrow scan the keeper
// says when that is due, so that an idle Scanner does not sleep past it; after a refresh, nothing.
TEST(ScanFloorKeeper, SaysWhenTheWideScanIsDueOnlyAfterANarrowScan) {
  ScanFloorKeeper keeper;
  const auto t = Clock::now();
  EXPECT_FALSE(keeper.wide_scan_due()) << "before any scan";
  keeper.observe(scan_at(db_now, std::nullopt), keeper.next(t), t, milliseconds(2));
  EXPECT_FALSE(keeper.wide_scan_due()) << "after the full scan";

  const auto narrow = keeper.next(t + milliseconds(10));
  ASSERT_EQ(narrow.kind, Kind::kNarrow);
  keeper.observe(scan_at(db_now + milliseconds(10), std::nullopt), narrow, t + milliseconds(10), milliseconds(1));
  ASSERT_TRUE(keeper.wide_scan_due());
  EXPECT_EQ(*keeper.wide_scan_due(), t + ScanFloorKeeper::kWideEvery);

  const auto wide = keeper.next(t + ScanFloorKeeper::kWideEvery);
  ASSERT_EQ(wide.kind, Kind::kWide);
  keeper.observe(scan_at(db_now + ScanFloorKeeper::kWideEvery, std::nullopt), wide, t + ScanFloorKeeper::kWideEvery,
                 milliseconds(1));
  EXPECT_FALSE(keeper.wide_scan_due()) << "after the wide scan";
}

// A wake-up notification reported a transaction whose first notifying statement began below the
// next wide scan's floor: that scan reaches back to it (less the narrow margin), once, and no
// further back than kLateCommitReach; one within the wide window changes nothing.
TEST(ScanFloorKeeper, AWideScanReachesBackToALateCommitOnce) {
  ScanFloorKeeper keeper;
  const auto t = Clock::now();
  keeper.observe(scan_at(db_now, std::nullopt), keeper.next(t), t, milliseconds(2));

  keeper.note_late_commit(db_now - milliseconds(4000));  // within the wide window
  EXPECT_FALSE(keeper.wide_scan_due()) << "the next wide scan reads it anyway";

  keeper.note_late_commit(db_now - milliseconds(8000));
  keeper.note_late_commit(db_now - milliseconds(7000));
  ASSERT_TRUE(keeper.wide_scan_due()) << "an idle Scanner wakes for the wide scan";
  EXPECT_EQ(*keeper.wide_scan_due(), t + ScanFloorKeeper::kWideEvery);
  EXPECT_EQ(keeper.next(t + milliseconds(10)).kind, Kind::kNarrow) << "not before the wide scan is due";

  const auto wide = keeper.next(t + ScanFloorKeeper::kWideEvery);
  ASSERT_EQ(wide.kind, Kind::kWide);
  EXPECT_EQ(*wide.floors.requested_from, db_now - milliseconds(8100)) << "the earliest, less the narrow margin";
  EXPECT_EQ(*wide.floors.vested_from, db_now - milliseconds(8100));
  keeper.observe(scan_at(db_now + ScanFloorKeeper::kWideEvery, std::nullopt), wide, t + ScanFloorKeeper::kWideEvery,
                 milliseconds(1));
  EXPECT_FALSE(keeper.wide_scan_due());
  const auto next_wide = keeper.next(t + 2 * ScanFloorKeeper::kWideEvery);
  ASSERT_EQ(next_wide.kind, Kind::kWide);
  EXPECT_EQ(*next_wide.floors.requested_from, db_now + ScanFloorKeeper::kWideEvery - milliseconds(5000))
      << "once: the next wide scan has its usual floor";

  keeper.note_late_commit(db_now - std::chrono::hours(5));
  const auto far = keeper.next(t + 2 * ScanFloorKeeper::kWideEvery);
  EXPECT_EQ(*far.floors.requested_from,
            db_now + ScanFloorKeeper::kWideEvery - ScanFloorKeeper::kLateCommitReach - milliseconds(100))
      << "no further back than kLateCommitReach";
}

// A keeper refreshed at db_now that noted a commit begun 8 s before it, and the wide scan that
// reaches back to that commit (made at t + kWideEvery).
struct ReachingBack {
  ScanFloorKeeper keeper;
  ScanFloorKeeper::Plan wide;
};
ReachingBack reaching_back_to_a_late_commit(Clock::time_point t) {
  ReachingBack reaching;
  reaching.keeper.observe(scan_at(db_now, std::nullopt), reaching.keeper.next(t), t, milliseconds(2));
  reaching.keeper.note_late_commit(db_now - milliseconds(8000));
  reaching.wide = reaching.keeper.next(t + ScanFloorKeeper::kWideEvery);
  return reaching;
}

// The wide scan's report, made at t + kWideEvery: pull requests left over, beside the vested
// pointer `oldest_vested` or nothing vested.
store::Scan left_pull_requests_over(std::optional<DbTime> oldest_vested) {
  store::Scan scan = scan_at(db_now + ScanFloorKeeper::kWideEvery, oldest_vested);
  scan.next_vesting = scan.database_now;
  return scan;
}

// Pull requests the reaching scan could not apply (their pointers locked: it reports the next
// vesting time as now) stay below the narrow floors: the next wide scan reaches back again.
TEST(ScanFloorKeeper, AWideScanThatLeftPullRequestsReachesBackAgainNextTime) {
  const auto t = Clock::now();
  auto [keeper, wide] = reaching_back_to_a_late_commit(t);
  ASSERT_EQ(wide.kind, Kind::kWide);
  keeper.observe(left_pull_requests_over(std::nullopt), wide, t + ScanFloorKeeper::kWideEvery, milliseconds(1));
  ASSERT_TRUE(keeper.wide_scan_due());
  EXPECT_EQ(*keeper.next(t + 2 * ScanFloorKeeper::kWideEvery).floors.requested_from, db_now - milliseconds(8100));
}

// Beside vested pointers, left-over requests only ask the Scanner to look again soon
// (idle_wait.h): with steady requests from several consumers nearly every wide scan reports some,
// and keeping the reach for them would make each wide scan reach back like a full one.
TEST(ScanFloorKeeper, LeftOverRequestsBesideVestedPointersDoNotKeepTheReach) {
  const auto t = Clock::now();
  auto [keeper, wide] = reaching_back_to_a_late_commit(t);
  ASSERT_EQ(wide.kind, Kind::kWide);
  keeper.observe(left_pull_requests_over(db_now), wide, t + ScanFloorKeeper::kWideEvery, milliseconds(1));
  EXPECT_FALSE(keeper.wide_scan_due()) << "the reach ends as after any wide scan";
}

TEST(ScanFloorKeeper, FullScansComeEveryTenSecondsOrLessOftenWhenTheyAreSlow) {
  ScanFloorKeeper quick_full;
  const auto t = Clock::now();
  quick_full.observe(scan_at(db_now, std::nullopt), quick_full.next(t), t, milliseconds(5));
  EXPECT_NE(quick_full.next(t + milliseconds(9999)).kind, Kind::kFull);
  EXPECT_EQ(quick_full.next(t + milliseconds(10000)).kind, Kind::kFull);

  ScanFloorKeeper slow_full;  // 300 ms: at most 0.1% of the time, every 300 s
  slow_full.observe(scan_at(db_now, std::nullopt), slow_full.next(t), t, milliseconds(300));
  EXPECT_NE(slow_full.next(t + milliseconds(299999)).kind, Kind::kFull);
  EXPECT_EQ(slow_full.next(t + milliseconds(300000)).kind, Kind::kFull);
}

// A scan that failed is never observed: the full scan stays due.
TEST(ScanFloorKeeper, AFullScanThatFailedIsTriedAgain) {
  ScanFloorKeeper keeper;
  const auto t = Clock::now();
  EXPECT_EQ(keeper.next(t).kind, Kind::kFull);
  EXPECT_EQ(keeper.next(t + milliseconds(10)).kind, Kind::kFull);
}

}  // namespace
}  // namespace quick::scanner
