// Item leases (paper section 5): obtain_lease, extend_lease and lease expiry on the database clock.
// Leases here are a few hundred milliseconds; tests wait for the database clock to pass the
// expiry instead of sleeping a fixed time.
#include <chrono>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "quick/quick.h"
#include "support/items.h"
#include "support/test_database.h"

namespace quick {
namespace {

using namespace std::chrono_literals;
using testing::DatabaseTest;
using testing::make_item;
using testing::stored_item;

constexpr std::chrono::milliseconds kShortLease = 250ms;
constexpr std::chrono::milliseconds kLongLease = 60'000ms;

class LeaseTest : public DatabaseTest {
 protected:
  void SetUp() override {
    DatabaseTest::SetUp();
    conn_ = connect();
  }
  pqxx::connection& conn() { return *conn_; }

  std::int64_t enqueue(const std::string& tenant = "tenant-a") {
    return testing::enqueue_committed(conn(), make_item(tenant));
  }
  LeaseResult obtain(std::int64_t id, std::chrono::milliseconds duration) {
    pqxx::work txn(conn());
    auto result = obtain_lease_in(txn, id, duration);
    txn.commit();
    return result;
  }
  ExtendResult extend(std::int64_t id, const std::string& lease_id, std::chrono::milliseconds duration) {
    pqxx::work txn(conn());
    auto result = extend_lease_in(txn, id, lease_id, duration);
    txn.commit();
    return result;
  }
  Outcome complete(std::int64_t id, const std::string& lease_id) {
    pqxx::work txn(conn());
    auto result = complete_in(txn, id, lease_id);
    txn.commit();
    return result;
  }
  std::vector<Item> dequeue(const std::string& tenant, std::chrono::milliseconds duration, int max = 10) {
    pqxx::work txn(conn());
    auto items = dequeue_in(txn, tenant, {max, duration, std::nullopt});
    txn.commit();
    return items;
  }

