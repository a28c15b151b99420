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
#include "support/items.h"
#include "support/test_database.h"

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
    const auto rows = query(
        "SELECT extract(epoch FROM vesting_time - now())::float8 FROM quick.pointers WHERE tenant = '" + tenant + "'");
    if (rows.empty()) return std::nullopt;
    return rows.at(0).at(0).as<double>();
  }
  int leased_items(const std::string& tenant) {
    return query_value<int>("SELECT count(*) FROM quick.items WHERE lease_id IS NOT NULL AND tenant = '" + tenant +
                            "'");
  }
  // Empties a zone behind the consumer's back, leaving its pointer vested: a zone whose items
  // were all completed.
  void empty_zone(const std::string& tenant) { query("DELETE FROM quick.items WHERE tenant = '" + tenant + "'"); }
  // A connection of its own for lock probes, opened on first use.
  pqxx::connection* other_conn_for_probes() {
    if (!probe_conn_) probe_conn_ = connect();
    return probe_conn_.get();
  }

 private:
  std::unique_ptr<pqxx::connection> probe_conn_;
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
    visit = visit_zones(
        txn,
        {"busy", "emptied", "future", "held", "idle-old", "idle-recent", "locked", "missing", "missing", "throttled"},
        2, 5s, kHour, {"slow"});
    // Until the visit commits, the zones it settled stay locked against enqueuers (FOR UPDATE:
    // an enqueue waits, then sees the parked or deleted pointer), while the zones it requeued in
    // step 3 and the one it left to the enqueue in flight do not block an enqueue.
    const auto key_share_now = [&](const std::string& tenant) {
      pqxx::work probe(*other_conn_for_probes());
      try {
        probe.exec("SELECT 1 FROM quick.pointers WHERE tenant = '" + tenant + "' FOR KEY SHARE NOWAIT");
        return true;
      } catch (const pqxx::sql_error&) {
        return false;
      }
    };
    EXPECT_FALSE(key_share_now("idle-recent")) << "parked: settled under FOR UPDATE";
    EXPECT_FALSE(key_share_now("idle-old")) << "collected: deleted under FOR UPDATE";
    EXPECT_FALSE(key_share_now("emptied")) << "requeued after settling: FOR UPDATE";
    EXPECT_TRUE(key_share_now("busy")) << "requeued in step 3 with a no-key update: enqueuers pass";
    EXPECT_TRUE(key_share_now("held")) << "left to the enqueue in flight";
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
  EXPECT_EQ(visit.conflicts_gone, 1) << "a tenant named twice is one conflict";

  EXPECT_LE(*pointer_vests_in("busy"), 0.0) << "more vested items: vests again at once";
  EXPECT_GT(*pointer_vests_in("emptied"), 4.0) << "requeued to its item's lease end";
  EXPECT_LE(*pointer_vests_in("held"), 0.02)
      << "released to vest within quick.busy_settle_delay(0), so the enqueue is not missed";
  EXPECT_FALSE(pointer_vests_in("idle-old").has_value()) << "empty for longer than min_inactive: collected";
  EXPECT_GT(*pointer_vests_in("idle-recent"), 3000.0) << "parked until min_inactive after its last activity";
  EXPECT_LE(*pointer_vests_in("throttled"), 1.0) << "its vested item of an excluded type waits at the front";
  EXPECT_GT(*pointer_vests_in("future"), 3000.0) << "not visited: unchanged";
  EXPECT_LE(*pointer_vests_in("locked"), 0.0) << "not visited: unchanged";
  EXPECT_EQ(leased_items("busy"), 2);
  EXPECT_EQ(leased_items("throttled"), 0);
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.orphaned_zones"), 0);
}

