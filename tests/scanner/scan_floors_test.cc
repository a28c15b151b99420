// Unit tests (no database) for scanner::ScanFloorKeeper: a full scan first and then once a
// second, and in between floors taken from the last full scan (its database time less the
// margin, and for pointers no later than the oldest vested pointer it found).
#include "scanner/scan_floors.h"

#include <gtest/gtest.h>

#include <chrono>

namespace quick::scanner {
namespace {

using std::chrono::milliseconds;
using Clock = ScanFloorKeeper::Clock;

const DbTime db_now = DbTime(std::chrono::hours(24 * 365 * 50));

store::Scan scan_with_oldest_vested(std::optional<DbTime> oldest) {
  store::Scan scan;
  scan.database_now = db_now;
  if (oldest) scan.pointers.push_back(store::PeekedPointer{"a", *oldest});
  return scan;
}

bool full(const store::ScanFloors& floors) { return !floors.requested_from && !floors.vested_from; }

TEST(ScanFloorKeeper, TheFirstScanReadsFromTheBeginning) {
  ScanFloorKeeper keeper;
  EXPECT_TRUE(full(keeper.next(Clock::now())));
}

TEST(ScanFloorKeeper, ScansBetweenFullOnesStartAtTheFloorsOfTheLastFullScan) {
  ScanFloorKeeper keeper(milliseconds(1000), milliseconds(1000));
  const auto t = Clock::now();
  const auto first = keeper.next(t);
  keeper.observe(scan_with_oldest_vested(db_now - milliseconds(5000)), first, t);

  const auto between = keeper.next(t + milliseconds(500));
  ASSERT_FALSE(full(between));
  EXPECT_EQ(*between.requested_from, db_now - milliseconds(1000));
  EXPECT_EQ(*between.vested_from, db_now - milliseconds(5000)) << "the oldest vested pointer stays in reach";

  // A scan made from the floors moves nothing; a second later a full scan is due again.
  keeper.observe(scan_with_oldest_vested(db_now), between, t + milliseconds(500));
  EXPECT_EQ(*keeper.next(t + milliseconds(900)).vested_from, db_now - milliseconds(5000));
  EXPECT_TRUE(full(keeper.next(t + milliseconds(1000))));
}

TEST(ScanFloorKeeper, WithNothingVestedThePointerFloorIsTheMargin) {
  ScanFloorKeeper keeper(milliseconds(1000), milliseconds(1000));
  const auto t = Clock::now();
  keeper.observe(scan_with_oldest_vested(std::nullopt), keeper.next(t), t);
  EXPECT_EQ(*keeper.next(t + milliseconds(10)).vested_from, db_now - milliseconds(1000));
}

// A scan that failed is never observed: the full scan stays due.
TEST(ScanFloorKeeper, AFullScanThatFailedIsTriedAgain) {
  ScanFloorKeeper keeper;
  const auto t = Clock::now();
  EXPECT_TRUE(full(keeper.next(t)));
  EXPECT_TRUE(full(keeper.next(t + milliseconds(10))));
}

}  // namespace
}  // namespace quick::scanner
