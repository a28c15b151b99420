// Pulling a parked pointer earlier (DESIGN.md section 4): enqueue records a request inside the
// caller's transaction; quick.apply_pointer_pulls applies it after the commit, never shortening a
// live pointer lease and never waiting.
#include <chrono>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "quick/quick.h"
#include "store/pointer_store.h"
#include "support/items.h"
#include "support/test_database.h"

namespace quick::store {
namespace {

using namespace std::chrono_literals;
using quick::testing::DatabaseTest;
using quick::testing::make_item;
using quick::testing::stored_item;
using quick::testing::stored_pointer;

constexpr std::chrono::milliseconds kHour = 3'600'000ms;

class PointerPullTest : public DatabaseTest {
 protected:
  void SetUp() override {
    DatabaseTest::SetUp();
    conn_ = connect();
    pqxx::nontransaction(*conn_).exec("SET statement_timeout = '10s'");
  }
  pqxx::connection& conn() { return *conn_; }

  std::int64_t enqueue(const NewItem& item) { return quick::testing::enqueue_committed(conn(), item); }
  // A zone whose pointer is parked an hour from now, not leased.
  void make_parked_zone(const std::string& tenant) { enqueue(make_item(tenant, "job", "{}", kHour)); }
  int pulls() { return query_value<int>("SELECT count(*) FROM quick.pointer_pulls"); }
  int apply(int max_requests = 100) {
    pqxx::work txn(conn());
    const int pulled = apply_pointer_pulls(txn, max_requests);
    txn.commit();
    return pulled;
  }

