// peek and dequeue (paper section 5): vested items in (priority, vesting_time) order; dequeue
// leases them in the same statement and skips items that concurrent dequeuers hold.
#include <algorithm>
#include <chrono>
#include <set>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "quick/quick.h"
#include "support/items.h"
#include "support/test_database.h"

namespace quick {
namespace {

using namespace std::chrono_literals;
using ::testing::ElementsAre;
using testing::DatabaseTest;
using testing::make_item;
using testing::stored_item;

std::vector<std::int64_t> ids_of(const std::vector<Item>& items) {
  std::vector<std::int64_t> ids;
  for (const auto& item : items) ids.push_back(item.id);
  return ids;
}

class PeekDequeueTest : public DatabaseTest {
 protected:
  void SetUp() override {
    DatabaseTest::SetUp();
    conn_ = connect();
  }
  pqxx::connection& conn() { return *conn_; }

  std::int64_t enqueue(const NewItem& item) { return testing::enqueue_committed(conn(), item); }
  // Moves an item's vesting time (and with it its place in the zone, as a requeue would)
  // `seconds_ago` into the past, to make orders explicit.
  void vest_ago(std::int64_t id, int seconds_ago) {
    query("UPDATE quick.items SET vesting_time = now() - interval '" + std::to_string(seconds_ago) +
          " seconds', zone_time = now() - interval '" + std::to_string(seconds_ago) +
          " seconds' WHERE id = " + std::to_string(id));
  }
  std::vector<Item> peek(const std::string& tenant, int max, std::optional<std::string> job_type = std::nullopt) {
    pqxx::work txn(conn());
    auto items = peek_in(txn, tenant, {max, std::move(job_type)});
    txn.commit();
    return items;
  }
  std::vector<Item> dequeue(const std::string& tenant, int max, std::chrono::milliseconds lease,
                            std::optional<std::string> job_type = std::nullopt) {
    pqxx::work txn(conn());
    auto items = dequeue_in(txn, tenant, {max, lease, std::move(job_type)});
    txn.commit();
    return items;
  }