 private:
  std::unique_ptr<pqxx::connection> conn_;
};

TEST_F(LeaseTest, ObtainLeaseSetsARandomLeaseIdAndMovesVestingTimeToTheExpiry) {
  const auto id = enqueue();
  const auto before = testing::db_clock(conn());
  const auto result = obtain(id, kLongLease);
  const auto after = testing::db_clock(conn());
  ASSERT_EQ(result.outcome, Outcome::kDone);
  ASSERT_TRUE(result.lease.has_value());
  EXPECT_EQ(result.lease->item_id, id);
  EXPECT_EQ(result.lease->lease_id.size(), 36u);
  const auto stored = stored_item(conn(), id);
  EXPECT_EQ(stored->lease_id, result.lease->lease_id);
  EXPECT_EQ(stored->vesting_time, result.lease->expires_at);
  EXPECT_GE(result.lease->expires_at, before + kLongLease);
  EXPECT_LE(result.lease->expires_at, after + kLongLease);
}

TEST_F(LeaseTest, ObtainLeaseReportsLeaseLostWhileAnotherLiveLeaseHoldsTheItem) {
  const auto id = enqueue();
  const auto first = obtain(id, kLongLease);
  ASSERT_EQ(first.outcome, Outcome::kDone);
  const auto second = obtain(id, kLongLease);
  EXPECT_EQ(second.outcome, Outcome::kLeaseLost);
  EXPECT_FALSE(second.lease.has_value());
  EXPECT_EQ(stored_item(conn(), id)->lease_id, first.lease->lease_id) << "the live lease was taken over";
}

TEST_F(LeaseTest, ObtainLeaseSucceedsAfterTheLiveLeaseExpires) {
  const auto id = enqueue();
  const auto first = obtain(id, kShortLease);
  ASSERT_EQ(first.outcome, Outcome::kDone);
  testing::wait_until_db_clock_passes(conn(), first.lease->expires_at);
  const auto second = obtain(id, kLongLease);
  ASSERT_EQ(second.outcome, Outcome::kDone);
  EXPECT_NE(second.lease->lease_id, first.lease->lease_id);
  EXPECT_EQ(stored_item(conn(), id)->lease_id, second.lease->lease_id);
}

TEST_F(LeaseTest, ObtainLeaseOnAnUnknownItemReportsItemGone) {
  const auto result = obtain(987654321, kLongLease);
  EXPECT_EQ(result.outcome, Outcome::kItemGone);
  EXPECT_FALSE(result.lease.has_value());
}

// now() is the transaction's start; a lease taken late in a long transaction must still last its
// full duration from the statement that took it (DESIGN.md section 4).
TEST_F(LeaseTest, LeaseExpiryIsComputedFromTheStatementNotTheTransactionStart) {
  const auto id = enqueue();
  pqxx::work txn(conn());
  txn.exec("SELECT pg_sleep(0.3)");
  const auto result = obtain_lease_in(txn, id, 1000ms);
  ASSERT_EQ(result.outcome, Outcome::kDone);
  const auto transaction_start_micros =
      txn.exec("SELECT (extract(epoch FROM now()) * 1000000)::bigint").at(0)[0].as<std::int64_t>();
  txn.commit();
  EXPECT_GE(testing::to_micros(result.lease->expires_at) - transaction_start_micros, 1'300'000);
}

TEST_F(LeaseTest, ExtendLeaseByTheHolderWhileLiveMovesTheExpiry) {
  const auto id = enqueue();
  const auto lease = obtain(id, kShortLease).lease;
  ASSERT_TRUE(lease.has_value());
  const auto extended = extend(id, lease->lease_id, kLongLease);
  ASSERT_EQ(extended.outcome, Outcome::kDone);
  ASSERT_TRUE(extended.expires_at.has_value());
  EXPECT_GT(*extended.expires_at, lease->expires_at + 50'000ms);
  const auto stored = stored_item(conn(), id);
  EXPECT_EQ(stored->vesting_time, *extended.expires_at);
  EXPECT_EQ(stored->lease_id, lease->lease_id) << "extend must keep the lease id";
}

TEST_F(LeaseTest, ExtendLeaseAfterExpiryWorksWhenNobodyReLeasedTheItem) {
  const auto id = enqueue();
  const auto lease = obtain(id, kShortLease).lease;
  ASSERT_TRUE(lease.has_value());
  testing::wait_until_db_clock_passes(conn(), lease->expires_at);
  const auto extended = extend(id, lease->lease_id, kLongLease);
  EXPECT_EQ(extended.outcome, Outcome::kDone);
  // The extension is live again: another consumer cannot take the item.
  EXPECT_EQ(obtain(id, kLongLease).outcome, Outcome::kLeaseLost);
  pqxx::work txn(conn());
  EXPECT_TRUE(peek_in(txn, "tenant-a", {10, std::nullopt}).empty());
}

TEST_F(LeaseTest, ExtendLeaseAfterAnotherConsumerReLeasedReportsLeaseLost) {
  const auto id = enqueue();
  const auto old_lease = obtain(id, kShortLease).lease;
  ASSERT_TRUE(old_lease.has_value());
  testing::wait_until_db_clock_passes(conn(), old_lease->expires_at);
  const auto new_lease = obtain(id, kLongLease).lease;
  ASSERT_TRUE(new_lease.has_value());
  const auto extended = extend(id, old_lease->lease_id, kLongLease);
  EXPECT_EQ(extended.outcome, Outcome::kLeaseLost);
  EXPECT_FALSE(extended.expires_at.has_value());
  const auto stored = stored_item(conn(), id);
  EXPECT_EQ(stored->lease_id, new_lease->lease_id);
  EXPECT_EQ(stored->vesting_time, new_lease->expires_at) << "the lost extend changed the new lease";
}

TEST_F(LeaseTest, ExtendLeaseAfterCompletionReportsItemGone) {
  const auto id = enqueue();
  const auto lease = obtain(id, kLongLease).lease;
  ASSERT_TRUE(lease.has_value());
  ASSERT_EQ(complete(id, lease->lease_id), Outcome::kDone);
  EXPECT_EQ(extend(id, lease->lease_id, kLongLease).outcome, Outcome::kItemGone);
}

TEST_F(LeaseTest, ExtendLeaseAfterTheLeaseWasReleasedReportsLeaseLost) {
  const auto id = enqueue();
  const auto lease = obtain(id, kLongLease).lease;
  ASSERT_TRUE(lease.has_value());
  {
    pqxx::work txn(conn());
    ASSERT_EQ(release_lease_in(txn, id, lease->lease_id), Outcome::kDone);
    txn.commit();
  }
  EXPECT_EQ(extend(id, lease->lease_id, kLongLease).outcome, Outcome::kLeaseLost);
}

// The full consumer story: a consumer dequeues with a short lease and stalls; the lease runs out
// on the database clock; another consumer dequeues the same item with a new lease; the stalled
// consumer's complete and extend then report that it lost the lease.
TEST_F(LeaseTest, ExpiredLeaseLetsAnotherConsumerDequeueAndTheOldHolderLosesTheLease) {
  auto stalled_conn = connect();
  testing::with_short_lease([&](std::chrono::milliseconds short_lease) {
    const std::string tenant = "tenant-" + std::to_string(short_lease.count());
    const auto id = enqueue(tenant);
    std::vector<Item> stalled;
    {
      pqxx::work txn(*stalled_conn);
      stalled = dequeue_in(txn, tenant, {1, short_lease, std::nullopt});
      txn.commit();
    }
    if (stalled.size() != 1) {
      ADD_FAILURE() << "dequeue returned " << stalled.size() << " items";
      return true;
    }
    const bool dequeued_while_leased = !dequeue(tenant, kLongLease).empty();
    if (testing::db_clock(conn()) >= stalled[0].vesting_time) return false;  // too slow: retry
    EXPECT_FALSE(dequeued_while_leased) << "leased item dequeued twice";

    testing::wait_until_db_clock_passes(conn(), stalled[0].vesting_time);
    const auto taken_over = dequeue(tenant, kLongLease);
    EXPECT_EQ(taken_over.size(), 1u);
    if (taken_over.size() != 1) return true;
    EXPECT_EQ(taken_over[0].id, id);
    EXPECT_NE(*taken_over[0].lease_id, *stalled[0].lease_id);

    {
      pqxx::work txn(*stalled_conn);
      EXPECT_EQ(complete_in(txn, id, *stalled[0].lease_id), Outcome::kLeaseLost);
      EXPECT_EQ(extend_lease_in(txn, id, *stalled[0].lease_id, kLongLease).outcome, Outcome::kLeaseLost);
      txn.commit();
    }
    EXPECT_TRUE(stored_item(conn(), id).has_value()) << "the old holder completed the item";
    EXPECT_EQ(complete(id, *taken_over[0].lease_id), Outcome::kDone);
    EXPECT_FALSE(stored_item(conn(), id).has_value());
    return true;
  });
}

}  // namespace
}  // namespace quick