// Hundreds of zones in one visit, as a Manager with a large pointers_per_batch sends them, with
// the outcomes interleaved zone by zone so that a flag attached to the wrong zone shows: each
// zone is reported exactly once with its own outcome and its own pointer lag, and its pointer
// ends where that outcome puts it; each missing tenant is reported once as gone.
TEST_F(VisitZonesTest, AVisitOfHundredsOfZonesGivesEachZoneItsOwnOutcome) {
  enum Kind { kBusy, kEmptied, kParked, kCollected, kHeld, kKinds };
  const auto name = [](int t) { return "zone-" + std::to_string(1000 + t); };
  const auto kind = [](int t) { return static_cast<Kind>(t % kKinds); };
  constexpr int kZones = 400;
  auto conn = connect();
  std::vector<NewItem> seed;
  std::vector<std::string> tenants, to_empty, old, recent, held;
  for (int t = 0; t < kZones; ++t) {
    tenants.push_back(name(t));
    seed.push_back(make_item(name(t)));
    if (kind(t) == kBusy) seed.push_back(make_item(name(t)));  // dequeue_max 1 leaves one
    if (kind(t) == kParked || kind(t) == kCollected || kind(t) == kHeld) to_empty.push_back("'" + name(t) + "'");
    if (kind(t) == kCollected) old.push_back("'" + name(t) + "'");
    if (kind(t) == kParked) recent.push_back("'" + name(t) + "'");
    if (kind(t) == kHeld) held.push_back(name(t));
  }
  {
    pqxx::work txn(*conn);
    enqueue_batch_in(txn, seed);
    txn.commit();
  }
  const auto list = [](const std::vector<std::string>& quoted) {
    std::string out;
    for (const auto& q : quoted) out += (out.empty() ? "" : ",") + q;
    return out;
  };
  query("DELETE FROM quick.items WHERE tenant IN (" + list(to_empty) + ")");
  query("UPDATE quick.pointers SET last_active_time = now() - interval '2 hours' WHERE tenant IN (" + list(old) + ")");
  query("UPDATE quick.pointers SET last_active_time = now() - interval '30 minutes' WHERE tenant IN (" + list(recent) +
        ")");
  // Each pointer vested (t % 7 + 1) seconds ago, so each zone's reported lag is its own.
  query(
      "UPDATE quick.pointers SET vesting_time = now() - ((substr(tenant, 6)::int - 1000) % 7 + 1) * interval '1 "
      "second'");
  for (int t = 0; t < 100; ++t) tenants.push_back("absent-" + std::to_string(t));
  // One enqueue in flight into every "held" zone.
  auto producer_conn = connect();
  pqxx::work producer(*producer_conn);
  std::vector<NewItem> in_flight;
  for (const auto& tenant : held) in_flight.push_back(make_item(tenant));
  enqueue_batch_in(producer, in_flight);

  ZoneVisit visit;
  {
    pqxx::work txn(*conn);
    visit = visit_zones(txn, tenants, 1, 5s, kHour, {});
    txn.commit();
  }
  producer.commit();

  EXPECT_EQ(visit.items.size(), static_cast<std::size_t>(2 * kZones / kKinds));
  std::map<std::string, const VisitedZone*> by_tenant;
  for (const auto& zone : visit.zones) EXPECT_TRUE(by_tenant.emplace(zone.tenant, &zone).second) << zone.tenant;
  ASSERT_EQ(by_tenant.size(), static_cast<std::size_t>(kZones));
  const std::map<Kind, SettleAction> expected_action = {{kBusy, SettleAction::kRequeued},
                                                        {kEmptied, SettleAction::kRequeued},
                                                        {kParked, SettleAction::kParked},
                                                        {kCollected, SettleAction::kCollected},
                                                        {kHeld, SettleAction::kReleasedBusy}};
  // Per zone: seconds until its pointer vests (NULL: gone) and whether its last activity is now.
  std::map<std::string, std::pair<std::optional<double>, bool>> pointers;
  for (const auto& row : query("SELECT tenant, extract(epoch FROM vesting_time - now())::float8, "
                               "last_active_time > now() - interval '1 minute' FROM quick.pointers")) {
    pointers[row[0].as<std::string>()] = {row[1].as<double>(), row[2].as<bool>()};
  }
  for (int t = 0; t < kZones; ++t) {
    const auto& zone = *by_tenant.at(name(t));
    EXPECT_EQ(zone.action, expected_action.at(kind(t))) << name(t);
    const double lag_s = std::chrono::duration<double>(zone.pointer_lag).count();
    EXPECT_GE(lag_s, t % 7 + 1 - 0.01) << name(t);
    EXPECT_LT(lag_s, t % 7 + 1 + 5.0) << name(t);
    const auto pointer = pointers.find(name(t));
    if (kind(t) == kCollected) {
      EXPECT_EQ(pointer, pointers.end()) << name(t) << " should be gone";
      continue;
    }
    ASSERT_NE(pointer, pointers.end()) << name(t);
    const double vests_in = *pointer->second.first;
    const bool active_now = pointer->second.second;
    switch (kind(t)) {
      case kBusy:
        EXPECT_LE(vests_in, 0.0) << name(t);
        EXPECT_TRUE(active_now) << name(t);
        break;
      case kEmptied:
        EXPECT_GT(vests_in, 4.0) << name(t) << ": its item's lease end";
        EXPECT_TRUE(active_now) << name(t);
        break;
      case kParked:  // until min_inactive (an hour) after its last activity, 30 minutes ago
        EXPECT_GT(vests_in, 1700.0) << name(t);
        EXPECT_LT(vests_in, 1900.0) << name(t);
        EXPECT_FALSE(active_now) << name(t) << ": nothing found, so its last activity stays";
        break;
      // Released to vest after quick.busy_settle_delay(0), 20 ms from the visit's start: a
      // check that runs sooner sees it a few milliseconds ahead.
      case kHeld: EXPECT_LE(vests_in, 0.020) << name(t); break;
      default: break;
    }
  }
  EXPECT_EQ(visit.conflicts_gone, 100);
  EXPECT_EQ(visit.conflicts_locked, 0);
  EXPECT_EQ(visit.conflicts_not_vested, 0);
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.orphaned_zones"), 0);
}

