// The Scanner's read of the next vesting time (docs/consumer.md#waking-up): when nothing is
// vested, quick.scan_pointers reports when the next pointer vests, looking only as far ahead as
// asked. While a snapshot holds vacuum back, every dead version of a parked or requeued pointer
// keeps its entry in pointers_vesting between now and the next live pointer, and an unbounded
// read steps over all of them (the control); a read bounded by the Scanner's next wake-up reads
// only those within it.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "store/pg_values.h"
#include "store/pointer_store.h"
#include "support/test_database.h"

namespace quick::store {
namespace {

using namespace std::chrono_literals;
using quick::testing::DatabaseTest;

constexpr int kVersions = 600;

class NextVestingReadTest : public DatabaseTest {
 protected:
  struct Read {
    std::optional<DbTime> next_vesting;
    long long entries = 0;  // index entries of pointers_vesting the scan read
  };

  // One scan with nothing vested, in a transaction that is rolled back.
  Read scan(std::optional<std::chrono::microseconds> within) {
    auto conn = connect();
    pqxx::work txn(*conn);
    const Scan result = scan_pointers(txn, 100, 100, {}, within);
    EXPECT_TRUE(result.pointers.empty());
    Read read{result.next_vesting, txn.exec1("SELECT pg_stat_get_xact_tuples_returned("
                                             "'quick.pointers_vesting'::regclass)")[0]
                                       .as<long long>()};
    txn.abort();
    return read;
  }
};

TEST_F(NextVestingReadTest, OnlyAPointerVestingWithinTheHorizonIsReported) {
  query("SELECT quick.enqueue('later', 'job', '{}', interval '1 hour')");
  const auto in_an_hour = query_value<std::int64_t>(
      "SELECT (extract(epoch FROM vesting_time) * 1000000)::bigint FROM quick.pointers WHERE tenant = 'later'");

  const auto unbounded = scan(std::nullopt);
  ASSERT_TRUE(unbounded.next_vesting.has_value());
  EXPECT_EQ(micros_from_db_time(*unbounded.next_vesting), in_an_hour);
  const auto within_two_hours = scan(std::chrono::hours(2));
  ASSERT_TRUE(within_two_hours.next_vesting.has_value());
  EXPECT_EQ(micros_from_db_time(*within_two_hours.next_vesting), in_an_hour);
  EXPECT_FALSE(scan(std::chrono::minutes(10)).next_vesting.has_value()) << "vests after the horizon";
  EXPECT_FALSE(scan(0us).next_vesting.has_value()) << "a zero horizon reads nothing";
}

TEST_F(NextVestingReadTest, ABoundedReadStepsOverOnlyTheDeadVersionsWithinItWhileASnapshotKeepsThem) {
  query("SELECT quick.enqueue('z', 'job')");
  query("SELECT quick.enqueue('later', 'job', '{}', interval '1 hour')");
  auto holder = connect();
  pqxx::nontransaction held(*holder);
  held.exec("BEGIN ISOLATION LEVEL REPEATABLE READ");
  held.exec("SELECT count(*) FROM quick.pointers");  // takes the snapshot
  // Versions of z parked a minute ahead, as settles leave them, each replaced by the next; the
  // last one parks z beyond 'later'. Each moves the indexed vesting time: never a HOT update.
  for (int i = 0; i < kVersions; ++i) {
    query("UPDATE quick.pointers SET vesting_time = statement_timestamp() + interval '1 minute' WHERE tenant = 'z'");
  }
  query("UPDATE quick.pointers SET vesting_time = statement_timestamp() + interval '2 hours' WHERE tenant = 'z'");

  const auto control = scan(std::nullopt);
  EXPECT_TRUE(control.next_vesting.has_value());
  EXPECT_GE(control.entries, kVersions) << "the control: an unbounded read meets every dead version";

  const auto bounded = scan(1s);  // the longest idle wait by default (listening_poll_interval)
  EXPECT_FALSE(bounded.next_vesting.has_value());
  EXPECT_LT(bounded.entries, 10) << "the control read " << control.entries;
  held.exec("ROLLBACK");
}

TEST_F(NextVestingReadTest, ANegativeHorizonIsRefusedByName) {
  try {
    query("SELECT count(*) FROM quick.scan_pointers(10, 10, NULL, NULL, interval '-1 second')");
    FAIL() << "expected an error";
  } catch (const std::exception& error) {
    EXPECT_NE(std::string(error.what()).find("next_vesting_within"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace quick::store
