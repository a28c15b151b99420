// quick.scan_pointers says when it left pull requests over (docs/consumer.md#waking-up): in the
// last row's vesting time, the database's now, whether or not its peek found vested pointers
// (beside vested pointers, only a scan from a floor: the Scanner's narrow and wide scans). The
// Scanner then looks again within a millisecond or two (scanner/idle_wait.h): the common cause is
// another Scanner applying those requests at that moment, whose pulls vest with nothing to
// announce them. Here a second session holds the request's row lock, as that Scanner's
// apply_pointer_pulls does until it commits.
#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <string>

#include "store/pointer_store.h"
#include "support/items.h"
#include "support/test_database.h"

namespace quick::store {
namespace {

using quick::testing::DatabaseTest;

class LeftOverPullsScanTest : public DatabaseTest {
 protected:
  void SetUp() override {
    DatabaseTest::SetUp();
    query("SELECT quick.enqueue('parked', 'job', '{}', interval '1 hour')");
    query("SELECT quick.enqueue('parked', 'job')");  // vests before its zone's pointer: a pull request
    ASSERT_EQ(query_value<int>("SELECT count(*) FROM quick.pointer_pulls"), 1);
  }
  Scan scan(const ScanFloors& floors = {}, int max_pulls = 100) {
    auto conn = connect();
    pqxx::nontransaction txn(*conn);
    return scan_pointers(txn, 100, max_pulls, floors);
  }
  // The floors of a Scanner's narrow or wide scan, a minute back.
  ScanFloors from_a_minute_ago() {
    auto conn = connect();
    return ScanFloors{quick::testing::db_clock(*conn) - std::chrono::minutes(1), std::nullopt};
  }
  static std::set<std::string> tenants(const Scan& scan) {
    std::set<std::string> out;
    for (const auto& pointer : scan.pointers) out.insert(pointer.tenant);
    return out;
  }
};

TEST_F(LeftOverPullsScanTest, ARequestAnotherApplierHoldsIsReportedBesideTheVestedPointersFound) {
  query("SELECT quick.enqueue('busy', 'job')");  // a vested pointer for the peek to find
  auto applier = connect();
  pqxx::work applying(*applier);
  applying.exec("SELECT 1 FROM quick.pointer_pulls FOR UPDATE");

  const Scan while_applied = scan(from_a_minute_ago());
  EXPECT_EQ(while_applied.pulled, 0);
  EXPECT_EQ(tenants(while_applied), std::set<std::string>{"busy"});
  ASSERT_TRUE(while_applied.next_vesting.has_value()) << "requests left over, vested pointers found";
  EXPECT_EQ(*while_applied.next_vesting, while_applied.database_now);

  applying.abort();  // the other applier gave up: this Scanner's next scan applies the request
  const Scan after = scan(from_a_minute_ago());
  EXPECT_EQ(after.pulled, 1);
  EXPECT_EQ(tenants(after), (std::set<std::string>{"busy", "parked"}));
  EXPECT_FALSE(after.next_vesting.has_value()) << "nothing left over; vested pointers found";
}

// A full scan (no floor) that found vested pointers does not look for left-over requests: under
// a long snapshot that would be a third walk over every request since it began. The next scan,
// from a floor, does.
TEST_F(LeftOverPullsScanTest, OnlyAScanFromAFloorReportsRequestsLeftBesideVestedPointers) {
  query("SELECT quick.enqueue('busy', 'job')");
  auto applier = connect();
  pqxx::work applying(*applier);
  applying.exec("SELECT 1 FROM quick.pointer_pulls FOR UPDATE");
  auto conn = connect();
  const DbTime now = quick::testing::db_clock(*conn);

  EXPECT_FALSE(scan().next_vesting.has_value()) << "full scan";
  const Scan from_floor = scan(from_a_minute_ago());
  ASSERT_TRUE(from_floor.next_vesting.has_value());
  EXPECT_EQ(*from_floor.next_vesting, from_floor.database_now);
  EXPECT_FALSE(scan({now + std::chrono::minutes(1), std::nullopt}).next_vesting.has_value())
      << "a request below the floor is the next full scan's";
}

TEST_F(LeftOverPullsScanTest, RequestsBeyondMaxPullsAreReportedAsLeftOver) {
  query("SELECT quick.enqueue('second', 'job', '{}', interval '1 hour')");
  query("SELECT quick.enqueue('second', 'job')");
  ASSERT_EQ(query_value<int>("SELECT count(*) FROM quick.pointer_pulls"), 2);

  const Scan first = scan(from_a_minute_ago(), 1);
  EXPECT_EQ(first.pulled, 1);
  ASSERT_TRUE(first.next_vesting.has_value()) << "one request applied, one left";
  EXPECT_EQ(*first.next_vesting, first.database_now);
  const Scan second = scan(from_a_minute_ago(), 1);
  EXPECT_EQ(second.pulled, 1);
  EXPECT_FALSE(second.next_vesting.has_value());
}

TEST_F(LeftOverPullsScanTest, ARequestWhosePointerIsLockedIsReportedWhenNothingIsVested) {
  auto visitor = connect();
  pqxx::work visiting(*visitor);
  visiting.exec("SELECT 1 FROM quick.pointers WHERE tenant = 'parked' FOR NO KEY UPDATE");

  const Scan while_locked = scan();
  EXPECT_EQ(while_locked.pulled, 0);
  EXPECT_TRUE(while_locked.pointers.empty());
  ASSERT_TRUE(while_locked.next_vesting.has_value());
  EXPECT_EQ(*while_locked.next_vesting, while_locked.database_now);
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.pointer_pulls"), 1) << "kept for a later scan";
}

}  // namespace
}  // namespace quick::store