 private:
  std::unique_ptr<pqxx::connection> conn_;
};

TEST_F(PeekDequeueTest, PeekReturnsOnlyVestedItemsInPriorityThenVestingOrder) {
  const auto delayed_urgent = enqueue(make_item("t", "job", "{}", 3'600'000ms, -10));
  const auto a = enqueue(make_item("t", "job", "{}", 0ms, 2));
  const auto b = enqueue(make_item("t", "job", "{}", 0ms, 1));
  const auto c = enqueue(make_item("t", "job", "{}", 0ms, 1));
  const auto d = enqueue(make_item("t", "job", "{}", 0ms, 2));
  vest_ago(a, 40);
  vest_ago(b, 10);
  vest_ago(c, 30);
  vest_ago(d, 50);
  const auto peeked = peek("t", 10);
  EXPECT_THAT(ids_of(peeked), ElementsAre(c, b, d, a));
  for (const auto& item : peeked) EXPECT_NE(item.id, delayed_urgent);
}

TEST_F(PeekDequeueTest, PeekReturnsAtMostMaxItems) {
  for (int i = 0; i < 5; ++i) enqueue(make_item("t"));
  EXPECT_EQ(peek("t", 3).size(), 3u);
  EXPECT_EQ(peek("t", 1).size(), 1u);
  EXPECT_EQ(peek("t", 100).size(), 5u);
}

TEST_F(PeekDequeueTest, PeekFiltersByJobType) {
  const auto email = enqueue(make_item("t", "email"));
  enqueue(make_item("t", "sms"));
  const auto email2 = enqueue(make_item("t", "email"));
  EXPECT_THAT(ids_of(peek("t", 10, "email")), ::testing::UnorderedElementsAre(email, email2));
  EXPECT_TRUE(peek("t", 10, "push").empty());
  EXPECT_EQ(peek("t", 10).size(), 3u);
}

TEST_F(PeekDequeueTest, PeekSeesOnlyItsOwnZone) {
  enqueue(make_item("tenant-a"));
  const auto b = enqueue(make_item("tenant-b"));
  EXPECT_THAT(ids_of(peek("tenant-b", 10)), ElementsAre(b));
  EXPECT_TRUE(peek("tenant-c", 10).empty());
}

TEST_F(PeekDequeueTest, PeekDoesNotLease) {
  const auto id = enqueue(make_item("t", "job", R"({"k":"v"})"));
  const auto before = stored_item(conn(), id);
  const auto first = peek("t", 10);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_FALSE(first[0].lease_id.has_value());
  EXPECT_EQ(first[0].payload, R"({"k": "v"})");
  const auto after = stored_item(conn(), id);
  EXPECT_FALSE(after->lease_id.has_value());
  EXPECT_EQ(after->vesting_time, before->vesting_time);
  EXPECT_EQ(peek("t", 10).size(), 1u);
  EXPECT_EQ(dequeue("t", 10, 60'000ms).size(), 1u);
}

TEST_F(PeekDequeueTest, DequeueLeasesItemsUntilTheLeaseExpiry) {
  const auto id = enqueue(make_item("t", "job", R"({"n":1})", 0ms, 3, "client-1"));
  const auto before = testing::db_clock(conn());
  const auto dequeued = dequeue("t", 10, 60'000ms);
  const auto after = testing::db_clock(conn());
  ASSERT_EQ(dequeued.size(), 1u);
  const auto& item = dequeued[0];
  EXPECT_EQ(item.id, id);
  EXPECT_EQ(item.tenant, "t");
  EXPECT_EQ(item.job_type, "job");
  EXPECT_EQ(item.priority, 3);
  EXPECT_EQ(item.payload, R"({"n": 1})");
  EXPECT_EQ(item.client_item_id, "client-1");
  EXPECT_EQ(item.error_count, 0);
  ASSERT_TRUE(item.lease_id.has_value());
  EXPECT_GE(item.vesting_time, before + 60'000ms);
  EXPECT_LE(item.vesting_time, after + 60'000ms);
  const auto stored = stored_item(conn(), id);
  EXPECT_EQ(stored->lease_id, item.lease_id);
  EXPECT_EQ(stored->vesting_time, item.vesting_time);
}

TEST_F(PeekDequeueTest, DequeueTakesAtMostMaxItemsInPriorityThenVestingOrder) {
  const auto late = enqueue(make_item("t", "job", "{}", 0ms, 0));
  const auto early = enqueue(make_item("t", "job", "{}", 0ms, 0));
  const auto urgent = enqueue(make_item("t", "job", "{}", 0ms, -1));
  const auto lazy = enqueue(make_item("t", "job", "{}", 0ms, 9));
  vest_ago(late, 10);
  vest_ago(early, 20);
  vest_ago(urgent, 5);
  vest_ago(lazy, 60);
  EXPECT_THAT(ids_of(dequeue("t", 1, 60'000ms)), ElementsAre(urgent));
  EXPECT_THAT(ids_of(dequeue("t", 2, 60'000ms)), ::testing::UnorderedElementsAre(early, late));
  EXPECT_THAT(ids_of(dequeue("t", 5, 60'000ms)), ElementsAre(lazy));
  EXPECT_TRUE(dequeue("t", 5, 60'000ms).empty());
}

TEST_F(PeekDequeueTest, DequeueFiltersByJobTypeAndLeavesOtherTypesAlone) {
  const auto email = enqueue(make_item("t", "email"));
  const auto sms = enqueue(make_item("t", "sms"));
  EXPECT_THAT(ids_of(dequeue("t", 10, 60'000ms, "email")), ElementsAre(email));
  EXPECT_FALSE(stored_item(conn(), sms)->lease_id.has_value());
  EXPECT_THAT(ids_of(peek("t", 10)), ElementsAre(sms));
}

TEST_F(PeekDequeueTest, DequeueTakesOnlyVestedItemsOfItsOwnZone) {
  enqueue(make_item("other"));
  const auto delayed = enqueue(make_item("t", "job", "{}", 3'600'000ms));
  EXPECT_TRUE(dequeue("t", 10, 60'000ms).empty());
  EXPECT_FALSE(stored_item(conn(), delayed)->lease_id.has_value());
}

TEST_F(PeekDequeueTest, ConcurrentDequeuersInOpenTransactionsTakeDisjointItems) {
  std::set<std::int64_t> all;
  for (int i = 0; i < 6; ++i) all.insert(enqueue(make_item("t")));
  auto conn_a = connect();
  auto conn_b = connect();
  pqxx::work txn_a(*conn_a);
  pqxx::work txn_b(*conn_b);
  txn_b.exec("SET LOCAL statement_timeout = '10s'");  // a dequeue that waits for A fails, not hangs
  const auto taken_a = dequeue_in(txn_a, "t", {4, 60'000ms, std::nullopt});
  const auto taken_b = dequeue_in(txn_b, "t", {10, 60'000ms, std::nullopt});  // must not wait for A
  EXPECT_EQ(taken_a.size(), 4u);
  EXPECT_EQ(taken_b.size(), 2u);
  std::set<std::int64_t> seen;
  for (const auto& item : taken_a) seen.insert(item.id);
  for (const auto& item : taken_b) EXPECT_TRUE(seen.insert(item.id).second) << "item " << item.id << " taken twice";
  EXPECT_EQ(seen, all);
  txn_a.commit();
  txn_b.commit();
  EXPECT_TRUE(dequeue("t", 10, 60'000ms).empty());
}

TEST_F(PeekDequeueTest, LeasedItemsAreInvisibleToPeekUntilTheLeaseExpires) {
  testing::with_short_lease([&](std::chrono::milliseconds lease) {
    const std::string tenant = "t" + std::to_string(lease.count());
    const auto id = enqueue(make_item(tenant));
    const auto leased = dequeue(tenant, 1, lease);
    if (leased.size() != 1) {
      ADD_FAILURE() << "dequeue returned " << leased.size() << " items";
      return true;
    }
    const bool visible_while_leased = !peek(tenant, 10).empty();
    if (testing::db_clock(conn()) >= leased[0].vesting_time) return false;  // too slow: retry
    EXPECT_FALSE(visible_while_leased);
    testing::wait_until_db_clock_passes(conn(), leased[0].vesting_time);
    const auto peeked = peek(tenant, 10);
    EXPECT_EQ(peeked.size(), 1u);
    if (peeked.size() != 1) return true;
    EXPECT_EQ(peeked[0].id, id);
    EXPECT_EQ(peeked[0].lease_id, leased[0].lease_id) << "peek shows the expired lease's id, unchanged";
    return true;
  });
}

}  // namespace
}  // namespace quick
