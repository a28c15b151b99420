// EnqueueOptions::pull_in_transaction (docs/protocol.md, "Pulling a pointer earlier"): an enqueue
// into a parked zone moves the zone's pointer itself, inside the caller's transaction, when it can
// lock it without waiting, and records a pull request otherwise. These tests check what it
// promises with real concurrent connections: the move commits or rolls back with the caller, it
// never waits for a consumer or another enqueuer, and other transactions see the pointer parked
// (and record requests) until the caller ends.
#include <chrono>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "quick/quick.h"
#include "store/consumer_store.h"
#include "support/items.h"
#include "support/test_database.h"

namespace quick {
namespace {

using namespace std::chrono_literals;
using testing::DatabaseTest;
using testing::make_item;

constexpr auto kParkedFor = 3'600'000ms;  // a parked zone: its pointer vests in an hour

class PullInTransactionTest : public DatabaseTest {
 protected:
  void SetUp() override {
    DatabaseTest::SetUp();
    if (HasFatalFailure()) return;
    // A pointer lock that the statements under test waited for would fail them, not hang them.
    query("ALTER DATABASE " + database_name() + " SET statement_timeout = '10s'");
  }

  static EnqueueOptions pulling() {
    EnqueueOptions options;
    options.pull_in_transaction = true;
    return options;
  }

  // A zone whose only item (and so its pointer) vests in an hour.
  void park(pqxx::connection& conn, const std::string& tenant) {
    testing::enqueue_committed(conn, make_item(tenant, "job", R"({"setup":true})", kParkedFor));
  }