// A big zone whose items are all leased: every lease moved an item to the end of its zone (a new
// row version) and left the old version dead where a sequential scan starts, until a vacuum.
// Version 3's probes for vested items ("does the zone have any?", step 1; "any left?", step 3)
// were EXISTS subqueries that Postgres ran as sequential scans when the statistics said most rows
// were the tenant's, so each walked every dead version and every leased item: one tenant's
// 50,000-item drain slowed from 3.9 to 14.5 ms per visit of 100 (docs/benchmarks-history.md, "One tenant: migration
// 0004"). The probes must go through the zone index. (Today the dequeue, step 2a, tells whether a zone had
// anything to take, and step 3's probe starts at the last item taken.) Here the visit finds nothing vested, so it
// dequeues nothing and the only scans of quick.items are step 2a's and step 4's index lookups.
TEST_F(VisitZonesTest, ABigZonesProbesUseTheZoneIndexNotASequentialScan) {
  query(
      "SELECT count(*) FROM quick.enqueue_batch((SELECT jsonb_agg(jsonb_build_object('tenant', 'big', "
      "'job_type', 'job')) FROM generate_series(1, 20000)))");
  query("VACUUM ANALYZE quick.items");
  query("UPDATE quick.items SET lease_id = gen_random_uuid(), vesting_time = now() + interval '1 minute'");
  query("UPDATE quick.pointers SET vesting_time = now() - interval '1 second' WHERE tenant = 'big'");

  auto conn = connect();  // new: no scans of its own pending in the statistics yet
  pqxx::work txn(*conn);
  const ZoneVisit result = visit_zones(txn, {"big"}, 100, 30s, kHour, {});
  EXPECT_TRUE(result.items.empty());
  EXPECT_EQ(actions_by_tenant(result).at("big"), SettleAction::kRequeued);  // to its leases' end
  // This session's scans of quick.items, not yet reported to the statistics collector.
  EXPECT_EQ(txn.exec1("SELECT seq_scan FROM pg_stat_xact_user_tables WHERE relid = 'quick.items'::regclass")[0]
                .as<std::int64_t>(),
            0);
  txn.commit();
}

// The same for step 3's probe ("any vested items left after the dequeue?"): the zone has 20,000
// vested items, the visit takes 100, and step 3 finds more, so the zone stays busy: requeued to
// vest now without a settle, its floor untouched (a settle would have raised it).
TEST_F(VisitZonesTest, ABigZonesBusyProbeUsesTheZoneIndexNotASequentialScan) {
  query(
      "SELECT count(*) FROM quick.enqueue_batch((SELECT jsonb_agg(jsonb_build_object('tenant', 'big', "
      "'job_type', 'job')) FROM generate_series(1, 20000)))");
  query("VACUUM ANALYZE quick.items");

  auto conn = connect();  // new: no scans of its own pending in the statistics yet
  pqxx::work txn(*conn);
  const ZoneVisit result = visit_zones(txn, {"big"}, 100, 30s, kHour, {});
  EXPECT_EQ(result.items.size(), 100u);
  EXPECT_EQ(actions_by_tenant(result).at("big"), SettleAction::kRequeued);  // still busy: vests now
  EXPECT_EQ(txn.exec1("SELECT seq_scan FROM pg_stat_xact_user_tables WHERE relid = 'quick.items'::regclass")[0]
                .as<std::int64_t>(),
            0);
  EXPECT_TRUE(txn.exec1("SELECT floor_priority IS NULL FROM quick.pointers WHERE tenant = 'big'")[0].as<bool>())
      << "the zone was settled, not requeued as busy";
  txn.commit();
}

// The byte budget: a visit takes at most max_bytes of payload over all its zones, round robin
// (every zone's first item, then every zone's second, ...), at least one item, and requeues the
// zones it left vested items in to vest now.
TEST_F(VisitZonesTest, AVisitTakesAtMostItsByteBudgetRoundRobinOverItsZones) {
  auto conn = connect();
  const std::string kilobyte = "{\"d\":\"" + std::string(1000, 'x') + "\"}";  // 1,009 bytes of JSON text
  for (int i = 0; i < 5; ++i) {
    enqueue_committed(*conn, make_item("a", "job", kilobyte));
    enqueue_committed(*conn, make_item("b", "job", kilobyte));
  }
  ZoneVisit visit;
  {
    pqxx::work txn(*conn);
    visit = visit_zones(txn, {"a", "b"}, 100, 30s, kHour, {}, 3500);
    txn.commit();
  }
  std::map<std::string, int> items;
  for (const auto& dequeued : visit.items) ++items[dequeued.item.tenant];
  // 1,009 + 1,009 + 1,009 (< 3,500 before the third) + 1,009 (3,027 < 3,500 before the fourth).
  EXPECT_EQ(items, (std::map<std::string, int>{{"a", 2}, {"b", 2}})) << "round robin, within the budget";
  EXPECT_EQ(actions_by_tenant(visit),
            (std::map<std::string, SettleAction>{{"a", SettleAction::kRequeued}, {"b", SettleAction::kRequeued}}));
  EXPECT_LE(*pointer_vests_in("a"), 0.0) << "vested items were left: the zone vests again at once";

  // A budget smaller than one item still takes one.
  pqxx::work txn(*conn);
  EXPECT_EQ(visit_zones(txn, {"a", "b"}, 100, 30s, kHour, {}, 10).items.size(), 1u);
  txn.commit();
}

}  // namespace
}  // namespace quick::store