 private:
  std::unique_ptr<pqxx::connection> conn_;
};

TEST_F(PointerPullTest, ImmediateEnqueueIntoAParkedZoneMovesItsPointerOnlyAfterCommitAndApply) {
  make_parked_zone("t");
  const auto parked_at = stored_pointer(conn(), "t")->vesting_time;

  auto producer_conn = connect();
  pqxx::work producer(*producer_conn);
  const auto result = enqueue_in(producer, make_item("t"));
  EXPECT_EQ(pulls(), 0) << "pull request visible before the commit";
  EXPECT_EQ(apply(), 0);
  EXPECT_EQ(stored_pointer(conn(), "t")->vesting_time, parked_at);
  producer.commit();

  EXPECT_EQ(pulls(), 1);
  EXPECT_EQ(stored_pointer(conn(), "t")->vesting_time, parked_at) << "enqueue moved the pointer itself";
  EXPECT_EQ(apply(), 1);
  const auto pointer = stored_pointer(conn(), "t");
  EXPECT_EQ(pointer->vesting_time, stored_item(conn(), result.item_id)->vesting_time);
  EXPECT_FALSE(pointer->lease_id.has_value());
  EXPECT_EQ(pulls(), 0) << "applied requests must be deleted";
  pqxx::work txn(conn());
  const auto vested = peek_pointers(txn, 10);
  ASSERT_EQ(vested.size(), 1u);
  EXPECT_EQ(vested[0].tenant, "t");
}

TEST_F(PointerPullTest, RolledBackEnqueueLeavesNoPullRequest) {
  make_parked_zone("t");
  {
    pqxx::work producer(conn());
    enqueue_in(producer, make_item("t"));
    producer.abort();
  }
  EXPECT_EQ(pulls(), 0);
}

TEST_F(PointerPullTest, EnqueueOfAnItemVestingAfterThePointerRecordsNoPull) {
  make_parked_zone("t");
  enqueue(make_item("t", "job", "{}", 2 * kHour));
  EXPECT_EQ(pulls(), 0);
}

TEST_F(PointerPullTest, EnqueueIntoALeasedZoneRecordsNoPullInReadCommitted) {
  enqueue(make_item("t"));
  {
    pqxx::work txn(conn());
    ASSERT_EQ(lease_pointers(txn, {"t"}, 60'000ms).size(), 1u);
    txn.commit();
  }
  enqueue(make_item("t"));
  EXPECT_EQ(pulls(), 0) << "the lease holder settles the pointer from the zone's contents";
}

TEST_F(PointerPullTest, PullMovesThePointerToTheEarliestRequestedTime) {
  make_parked_zone("t");
  enqueue(make_item("t", "job", "{}", 1'200'000ms));
  const auto earliest = enqueue(make_item("t", "job", "{}", 600'000ms));
  enqueue(make_item("t", "job", "{}", 900'000ms));
  EXPECT_EQ(pulls(), 3);
  EXPECT_EQ(apply(), 1);
  EXPECT_EQ(stored_pointer(conn(), "t")->vesting_time, stored_item(conn(), earliest)->vesting_time);
  EXPECT_EQ(pulls(), 0);
}

TEST_F(PointerPullTest, BatchEnqueueIntoAParkedZoneRecordsAPull) {
  make_parked_zone("t");
  std::vector<EnqueueResult> results;
  {
    pqxx::work txn(conn());
    results = enqueue_batch_in(txn, {make_item("t", "job", "{}", 1'800'000ms), make_item("t"), make_item("new-zone")});
    txn.commit();
  }
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.pointer_pulls WHERE tenant = 't'"), 1);
  EXPECT_EQ(apply(), 1);
  EXPECT_EQ(stored_pointer(conn(), "t")->vesting_time, stored_item(conn(), results[1].item_id)->vesting_time);
}

// A REPEATABLE READ caller may have read a stale pointer version, so it always records a request;
// a READ COMMITTED caller records one only when the pointer is parked later than the item.
TEST_F(PointerPullTest, RepeatableReadCallerAlwaysRecordsAPull) {
  enqueue(make_item("t"));  // the pointer vests now: nothing to pull
  enqueue(make_item("t"));
  EXPECT_EQ(pulls(), 0);
  {
    pqxx::transaction<pqxx::isolation_level::repeatable_read> txn(conn());
    enqueue_in(txn, make_item("t", "job", "{}", kHour));
    txn.commit();
  }
  EXPECT_EQ(pulls(), 1);
  const auto before = stored_pointer(conn(), "t")->vesting_time;
  EXPECT_EQ(apply(), 0) << "a pull must never move a pointer later";
  EXPECT_EQ(stored_pointer(conn(), "t")->vesting_time, before);
  EXPECT_EQ(pulls(), 0);
}

TEST_F(PointerPullTest, SerializableBatchCallerAlwaysRecordsAPull) {
  enqueue(make_item("t"));
  {
    pqxx::transaction<pqxx::isolation_level::serializable> txn(conn());
    enqueue_batch_in(txn, {make_item("t", "job", "{}", kHour)});
    txn.commit();
  }
  EXPECT_EQ(pulls(), 1);
}

TEST_F(PointerPullTest, ApplyNeverShortensALivePointerLease) {
  enqueue(make_item("t", "job", "{}", kHour));
  std::vector<PointerLease> held;
  {
    pqxx::work txn(conn());
    txn.exec("UPDATE quick.pointers SET vesting_time = now() - interval '1 second'");
    held = lease_pointers(txn, {"t"}, 60'000ms);
    txn.commit();
  }
  ASSERT_EQ(held.size(), 1u);
  const auto leased = stored_pointer(conn(), "t");
  // A REPEATABLE READ producer records a request even though the pointer is leased.
  {
    pqxx::transaction<pqxx::isolation_level::repeatable_read> txn(conn());
    enqueue_in(txn, make_item("t"));
    txn.commit();
  }
  ASSERT_EQ(pulls(), 1);
  EXPECT_EQ(apply(), 0);
  const auto after = stored_pointer(conn(), "t");
  EXPECT_EQ(after->vesting_time, leased->vesting_time) << "a pull shortened a live pointer lease";
  EXPECT_EQ(after->lease_id, held[0].lease_id);
  EXPECT_EQ(pulls(), 0) << "the holder settles the pointer; the request is done";
  // The holder's settle sees the new item.
  pqxx::work txn(conn());
  const auto settled = settle_pointers(txn, {{"t", held[0].lease_id, false}}, 60'000ms);
  txn.commit();
  ASSERT_EQ(settled.size(), 1u);
  EXPECT_EQ(settled[0].action, SettleAction::kRequeued);
}

TEST_F(PointerPullTest, PullForAPointerThatNoLongerExistsIsDiscarded) {
  make_parked_zone("t");
  enqueue(make_item("t"));
  ASSERT_EQ(pulls(), 1);
  query("DELETE FROM quick.items; DELETE FROM quick.pointers");
  EXPECT_EQ(apply(), 0);
  EXPECT_EQ(pulls(), 0);
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.pointers"), 0) << "a pull created a pointer";
}

TEST_F(PointerPullTest, PullForAPointerLockedRightNowWaitsForTheNextRoundWithoutBlocking) {
  make_parked_zone("t");
  enqueue(make_item("t"));
  auto locker_conn = connect();
  pqxx::work locker(*locker_conn);
  locker.exec("SELECT 1 FROM quick.pointers WHERE tenant = 't' FOR NO KEY UPDATE");
  EXPECT_EQ(apply(), 0);
  EXPECT_EQ(pulls(), 1) << "the request was dropped while the pointer was locked";
  locker.abort();
  EXPECT_EQ(apply(), 1);
  EXPECT_EQ(pulls(), 0);
}

TEST_F(PointerPullTest, ApplyAppliesAtMostMaxRequests) {
  make_parked_zone("a");
  make_parked_zone("b");
  enqueue(make_item("a"));
  enqueue(make_item("b"));
  ASSERT_EQ(pulls(), 2);
  EXPECT_EQ(apply(1), 1);
  EXPECT_EQ(pulls(), 1);
  EXPECT_EQ(apply(1), 1);
  EXPECT_EQ(pulls(), 0);
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.pointers WHERE vesting_time <= now()"), 2);
}

}  // namespace
}  // namespace quick::store