  // Seconds from now (the database clock) until the pointer vests, as other sessions see it.
  double pointer_vests_in_s(const std::string& tenant) {
    return query_value<double>(
        "SELECT extract(epoch FROM vesting_time - clock_timestamp()) FROM quick.pointers "
        "WHERE tenant = '" +
        tenant + "'");
  }
  int pulls(const std::string& tenant) {
    return query_value<int>("SELECT count(*) FROM quick.pointer_pulls WHERE tenant = '" + tenant + "'");
  }
  bool pointer_vests_with_item(const std::string& tenant, std::int64_t item_id) {
    return query_value<bool>(
        "SELECT p.vesting_time = i.vesting_time FROM quick.pointers p, quick.items i "
        "WHERE p.tenant = '" +
        tenant + "' AND i.id = " + std::to_string(item_id));
  }
};

TEST_F(PullInTransactionTest, BatchMovesParkedPointersWhenTheCallerCommitsAndRecordsNoRequest) {
  auto conn = connect();
  park(*conn, "parked-a");
  park(*conn, "parked-b");
  testing::enqueue_committed(*conn, make_item("vested"));
  pqxx::work txn(*conn);
  const auto results = enqueue_batch_in(
      txn,
      {make_item("parked-a", "job", R"({"n":1})", 600'000ms), make_item("vested", "job", R"({"n":2})"),
       make_item("parked-b", "job", R"({"n":3})"), make_item("parked-a", "job", R"({"n":4})", 60'000ms)},
      pulling());
  ASSERT_EQ(results.size(), 4u);
  // Until the commit, everyone else still sees the zones parked, and there is nothing to apply.
  EXPECT_GT(pointer_vests_in_s("parked-a"), 3000);
  EXPECT_GT(pointer_vests_in_s("parked-b"), 3000);
  txn.commit();
  EXPECT_TRUE(pointer_vests_with_item("parked-a", results[3].item_id)) << "the zone's earliest new item";
  EXPECT_TRUE(pointer_vests_with_item("parked-b", results[2].item_id));
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.pointer_pulls"), 0);
}

TEST_F(PullInTransactionTest, SingleItemMovesAParkedPointerWhenTheCallerCommits) {
  auto conn = connect();
  park(*conn, "parked");
  pqxx::work txn(*conn);
  const auto result = enqueue_in(txn, make_item("parked"), pulling());
  EXPECT_GT(pointer_vests_in_s("parked"), 3000);
  txn.commit();
  EXPECT_TRUE(pointer_vests_with_item("parked", result.item_id));
  EXPECT_EQ(pulls("parked"), 0);
}

TEST_F(PullInTransactionTest, ARolledBackPullLeavesThePointerParked) {
  auto conn = connect();
  park(*conn, "parked");
  {
    pqxx::work txn(*conn);
    enqueue_batch_in(txn, {make_item("parked")}, pulling());
    enqueue_in(txn, make_item("parked"), pulling());
    txn.abort();
  }
  EXPECT_GT(pointer_vests_in_s("parked"), 3000);
  EXPECT_EQ(pulls("parked"), 0);
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.items WHERE tenant = 'parked'"), 1) << "the setup's";
}

// A visit locks its pointers FOR NO KEY UPDATE from its first step to its commit. An enqueue that
// meets such a lock neither waits for it nor moves the pointer under it: it records a request,
// which a consumer applies after both have committed.
TEST_F(PullInTransactionTest, APointerAConsumerHoldsGetsARequestAndTheEnqueueDoesNotWait) {
  auto conn = connect();
  park(*conn, "held");
  auto consumer = connect();
  pqxx::work visit(*consumer);
  visit.exec("SELECT 1 FROM quick.pointers WHERE tenant = 'held' FOR NO KEY UPDATE");
  {
    pqxx::work txn(*conn);
    enqueue_batch_in(txn, {make_item("held")}, pulling());  // statement_timeout: it would fail if it waited
    enqueue_in(txn, make_item("held"), pulling());
    txn.commit();
  }
  visit.commit();
  EXPECT_EQ(pulls("held"), 2);
  EXPECT_GT(pointer_vests_in_s("held"), 3000);
  pqxx::nontransaction apply(*consumer);
  EXPECT_EQ(store::apply_pointer_pulls(apply, 100), 1);
  EXPECT_LE(pointer_vests_in_s("held"), 0);
}

// The price of the option, pinned down: while the caller that pulled is open, another enqueue of
// the same tenant records a request that cannot be applied, and a visit does not see the zone
// vested; both items are found once the caller commits. Neither the other enqueue nor the
// consumer waits.
TEST_F(PullInTransactionTest, OthersSeeTheZoneParkedUntilThePullingCallerCommits) {
  auto puller = connect();
  park(*puller, "zone");
  pqxx::work pulling_txn(*puller);
  const auto first = enqueue_in(pulling_txn, make_item("zone", "job", R"({"n":1})"), pulling());

  auto other = connect();
  {
    pqxx::work txn(*other);
    enqueue_batch_in(txn, {make_item("zone", "job", R"({"n":2})")}, pulling());
    txn.commit();
  }
  EXPECT_EQ(pulls("zone"), 1) << "the other enqueue could not lock the pointer";

  auto consumer = connect();
  {
    pqxx::nontransaction apply(*consumer);
    EXPECT_EQ(store::apply_pointer_pulls(apply, 100), 0) << "the pointer is locked: the request waits";
  }
  {
    pqxx::work txn(*consumer);
    const auto visit = store::visit_zones(txn, {"zone"}, 10, 30'000ms, 0ms, {});
    txn.commit();
    EXPECT_TRUE(visit.items.empty());
    EXPECT_EQ(visit.conflicts_not_vested, 1) << "the committed pointer is still parked";
  }

  pulling_txn.commit();
  EXPECT_TRUE(pointer_vests_with_item("zone", first.item_id));
  pqxx::work txn(*consumer);
  const auto visit = store::visit_zones(txn, {"zone"}, 10, 30'000ms, 0ms, {});
  txn.commit();
  EXPECT_EQ(visit.items.size(), 2u) << "both items, the puller's and the other's";
}

// REPEATABLE READ and SERIALIZABLE callers may have read an older pointer version: they record a
// request, as without the option, and lock nothing beyond the enqueue's FOR KEY SHARE.
template <typename Transaction>
void expect_requests_only(pqxx::connection& conn, pqxx::connection& observer, const EnqueueOptions& options) {
  Transaction txn(conn);
  enqueue_batch_in(txn, {make_item("parked")}, options);
  enqueue_in(txn, make_item("parked"), options);
  pqxx::work probe(observer);
  EXPECT_EQ(probe.exec("SELECT 1 FROM quick.pointers WHERE tenant = 'parked' FOR NO KEY UPDATE NOWAIT").size(), 1u)
      << "the caller holds no lock a consumer conflicts with";
  probe.abort();
  txn.commit();
}

TEST_F(PullInTransactionTest, RepeatableReadAndSerializableCallersRecordRequestsInstead) {
  auto conn = connect();
  auto observer = connect();
  park(*conn, "parked");
  expect_requests_only<pqxx::transaction<pqxx::isolation_level::repeatable_read>>(*conn, *observer, pulling());
  expect_requests_only<pqxx::transaction<pqxx::isolation_level::serializable>>(*conn, *observer, pulling());
  EXPECT_EQ(pulls("parked"), 4);
  EXPECT_GT(pointer_vests_in_s("parked"), 3000);
}

TEST_F(PullInTransactionTest, WithoutTheOptionTheCallerRecordsRequestsAndHoldsNoConsumerLock) {
  auto conn = connect();
  auto observer = connect();
  park(*conn, "parked");
  expect_requests_only<pqxx::work>(*conn, *observer, EnqueueOptions{});
  EXPECT_EQ(pulls("parked"), 2);
}

}  // namespace
}  // namespace quick
