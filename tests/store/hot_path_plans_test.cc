// The hot path's SQL functions (enqueue, the Scanner's scan, the Managers' visit, the Workers'
// acknowledgements and leases) reach quick.items, quick.pointers and quick.pointer_pulls through
// their indexes whatever the statistics say.
//
// A healthy queue's tables are nearly empty when autovacuum analyzes them, and full of dead row
// versions a moment later: every job inserts, leases and deletes an item and moves its pointer.
// The planner, told the tables are tiny, plans sequential scans; PL/pgSQL keeps those plans for
// the session; and every call then walks every dead version. In the steady_load benchmark with
// 1,000 tenants that made a visit of two or three zones cost 3.8-4.3 ms instead of 1 ms and an
// enqueue 0.9 ms instead of 0.2 (docs/benchmarks.md, "Steady load"). The functions therefore run
// with enable_seqscan = off (and jit = off, which the disabled scans' cost would otherwise
// trigger: about 100 ms of compiling per statement), and with generic plans made once per session
// (plan_cache_mode = force_generic_plan; enable_bitmapscan = off keeps those on the ordered index
// scans), docs/architecture.md#sql-files.
#include <string>

#include <gtest/gtest.h>

#include "support/test_database.h"

namespace quick::store {
namespace {

using quick::testing::DatabaseTest;

class HotPathPlansTest : public DatabaseTest {
 protected:
  // 1,000 zones with a pointer each and no items, analyzed in that state (the statistics of a
  // drained queue); then dead row versions that the statistics know nothing of.
  void SetUp() override {
    DatabaseTest::SetUp();
    query(
        "SELECT count(*) FROM quick.enqueue_batch((SELECT jsonb_agg(jsonb_build_object('tenant', 't' || n, "
        "'job_type', 'job')) FROM generate_series(1, 1000) n))");
    query("DELETE FROM quick.items");
    query("VACUUM ANALYZE quick.items, quick.pointers, quick.pointer_pulls");
    query(
        "SELECT count(*) FROM quick.enqueue_batch((SELECT jsonb_agg(jsonb_build_object('tenant', 't' || (n % 1000 + "
        "1), 'job_type', 'job')) FROM generate_series(1, 5000) n))");
    query("DELETE FROM quick.items");
    for (int i = 0; i < 3; ++i) query("UPDATE quick.pointers SET vesting_time = now() - interval '1 second'");
  }
  // Sequential scans of a table by this transaction so far.
  static std::int64_t sequential_scans(pqxx::work& txn, const std::string& table) {
    return txn.exec1("SELECT seq_scan FROM pg_stat_xact_user_tables WHERE relid = '" + table + "'::regclass")[0]
        .as<std::int64_t>();
  }
};

TEST_F(HotPathPlansTest, EnqueueScanVisitAndAcknowledgementsNeverScanTheQueueTablesSequentially) {
  auto conn = connect();  // a new session: nothing planned yet
  pqxx::work txn(*conn);
  // Each step more than five times: left to plan_cache_mode = auto, PL/pgSQL would move from
  // custom plans to a cached generic one after five, the plan a long-lived session keeps.
  for (int round = 0; round < 7; ++round) {
    const std::string tenant = "t" + std::to_string(round + 1);
    txn.exec("SELECT quick.enqueue('new" + std::to_string(round) + "', 'job')");
    txn.exec("SELECT quick.enqueue_into_existing_zone('" + tenant + "', 'job', '{}'::jsonb, interval '0', 0, true)");
    txn.exec("SELECT count(*) FROM quick.enqueue_batch(jsonb_build_array(jsonb_build_object('tenant', '" + tenant +
             "', 'job_type', 'job')))");
    txn.exec("SELECT count(*) FROM quick.scan_pointers(100)");
    const pqxx::result leased = txn.exec("SELECT item_id, item_lease_id FROM quick.visit_zones(ARRAY['" + tenant +
                                         "'], 10, interval '30 seconds', interval '1 hour') WHERE kind = 'item'");
    ASSERT_EQ(leased.size(), 2u) << "round " << round;
    const std::string ids = std::string("ARRAY[") + leased[0][0].c_str() + "," + leased[1][0].c_str() + "]::bigint[]";
    const std::string leases = std::string("ARRAY['") + leased[0][1].c_str() + "','" + leased[1][1].c_str() +
                               "']::uuid[]";
    txn.exec("SELECT count(*) FROM quick.extend_item_leases(" + ids + ", " + leases + ", interval '30 seconds')");
    txn.exec("SELECT count(*) FROM quick.ack_items(" + ids + ", " + leases +
             ", ARRAY['complete','complete'], ARRAY[NULL, NULL]::interval[], ARRAY[NULL, NULL]::text[])");
  }
  EXPECT_EQ(sequential_scans(txn, "quick.items"), 0);
  EXPECT_EQ(sequential_scans(txn, "quick.pointers"), 0);
  EXPECT_EQ(sequential_scans(txn, "quick.pointer_pulls"), 0);
  txn.commit();
}

// Every SQL function of the hot path carries the settings; a new one must too.
TEST_F(HotPathPlansTest, TheHotPathFunctionsCarryTheirPlannerSettings) {
  const pqxx::result missing = query(
      "SELECT p.proname FROM pg_proc p WHERE p.pronamespace = 'quick'::regnamespace AND p.proname IN ("
      "'enqueue', 'enqueue_into_existing_zone', 'enqueue_batch', 'enqueue_batch_into_existing_zones', "
      "'scan_pointers', 'apply_pointer_pulls', 'peek_pointers', 'visit_zones', 'ack_items', 'extend_item_leases', "
      "'dequeue', 'complete', 'requeue', 'extend_lease', 'release_lease', 'obtain_lease', 'lease_pointers', "
      "'lease_next_pointers', 'settle_pointers', 'peek', 'cancel_item', 'item_status') "
      "AND NOT (coalesce(p.proconfig, '{}') @> ARRAY['enable_seqscan=off', 'enable_bitmapscan=off', 'jit=off', "
      "'plan_cache_mode=force_generic_plan']) ORDER BY 1");
  std::string names;
  for (const auto& row : missing) names += std::string(row[0].c_str()) + " ";
  EXPECT_TRUE(missing.empty()) << "without the hot path's planner settings: " << names;
  EXPECT_EQ(query_value<int>("SELECT count(DISTINCT proname) FROM pg_proc WHERE pronamespace = 'quick'::regnamespace "
                             "AND proname IN ('enqueue', 'visit_zones', 'ack_items', 'scan_pointers')"),
            4);
}

// The producers' fast paths find a pointer's newest version by reading the pointer index
// backwards. After an automatic ANALYZE under a held snapshot (one live pointer among thousands of
// dead versions), the planner once chose pointers_vesting instead, read whole for the tenant and
// sorted, for a minute (docs/benchmarks.md#ten-minutes-held-on-the-final-build-2026-11-27):
// enable_sort = off leaves it no sorted alternative.
TEST_F(HotPathPlansTest, TheProducersFastPathsNeverSortForAPointersNewestVersion) {
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM pg_proc p WHERE p.pronamespace = 'quick'::regnamespace "
                             "AND p.proname IN ('enqueue_into_existing_zone', 'enqueue_batch_into_existing_zones') "
                             "AND coalesce(p.proconfig, '{}') @> ARRAY['enable_sort=off']"),
            2);
}

}  // namespace
}  // namespace quick::store
