// The top-level queue's operations (src/store/pointer_store.h): peek, lease and settle pointers
// (paper Algorithms 1 and 2; DESIGN.md section 4).
#include <algorithm>
#include <chrono>
#include <future>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "quick/quick.h"
#include "store/pointer_store.h"
#include "support/items.h"
#include "support/test_database.h"

namespace quick::store {
namespace {

using namespace std::chrono_literals;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using quick::testing::DatabaseTest;
using quick::testing::make_item;
using quick::testing::stored_item;
using quick::testing::stored_pointer;

constexpr const char* kStrangerLease = "00000000-0000-4000-8000-000000000000";

std::vector<std::string> tenants_of(const std::vector<PeekedPointer>& pointers) {
  std::vector<std::string> tenants;
  for (const auto& pointer : pointers) tenants.push_back(pointer.tenant);
  return tenants;
}

std::vector<std::string> tenants_of(const std::vector<PointerLease>& leases) {
  std::vector<std::string> tenants;
  for (const auto& lease : leases) tenants.push_back(lease.tenant);
  return tenants;
}

class PointerStoreTest : public DatabaseTest {
 protected:
  void SetUp() override {
    DatabaseTest::SetUp();
    conn_ = connect();
    // Every pointer operation promises never to wait on a row lock: a wait fails the test.
    pqxx::nontransaction(*conn_).exec("SET statement_timeout = '10s'");
  }
  pqxx::connection& conn() { return *conn_; }

  std::int64_t enqueue(const NewItem& item) { return quick::testing::enqueue_committed(conn(), item); }

  // Sets a pointer's vesting time to `seconds` from now (negative: in the past).
  void set_pointer_vesting(const std::string& tenant, int seconds) {
    pqxx::nontransaction session(conn());
    session.exec_params("UPDATE quick.pointers SET vesting_time = now() + $2 * interval '1 second' WHERE tenant = $1",
                        tenant, seconds);
  }
  void set_last_active(const std::string& tenant, int seconds) {
    pqxx::nontransaction session(conn());
    session.exec_params(
        "UPDATE quick.pointers SET last_active_time = now() + $2 * interval '1 second' WHERE tenant = $1", tenant,
        seconds);
  }

  std::vector<PeekedPointer> peek(int max) {
    pqxx::work txn(conn());
    auto pointers = peek_pointers(txn, max);
    txn.commit();
    return pointers;
  }
  std::vector<PointerLease> lease(const std::vector<std::string>& tenants,
                                  std::chrono::milliseconds duration = 60'000ms) {
    pqxx::work txn(conn());
    auto leases = lease_pointers(txn, tenants, duration);
    txn.commit();
    return leases;
  }
  std::vector<PointerLease> lease_next(int max, std::chrono::milliseconds duration = 60'000ms) {
    pqxx::work txn(conn());
    auto leases = lease_next_pointers(txn, max, duration);
    txn.commit();
    return leases;
  }
  // Makes the tenant's pointer vested, then leases it.
  PointerLease lease_one(const std::string& tenant, std::chrono::milliseconds duration = 60'000ms) {
    set_pointer_vesting(tenant, -1);
    const auto leases = lease({tenant}, duration);
    if (leases.size() != 1) throw std::runtime_error("could not lease pointer " + tenant);
    return leases[0];
  }
  std::vector<SettledPointer> settle(const std::vector<PointerVisit>& visits, std::chrono::milliseconds min_inactive) {
    pqxx::work txn(conn());
    auto settled = settle_pointers(txn, visits, min_inactive);
    txn.commit();
    return settled;
  }
  SettledPointer settle_one(const PointerLease& lease, bool items_found, std::chrono::milliseconds min_inactive) {
    const auto settled = settle({{lease.tenant, lease.lease_id, items_found}}, min_inactive);
    if (settled.size() != 1) throw std::runtime_error("settle returned " + std::to_string(settled.size()));
    return settled[0];
  }
  int pointer_count() { return query_value<int>("SELECT count(*) FROM quick.pointers"); }

