// An item's place in its zone, zone_time (docs/protocol.md#zone-time-and-leases): the zone index
// orders by (priority, zone_time), and a lease sets vesting_time only, so taking, extending and
// ending a lease never move the item in the index (and can be HOT updates), while a requeue or a
// release queues it at a new place. A zone's next vesting time then counts a leased item at its
// lease's expiry though the item sorts at its place: checked against a plain min(vesting_time)
// over zones of leased, delayed and vested items in several priorities. And with a snapshot held
// open, a visit that settles a drained zone reads the entries of what it consumed since its
// floor, not those of every lease of the last lease-duration.
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>

#include "support/interleaving.h"
#include "support/test_database.h"

namespace quick {
namespace {

class ZoneTimeTest : public testing::DatabaseTest {
 protected:
  // One visit of `tenant` (up to `max` items, 30-s item leases); the number of items it leased.
  long visit(const std::string& tenant, int max = 100) {
    return query_value<long>("SELECT count(*) FILTER (WHERE kind = 'item') FROM quick.visit_zones(ARRAY[" +
                             testing::sql_literal(tenant) + "], " + std::to_string(max) +
                             ", interval '30 seconds', interval '1 hour')");
  }
  void make_vested(const std::string& tenant) {
    query("UPDATE quick.pointers SET vesting_time = least(vesting_time, now()) WHERE tenant = " +
          testing::sql_literal(tenant));
  }
  std::string item_times(long long id) {
    return query_value<std::string>(
        "SELECT CASE WHEN vesting_time = zone_time THEN 'at rest' WHEN vesting_time > zone_time THEN 'leased' "
        "ELSE 'broken' END FROM quick.items WHERE id = " +
        std::to_string(id));
  }
};

TEST_F(ZoneTimeTest, ALeaseLeavesTheItemsPlaceAndARequeueMovesIt) {
  const auto id = query_value<long long>("SELECT item_id FROM quick.enqueue('t', 'job')");
  const auto place = query_value<std::string>("SELECT zone_time::text FROM quick.items WHERE id = " +
                                              std::to_string(id));
  EXPECT_EQ(item_times(id), "at rest");

  // Leasing, in one transaction with the statistics of its own updates.
  auto conn = connect();
  pqxx::work txn(*conn);
  const auto lease = txn.exec("SELECT lease_id::text FROM quick.dequeue('t', 1, interval '30 seconds')").at(0).at(0);
  txn.exec("SELECT quick.extend_lease(" + std::to_string(id) + ", '" + lease.as<std::string>() +
           "', interval '1 minute')");
  const auto hot = txn.exec(
                          "SELECT pg_stat_get_xact_tuples_hot_updated('quick.items'::regclass), "
                          "pg_stat_get_xact_tuples_updated('quick.items'::regclass)")
                       .at(0);
  txn.commit();
  EXPECT_EQ(hot[1].as<int>(), 2) << "the lease and its extension";
  EXPECT_EQ(hot[0].as<int>(), 2) << "both are HOT updates: no indexed column changes";
  EXPECT_EQ(item_times(id), "leased");
  EXPECT_EQ(query_value<std::string>("SELECT zone_time::text FROM quick.items WHERE id = " + std::to_string(id)),
            place);

  EXPECT_EQ(query_value<std::string>("SELECT quick.release_lease(" + std::to_string(id) + ", '" +
                                     lease.as<std::string>() + "', interval '5 minutes')::text"),
            "done");
  EXPECT_EQ(item_times(id), "at rest") << "a release queues the item at its new vesting time";
  EXPECT_TRUE(query_value<bool>("SELECT zone_time > now() + interval '4 minutes' FROM quick.items WHERE id = " +
                                std::to_string(id)));
}

// Random zones of items at rest (vested or delayed) and leased ones (running, or whose lease ran
// out), over three priorities, some of a paused job type: the pointer a settling visit leaves, and
// quick.zone_first_vesting, vest at the zone's earliest vesting time, as a plain min(vesting_time)
// over the zone says (over the job types not paused, for the visit).
TEST_F(ZoneTimeTest, AZonesNextVestingCountsLeasedItemsAtTheirExpiry) {
  query("SELECT quick.pause_job_type('held')");
  std::mt19937 random(20261126);
  for (int round = 0; round < 16; ++round) {
    const std::string tenant = "z" + std::to_string(round);
    const std::string zone = testing::sql_literal(tenant);
    const int items = 1 + static_cast<int>(random() % 12);
    for (int i = 0; i < items; ++i) {
      const int priority = static_cast<int>(random() % 3) - 1;
      query("SELECT quick.enqueue(" + zone + ", 'job', '{}', interval '" + std::to_string(random() % 3) +
            " minutes', " + std::to_string(priority) + ")");
    }
    for (int i = static_cast<int>(random() % 4); i < 2; ++i) {  // none in half the rounds
      query("SELECT quick.enqueue(" + zone + ", 'held', '{}', interval '" + std::to_string(random() % 3) +
            " minutes', " + std::to_string(static_cast<int>(random() % 3) - 1) + ")");
    }
    // Lease a random subset of what vested (the visit takes from the lowest keys), with random
    // lease ends, some already past, never before the item's place.
    make_vested(tenant);
    if (const int leases = static_cast<int>(random() % 4); leases > 0) visit(tenant, leases);
    query(
        "UPDATE quick.items SET vesting_time = greatest(zone_time, now() + (random() * 240 - 60) * interval '1 "
        "second') WHERE tenant = " +
        zone + " AND lease_id IS NOT NULL");
    // The invariant every writer keeps.
    ASSERT_EQ(query_value<int>("SELECT count(*) FROM quick.items WHERE zone_time > vesting_time"), 0);

    EXPECT_EQ(query_value<std::string>("SELECT quick.zone_first_vesting(" + zone + ")::text"),
              query_value<std::string>("SELECT min(vesting_time)::text FROM quick.items WHERE tenant = " + zone))
        << "round " << round;
    const auto expected = query_value<std::string>(
        "SELECT min(vesting_time)::text FROM quick.items WHERE job_type = 'job' AND tenant = " + zone);

    // A visit that takes nothing (every item still leased or delayed, or its job type left out)
    // settles the zone: its pointer vests at that time, or now when it is past.
    make_vested(tenant);
    query("SELECT count(*) FROM quick.visit_zones(ARRAY[" + zone +
          "], 10, interval '30 seconds', interval '1 hour', ARRAY['job'])");
    EXPECT_TRUE(
        query_value<bool>("SELECT CASE WHEN e > now() THEN p.vesting_time = e "
                          "ELSE p.vesting_time BETWEEN e AND now() END FROM quick.pointers p, "
                          "(SELECT '" +
                          expected + "'::timestamptz AS e) x WHERE p.tenant = " + zone))
        << "round " << round << ": pointer "
        << query_value<std::string>("SELECT vesting_time::text FROM quick.pointers WHERE tenant = " + zone)
        << ", zone's earliest " << expected;
  }
}

// With a snapshot held open nothing consumed leaves the zone index, and before zone_time every
// lease left an entry at its expiry, ahead of the floor: a settle's probe for the zone's lowest
// key stepped over every lease of the last 30 s. Now a visit that drains and settles the zone reads
// what the zone consumed since its floor (the previous visit's items, live when it settled).
TEST_F(ZoneTimeTest, WithASnapshotHeldOpenASettleDoesNotWalkTheEndedLeases) {
  auto holder = connect();
  pqxx::nontransaction held(*holder);
  held.exec("BEGIN ISOLATION LEVEL REPEATABLE READ");
  held.exec("SELECT count(*) FROM quick.items");

  for (int round = 0; round < 20; ++round) {
    query(
        "SELECT quick.enqueue_batch(jsonb_agg(jsonb_build_object('tenant', 'z', 'job_type', 'job'))) "
        "FROM generate_series(1, 100)");
    query("SELECT quick.apply_pointer_pulls()");
    make_vested("z");
    ASSERT_EQ(visit("z"), 100) << "round " << round;
    query("SELECT quick.complete(id, lease_id) FROM quick.items WHERE tenant = 'z' AND lease_id IS NOT NULL");
  }
  query("SELECT quick.enqueue('z', 'job')");
  query("SELECT quick.apply_pointer_pulls()");
  make_vested("z");

  auto conn = connect();
  pqxx::work txn(*conn);
  const auto rows = txn.exec(
      "SELECT kind, action FROM quick.visit_zones(ARRAY['z'], 100, interval '30 seconds', interval '1 hour')");
  const auto read =
      txn.exec("SELECT pg_stat_get_xact_tuples_returned('quick.items_zone_order'::regclass)").at(0).at(0).as<long>();
  txn.abort();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1][1].as<std::string>(), "requeued") << "the visit took the item and settled the zone, to vest "
                                                         "when the item's lease runs out";
  // Each of the visit's few walks (the dequeue, the settle's probes) reads the last round's
  // entries, about 100 to 160 (those of its leases that were not HOT included); before zone_time
  // the settle's first probe alone read the 2,000 entries the last 20 rounds' leases left.
  EXPECT_LT(read, 1000) << "the settle walked the entries of leases that ended (2,000 in the last 30 s)";
}

}  // namespace
}  // namespace quick
