// quick.visit_zones (Algorithm 2 for a batch of zones, the Managers' one statement per visit):
// every outcome a zone can have in one visit (dequeued and requeued, requeued to its leases'
// end, parked, collected, released to an enqueuer in flight, left to a throttled job type) and
// every reason a named zone is not visited (locked by another visit, not vested, gone), in one
// call; then the same bookkeeping for a visit of hundreds of zones, where the function must
// neither lose nor double-count a zone.
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "quick/quick.h"
#include "store/consumer_store.h"
#include "support/test_database.h"
#include "zone/zone_test_support.h"

namespace quick::store {
namespace {

using namespace std::chrono_literals;
using quick::testing::DatabaseTest;
using quick::testing::enqueue_committed;
using quick::testing::make_item;

constexpr std::chrono::milliseconds kHour = 3'600'000ms;

class VisitZonesTest : public DatabaseTest {
 protected:
  // Seconds from the database's now() to the tenant's pointer's vesting time (negative: vested);
  // NULL (nullopt) when the tenant has no pointer.
  std::optional<double> pointer_vests_in(const std::string& tenant) {
    const auto rows =
        query("SELECT extract(epoch FROM vesting_time - now())::float8 FROM quick.pointers WHERE tenant = '" + tenant + "'");
    if (rows.empty()) return std::nullopt;
    return rows.at(0).at(0).as<double>();
  }
  int leased_items(const std::string& tenant) {
    return query_value<int>("SELECT count(*) FROM quick.items WHERE lease_id IS NOT NULL AND tenant = '" + tenant + "'");
  }
  // Empties a zone behind the consumer's back, leaving its pointer vested: a zone whose items
  // were all completed.
  void empty_zone(const std::string& tenant) { query("DELETE FROM quick.items WHERE tenant = '" + tenant + "'"); }
};

std::map<std::string, SettleAction> actions_by_tenant(const ZoneVisit& visit) {
  std::map<std::string, SettleAction> out;
  for (const auto& zone : visit.zones) {
    EXPECT_TRUE(out.emplace(zone.tenant, zone.action).second) << zone.tenant << " reported twice";
  }
  return out;
}

TEST_F(VisitZonesTest, OneVisitReportsEveryOutcomeAndEveryConflict) {
  auto conn = connect();
  for (int i = 0; i < 5; ++i) enqueue_committed(*conn, make_item("busy"));
  enqueue_committed(*conn, make_item("emptied"));
  enqueue_committed(*conn, make_item("idle-recent"));
  empty_zone("idle-recent");
  enqueue_committed(*conn, make_item("idle-old"));
  empty_zone("idle-old");
  query("UPDATE quick.pointers SET last_active_time = now() - interval '2 hours' WHERE tenant = 'idle-old'");
  enqueue_committed(*conn, make_item("throttled", "slow"));
  enqueue_committed(*conn, make_item("held"));
  empty_zone("held");
  enqueue_committed(*conn, make_item("locked"));
  enqueue_committed(*conn, make_item("future", "job", "{}", kHour));

  // An enqueue in flight into "held" (its FOR KEY SHARE on the pointer), and another visit
  // holding "locked"'s pointer.
  auto producer_conn = connect();
  pqxx::work producer(*producer_conn);
  enqueue_in(producer, make_item("held"));
  auto other_conn = connect();
  pqxx::work other_visit(*other_conn);
  other_visit.exec("SELECT 1 FROM quick.pointers WHERE tenant = 'locked' FOR NO KEY UPDATE");

  ZoneVisit visit;
  {
    pqxx::work txn(*conn);
    visit = visit_zones(txn,
                        {"busy", "emptied", "future", "held", "idle-old", "idle-recent", "locked", "missing",
                         "throttled"},
                        2, 5s, kHour, {"slow"});
    txn.commit();
  }
  producer.commit();
  other_visit.abort();

  std::map<std::string, int> items;
  for (const auto& dequeued : visit.items) ++items[dequeued.item.tenant];
  EXPECT_EQ(items, (std::map<std::string, int>{{"busy", 2}, {"emptied", 1}}));

  EXPECT_EQ(actions_by_tenant(visit), (std::map<std::string, SettleAction>{
                                          {"busy", SettleAction::kRequeued},
                                          {"emptied", SettleAction::kRequeued},
                                          {"held", SettleAction::kReleasedBusy},
                                          {"idle-old", SettleAction::kCollected},
                                          {"idle-recent", SettleAction::kParked},
                                          {"throttled", SettleAction::kRequeued},
                                      }));
  EXPECT_EQ(visit.conflicts_locked, 1);
  EXPECT_EQ(visit.conflicts_not_vested, 1);
  EXPECT_EQ(visit.conflicts_gone, 1);

  EXPECT_LE(*pointer_vests_in("busy"), 0.0) << "more vested items: vests again at once";
  EXPECT_GT(*pointer_vests_in("emptied"), 4.0) << "requeued to its item's lease end";
  EXPECT_LE(*pointer_vests_in("held"), 0.0) << "released to vest now, so the enqueue is not missed";
  EXPECT_FALSE(pointer_vests_in("idle-old").has_value()) << "empty for longer than min_inactive: collected";
  EXPECT_GT(*pointer_vests_in("idle-recent"), 3000.0) << "parked until min_inactive after its last activity";
  EXPECT_LE(*pointer_vests_in("throttled"), 1.0) << "its vested item of an excluded type waits at the front";
  EXPECT_GT(*pointer_vests_in("future"), 3000.0) << "not visited: unchanged";
  EXPECT_LE(*pointer_vests_in("locked"), 0.0) << "not visited: unchanged";
  EXPECT_EQ(leased_items("busy"), 2);
  EXPECT_EQ(leased_items("throttled"), 0);
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.orphaned_zones"), 0);
}

// Hundreds of zones in one visit, as a Manager with a large pointers_per_batch sends them: each
// visited zone is reported exactly once with its own outcome, each missing tenant once as gone.
TEST_F(VisitZonesTest, AVisitOfHundredsOfZonesAccountsForEachZoneOnce) {
  auto conn = connect();
  std::vector<NewItem> seed;
  std::vector<std::string> tenants;
  for (int t = 0; t < 400; ++t) {
    const std::string tenant = "zone-" + std::to_string(1000 + t);
    tenants.push_back(tenant);
    // Even zones hold two items, odd zones one: with dequeue_max 1 the even ones stay busy.
    seed.push_back(make_item(tenant));
    if (t % 2 == 0) seed.push_back(make_item(tenant));
  }
  {
    pqxx::work txn(*conn);
    enqueue_batch_in(txn, seed);
    txn.commit();
  }
  for (int t = 0; t < 100; ++t) tenants.push_back("absent-" + std::to_string(t));

  ZoneVisit visit;
  {
    pqxx::work txn(*conn);
    visit = visit_zones(txn, tenants, 1, 5s, kHour, {});
    txn.commit();
  }
  EXPECT_EQ(visit.items.size(), 400u);
  const auto actions = actions_by_tenant(visit);
  ASSERT_EQ(actions.size(), 400u);
  for (int t = 0; t < 400; ++t) {
    EXPECT_EQ(actions.at("zone-" + std::to_string(1000 + t)), SettleAction::kRequeued) << t;
  }
  EXPECT_EQ(visit.conflicts_gone, 100);
  EXPECT_EQ(visit.conflicts_locked, 0);
  EXPECT_EQ(visit.conflicts_not_vested, 0);
  // Busy zones vest again now; zones the visit emptied wait for their item's lease.
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.pointers WHERE vesting_time <= now()"), 200);
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.pointers WHERE vesting_time > now() + interval '4 seconds'"),
            200);
}

}  // namespace
}  // namespace quick::store