 private:
  std::unique_ptr<pqxx::connection> conn_;
};

// --- peek_pointers ------------------------------------------------------------------------------

TEST_F(PointerStoreTest, PeekPointersReturnsVestedPointersInVestingOrderOnly) {
  for (const char* tenant : {"a", "b", "c", "parked"}) enqueue(make_item(tenant));
  set_pointer_vesting("a", -10);
  set_pointer_vesting("b", -30);
  set_pointer_vesting("c", -20);
  set_pointer_vesting("parked", 3600);
  EXPECT_THAT(tenants_of(peek(10)), ElementsAre("b", "c", "a"));
  EXPECT_THAT(tenants_of(peek(2)), ElementsAre("b", "c"));
  const auto peeked = peek(1);
  ASSERT_EQ(peeked.size(), 1u);
  EXPECT_EQ(peeked[0].vesting_time, stored_pointer(conn(), "b")->vesting_time);
  EXPECT_FALSE(stored_pointer(conn(), "b")->lease_id.has_value()) << "peek leased the pointer";
}

TEST_F(PointerStoreTest, PeekPointersSkipsLeasedPointers) {
  enqueue(make_item("a"));
  enqueue(make_item("b"));
  lease_one("a");
  EXPECT_THAT(tenants_of(peek(10)), ElementsAre("b"));
}

// --- lease_pointers -----------------------------------------------------------------------------

TEST_F(PointerStoreTest, LeasePointersWinsOnlyVestedUnlockedPointersAndSetsALease) {
  for (const char* tenant : {"vested", "parked", "locked", "leased"}) enqueue(make_item(tenant));
  set_pointer_vesting("parked", 3600);
  const auto held = lease_one("leased");
  auto locker_conn = connect();
  pqxx::work locker(*locker_conn);
  locker.exec("SELECT 1 FROM quick.pointers WHERE tenant = 'locked' FOR NO KEY UPDATE");

  const auto before = quick::testing::db_clock(conn());
  const auto won = lease({"vested", "parked", "locked", "leased", "ghost"}, 60'000ms);
  const auto after = quick::testing::db_clock(conn());
  ASSERT_THAT(tenants_of(won), ElementsAre("vested"));
  const auto pointer = stored_pointer(conn(), "vested");
  EXPECT_EQ(pointer->lease_id, won[0].lease_id);
  EXPECT_GE(pointer->vesting_time, before + 60'000ms);
  EXPECT_LE(pointer->vesting_time, after + 60'000ms);
  EXPECT_EQ(won[0].last_active_time, pointer->last_active_time);
  EXPECT_EQ(stored_pointer(conn(), "leased")->lease_id, held.lease_id);
  EXPECT_FALSE(stored_pointer(conn(), "parked")->lease_id.has_value());
  locker.abort();
  EXPECT_THAT(tenants_of(lease({"locked"})), ElementsAre("locked"));
}

// Enqueuers hold their tenant's pointer FOR KEY SHARE until they commit; consumers must still be
// able to lease it (DESIGN.md section 4: never FOR UPDATE, which would starve busy tenants).
TEST_F(PointerStoreTest, LeasePointersIsNotBlockedByAnOpenEnqueueIntoTheZone) {
  enqueue(make_item("busy"));
  auto producer_conn = connect();
  pqxx::work producer(*producer_conn);
  enqueue_in(producer, make_item("busy"));
  EXPECT_THAT(tenants_of(lease({"busy"})), ElementsAre("busy"));
  producer.commit();
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.items WHERE tenant = 'busy'"), 2);
}

TEST_F(PointerStoreTest, LeasePointersWinsAPointerAgainAfterItsLeaseExpires) {
  quick::testing::with_short_lease([&](std::chrono::milliseconds duration) {
    const std::string tenant = "a" + std::to_string(duration.count());
    enqueue(make_item(tenant));
    const auto first = lease({tenant}, duration);
    if (first.size() != 1) {
      ADD_FAILURE() << "lease_pointers won " << first.size() << " pointers";
      return true;
    }
    const bool won_while_leased = !lease({tenant}).empty();
    const auto expiry = stored_pointer(conn(), tenant)->vesting_time;
    if (quick::testing::db_clock(conn()) >= expiry) return false;  // too slow: retry
    EXPECT_FALSE(won_while_leased) << "a leased pointer was leased again";
    quick::testing::wait_until_db_clock_passes(conn(), expiry);
    const auto second = lease({tenant});
    EXPECT_EQ(second.size(), 1u);
    if (second.size() == 1) {
      EXPECT_NE(second[0].lease_id, first[0].lease_id);
    }
    return true;
  });
}

// --- lease_next_pointers ------------------------------------------------------------------------

TEST_F(PointerStoreTest, LeaseNextPointersTakesVestedPointersInVestingOrder) {
  for (const char* tenant : {"a", "b", "c", "parked"}) enqueue(make_item(tenant));
  set_pointer_vesting("a", -10);
  set_pointer_vesting("b", -30);
  set_pointer_vesting("c", -20);
  set_pointer_vesting("parked", 3600);
  const auto first = lease_next(2);
  EXPECT_THAT(tenants_of(first), ::testing::UnorderedElementsAre("b", "c"));
  for (const auto& lease : first) EXPECT_EQ(stored_pointer(conn(), lease.tenant)->lease_id, lease.lease_id);
  EXPECT_THAT(tenants_of(lease_next(10)), ElementsAre("a"));
  EXPECT_TRUE(lease_next(10).empty());
}

TEST_F(PointerStoreTest, LeaseNextPointersSkipsPointersLockedByAnotherConsumer) {
  enqueue(make_item("a"));
  enqueue(make_item("b"));
  set_pointer_vesting("a", -20);
  set_pointer_vesting("b", -10);
  auto locker_conn = connect();
  pqxx::work locker(*locker_conn);
  locker.exec("SELECT 1 FROM quick.pointers WHERE tenant = 'a' FOR NO KEY UPDATE");
  EXPECT_THAT(tenants_of(lease_next(1)), ElementsAre("b"));
}

// --- settle_pointers ----------------------------------------------------------------------------

TEST_F(PointerStoreTest, SettleRequeuesAZoneWithItemsAtItsEarliestVestingTime) {
  enqueue(make_item("t", "job", "{}", 7'200'000ms));
  const auto earliest = enqueue(make_item("t", "job", "{}", 3'600'000ms));
  const auto held = lease_one("t");
  const auto settled = settle_one(held, false, 60'000ms);
  EXPECT_EQ(settled.action, SettleAction::kRequeued);
  const auto item_vesting = stored_item(conn(), earliest)->vesting_time;
  ASSERT_TRUE(settled.next_vesting_time.has_value());
  EXPECT_EQ(*settled.next_vesting_time, item_vesting);
  const auto pointer = stored_pointer(conn(), "t");
  EXPECT_EQ(pointer->vesting_time, item_vesting);
  EXPECT_FALSE(pointer->lease_id.has_value()) << "settle must release the pointer lease";
}

TEST_F(PointerStoreTest, SettleNeverRequeuesAPointerEarlierThanNow) {
  const auto id = enqueue(make_item("t"));
  query(
      "UPDATE quick.items SET vesting_time = now() - interval '1 hour', zone_time = now() - interval '1 hour' WHERE id "
      "= " +
      std::to_string(id));
  const auto held = lease_one("t");
  const auto before = quick::testing::db_clock(conn());
  const auto settled = settle_one(held, true, 60'000ms);
  const auto after = quick::testing::db_clock(conn());
  EXPECT_EQ(settled.action, SettleAction::kRequeued);
  ASSERT_TRUE(settled.next_vesting_time.has_value());
  EXPECT_GE(*settled.next_vesting_time, before);
  EXPECT_LE(*settled.next_vesting_time, after);
}

TEST_F(PointerStoreTest, SettleRequeuesAZoneWhoseOnlyItemIsLeasedToTheLeaseExpiry) {
  enqueue(make_item("t"));
  std::vector<Item> leased;
  {
    pqxx::work txn(conn());
    leased = dequeue_in(txn, "t", {1, 120'000ms, std::nullopt});
    txn.commit();
  }
  ASSERT_EQ(leased.size(), 1u);
  set_last_active("t", -7200);
  const auto settled = settle_one(lease_one("t"), false, 60'000ms);
  EXPECT_EQ(settled.action, SettleAction::kRequeued) << "a zone with a leased item was collected";
  EXPECT_EQ(settled.next_vesting_time, leased[0].vesting_time);
  EXPECT_TRUE(stored_pointer(conn(), "t").has_value());
}

TEST_F(PointerStoreTest, SettleUpdatesLastActiveTimeOnlyWhenTheVisitFoundItems) {
  enqueue(make_item("t", "job", "{}", 3'600'000ms));
  set_last_active("t", -600);
  const auto initial = stored_pointer(conn(), "t")->last_active_time;

  settle_one(lease_one("t"), false, 60'000ms);
  EXPECT_EQ(stored_pointer(conn(), "t")->last_active_time, initial);

  const auto before = quick::testing::db_clock(conn());
  settle_one(lease_one("t"), true, 60'000ms);
  EXPECT_GE(stored_pointer(conn(), "t")->last_active_time, before);
}

TEST_F(PointerStoreTest, SettleParksAnEmptyRecentlyActiveZoneUntilMinInactiveHasPassed) {
  const auto id = enqueue(make_item("t"));
  query("DELETE FROM quick.items WHERE id = " + std::to_string(id));
  set_last_active("t", -60);
  const auto last_active = stored_pointer(conn(), "t")->last_active_time;
  const auto settled = settle_one(lease_one("t"), false, 3'600'000ms);
  EXPECT_EQ(settled.action, SettleAction::kParked);
  ASSERT_TRUE(settled.next_vesting_time.has_value());
  EXPECT_EQ(*settled.next_vesting_time, last_active + 3'600'000ms);
  const auto pointer = stored_pointer(conn(), "t");
  ASSERT_TRUE(pointer.has_value());
  EXPECT_EQ(pointer->vesting_time, last_active + 3'600'000ms);
  EXPECT_FALSE(pointer->lease_id.has_value());
  EXPECT_EQ(pointer->last_active_time, last_active);
}

TEST_F(PointerStoreTest, SettleParksAnEmptyZoneWhoseVisitFoundItemsForAFullMinInactive) {
  const auto id = enqueue(make_item("t"));
  query("DELETE FROM quick.items WHERE id = " + std::to_string(id));
  set_last_active("t", -7200);  // long idle before, but this visit found (and took) items
  const auto settled = settle_one(lease_one("t"), true, 3'600'000ms);
  EXPECT_EQ(settled.action, SettleAction::kParked);
  const auto pointer = stored_pointer(conn(), "t");
  ASSERT_TRUE(pointer.has_value());
  EXPECT_EQ(pointer->vesting_time, pointer->last_active_time + 3'600'000ms);
  EXPECT_EQ(settled.next_vesting_time, pointer->vesting_time);
}

TEST_F(PointerStoreTest, SettleCollectsAnEmptyZoneInactiveForMinInactive) {
  const auto id = enqueue(make_item("t"));
  query("DELETE FROM quick.items WHERE id = " + std::to_string(id));
  set_last_active("t", -7200);
  const auto settled = settle_one(lease_one("t"), false, 3'600'000ms);
  EXPECT_EQ(settled.action, SettleAction::kCollected);
  EXPECT_FALSE(settled.next_vesting_time.has_value());
  EXPECT_FALSE(stored_pointer(conn(), "t").has_value());
}

TEST_F(PointerStoreTest, SettleNeverCollectsAZoneThatHasItems) {
  enqueue(make_item("t", "job", "{}", 3'600'000ms));
  set_last_active("t", -7200);
  const auto settled = settle_one(lease_one("t"), false, 60'000ms);
  EXPECT_EQ(settled.action, SettleAction::kRequeued);
  EXPECT_TRUE(stored_pointer(conn(), "t").has_value());
}

// The whole life of an idle zone on the database clock: parked for min_inactive, then collected.
TEST_F(PointerStoreTest, AnEmptyZoneIsParkedThenCollectedOnceMinInactivePasses) {
  quick::testing::with_short_lease([&](std::chrono::milliseconds min_inactive) {
    const std::string tenant = "t" + std::to_string(min_inactive.count());
    const auto id = enqueue(make_item(tenant));
    const auto held = lease_one(tenant);
    {
      pqxx::work txn(conn());
      EXPECT_EQ(cancel_in(txn, id), Outcome::kDone);
      txn.commit();
    }
    const auto parked = settle_one(held, true, min_inactive);
    EXPECT_EQ(parked.action, SettleAction::kParked);
    if (parked.action != SettleAction::kParked || !parked.next_vesting_time) return true;
    const bool leased_while_parked = !lease({tenant}).empty();
    if (quick::testing::db_clock(conn()) >= *parked.next_vesting_time) return false;  // too slow
    EXPECT_FALSE(leased_while_parked) << "a parked pointer was leased before it vested";
    quick::testing::wait_until_db_clock_passes(conn(), *parked.next_vesting_time);
    const auto again = lease({tenant});
    EXPECT_EQ(again.size(), 1u);
    if (again.size() != 1) return true;
    EXPECT_EQ(settle_one(again[0], false, min_inactive).action, SettleAction::kCollected);
    EXPECT_FALSE(stored_pointer(conn(), tenant).has_value());
    return true;
  });
}

TEST_F(PointerStoreTest, SettleWithAStaleLeaseIdReportsLeaseLostAndChangesNothing) {
  enqueue(make_item("t"));
  const auto held = lease_one("t");
  const auto before = stored_pointer(conn(), "t");
  const auto settled = settle_one(PointerLease{"t", kStrangerLease, held.last_active_time}, true, 0ms);
  EXPECT_EQ(settled.action, SettleAction::kLeaseLost);
  EXPECT_FALSE(settled.next_vesting_time.has_value());
  const auto after = stored_pointer(conn(), "t");
  EXPECT_EQ(after->lease_id, held.lease_id);
  EXPECT_EQ(after->vesting_time, before->vesting_time);
  EXPECT_EQ(after->last_active_time, before->last_active_time);
}

TEST_F(PointerStoreTest, SettleOfAPointerThatIsGoneReportsLeaseLost) {
  enqueue(make_item("t"));
  const auto held = lease_one("t");
  query("DELETE FROM quick.items; DELETE FROM quick.pointers");
  EXPECT_EQ(settle_one(held, false, 0ms).action, SettleAction::kLeaseLost);
  EXPECT_EQ(pointer_count(), 0) << "settle recreated a pointer";
}

TEST_F(PointerStoreTest, SettleHandlesManyPointersAtOnce) {
  enqueue(make_item("requeue", "job", "{}", 3'600'000ms));
  for (const char* tenant : {"park", "collect", "lost"}) {
    const auto id = enqueue(make_item(tenant));
    query("DELETE FROM quick.items WHERE id = " + std::to_string(id));
  }
  set_last_active("collect", -7200);
  const auto requeue = lease_one("requeue");
  const auto park = lease_one("park");
  const auto collect = lease_one("collect");
  lease_one("lost");
  auto settled = settle({{"requeue", requeue.lease_id, false},
                         {"park", park.lease_id, false},
                         {"collect", collect.lease_id, false},
                         {"lost", kStrangerLease, false}},
                        600'000ms);
  std::sort(settled.begin(), settled.end(),
            [](const SettledPointer& a, const SettledPointer& b) { return a.tenant < b.tenant; });
  ASSERT_EQ(settled.size(), 4u);
  EXPECT_EQ(settled[0].tenant, "collect");
  EXPECT_EQ(settled[0].action, SettleAction::kCollected);
  EXPECT_EQ(settled[1].tenant, "lost");
  EXPECT_EQ(settled[1].action, SettleAction::kLeaseLost);
  EXPECT_EQ(settled[2].tenant, "park");
  EXPECT_EQ(settled[2].action, SettleAction::kParked);
  EXPECT_EQ(settled[3].tenant, "requeue");
  EXPECT_EQ(settled[3].action, SettleAction::kRequeued);
  EXPECT_EQ(pointer_count(), 3);
}

// An enqueue into the zone is in flight (it holds the pointer FOR KEY SHARE): settle cannot look
// at the zone's contents, so it releases the pointer to vest now instead of waiting or deleting.
TEST_F(PointerStoreTest, SettleReleasesAPointerThatAnOpenEnqueueHoldsToVestNow) {
  const auto id = enqueue(make_item("t"));
  query("DELETE FROM quick.items WHERE id = " + std::to_string(id));
  set_last_active("t", -7200);
  const auto held = lease_one("t");
  auto producer_conn = connect();
  pqxx::work producer(*producer_conn);
  enqueue_in(producer, make_item("t"));

  const auto before = quick::testing::db_clock(conn());
  const auto settled = settle_one(held, false, 60'000ms);
  EXPECT_EQ(settled.action, SettleAction::kReleasedBusy);
  ASSERT_TRUE(settled.next_vesting_time.has_value());
  EXPECT_GE(*settled.next_vesting_time, before);
  producer.commit();
  const auto pointer = stored_pointer(conn(), "t");
  ASSERT_TRUE(pointer.has_value()) << "the zone of a committed enqueue lost its pointer";
  EXPECT_FALSE(pointer->lease_id.has_value());
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.orphaned_zones"), 0);
}

// The GC deleted the pointer but has not committed; an enqueue into the zone waits for it, then
// finds no pointer and creates one: the invariant "every non-empty zone has a pointer" holds.
TEST_F(PointerStoreTest, EnqueueWaitingOnACollectingSettleRecreatesThePointer) {
  const auto id = enqueue(make_item("t"));
  query("DELETE FROM quick.items WHERE id = " + std::to_string(id));
  set_last_active("t", -7200);
  const auto held = lease_one("t");
  pqxx::work gc(conn());
  ASSERT_EQ(settle_pointers(gc, {{"t", held.lease_id, false}}, 60'000ms).at(0).action, SettleAction::kCollected);

  auto producer_conn = connect();
  const int producer_pid = producer_conn->backendpid();
  auto producer = std::async(std::launch::async, [&] {
    pqxx::work txn(*producer_conn);
    enqueue_in(txn, make_item("t"));
    txn.commit();
  });
  auto observer = connect();
  quick::testing::wait_until_blocked_on_lock(*observer, producer_pid);
  gc.commit();
  producer.get();
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.items WHERE tenant = 't'"), 1);
  EXPECT_TRUE(stored_pointer(conn(), "t").has_value()) << "orphaned zone";
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.orphaned_zones"), 0);
}

// The same race with a REPEATABLE READ producer: it cannot see the deletion in its snapshot, so it
// gets a serialization failure and retries, instead of orphaning the zone.
TEST_F(PointerStoreTest, RepeatableReadEnqueueRacingACollectingSettleFailsToSerialize) {
  const auto id = enqueue(make_item("t"));
  query("DELETE FROM quick.items WHERE id = " + std::to_string(id));
  set_last_active("t", -7200);
  const auto held = lease_one("t");
  pqxx::work gc(conn());
  ASSERT_EQ(settle_pointers(gc, {{"t", held.lease_id, false}}, 60'000ms).at(0).action, SettleAction::kCollected);

  auto producer_conn = connect();
  const int producer_pid = producer_conn->backendpid();
  auto producer = std::async(std::launch::async, [&] {
    pqxx::transaction<pqxx::isolation_level::repeatable_read> txn(*producer_conn);
    txn.exec("SELECT 1");  // takes the snapshot before the GC commits
    enqueue_in(txn, make_item("t"));
    txn.commit();
  });
  auto observer = connect();
  quick::testing::wait_until_blocked_on_lock(*observer, producer_pid);
  gc.commit();
  EXPECT_THROW(producer.get(), pqxx::serialization_failure);
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.orphaned_zones"), 0);
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.items"), 0);
}

template <typename Transaction>
void expect_settle_refused(pqxx::connection& conn, const PointerLease& held) {
  Transaction txn(conn);
  try {
    settle_pointers(txn, {{held.tenant, held.lease_id, false}}, 0ms);
    ADD_FAILURE() << "settle_pointers ran in a snapshot transaction";
  } catch (const pqxx::sql_error& error) {
    EXPECT_EQ(error.sqlstate(), "25000");
    EXPECT_THAT(error.what(), HasSubstr("READ COMMITTED"));
  }
}

TEST_F(PointerStoreTest, SettleRefusesToRunInsideRepeatableReadOrSerializable) {
  const auto id = enqueue(make_item("t"));
  query("DELETE FROM quick.items WHERE id = " + std::to_string(id));
  set_last_active("t", -7200);
  const auto held = lease_one("t");
  const auto before = stored_pointer(conn(), "t");
  expect_settle_refused<pqxx::transaction<pqxx::isolation_level::repeatable_read>>(conn(), held);
  expect_settle_refused<pqxx::transaction<pqxx::isolation_level::serializable>>(conn(), held);
  const auto after = stored_pointer(conn(), "t");
  ASSERT_TRUE(after.has_value());
  EXPECT_EQ(after->lease_id, held.lease_id);
  EXPECT_EQ(after->vesting_time, before->vesting_time);
}

}  // namespace
}  // namespace quick::store
