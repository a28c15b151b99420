// quick.queue_metrics (sql/functions/queue_metrics.sql), the metrics' database gauges, against
// queue states the metrics tests do not build: tables whose statistics counters were reset (a
// crash restart, a failover, pg_stat_reset) in a queue nobody vacuums, where the estimates above
// count_limit must still be near the truth and the sample must still read a bounded part of
// quick.items.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include <pqxx/pqxx>

#include "store/queue_metrics.h"
#include "support/test_database.h"

namespace quick::store {
namespace {

using quick::testing::DatabaseTest;

// `metric` of `values`, -1 when it is missing.
double value_of(const std::map<std::string, double>& values, const std::string& metric) {
  const auto found = values.find(metric);
  return found == values.end() ? -1 : found->second;
}

class QueueMetricsTest : public DatabaseTest {
 protected:
  void SetUp() override {
    DatabaseTest::SetUp();
    conn_ = connect();
  }

  // One statement on this test's own connection, whose statistics are then flushed to the shared
  // ones (pg_stat_force_next_flush: before the next statement is read), so that the next
  // statement, on any connection, sees what this one did.
  pqxx::result run(const std::string& sql) {
    pqxx::result result;
    {
      pqxx::nontransaction session(*conn_);
      result = session.exec(sql);
    }
    pqxx::nontransaction(*conn_).exec("SELECT pg_stat_force_next_flush()");
    return result;
  }

  // The database-wide values of quick.queue_metrics(top_tenants, count_limit), by metric name.
  std::map<std::string, double> metrics(int top_tenants, int count_limit) {
    std::map<std::string, double> values;
    {
      pqxx::read_transaction txn(*conn_);
      for (const auto& metric : queue_metrics(txn, top_tenants, count_limit)) {
        if (!metric.tenant) values[metric.metric] = metric.value;
      }
      txn.commit();
    }
    pqxx::nontransaction(*conn_).exec("SELECT pg_stat_force_next_flush()");
    return values;
  }

  // Heap pages of `table` read so far (from shared buffers or not), as the statistics count them.
  long heap_pages_read(const std::string& table) {
    return run("SELECT coalesce(heap_blks_read, 0) + coalesce(heap_blks_hit, 0) FROM pg_statio_user_tables "
               "WHERE relid = 'quick." +
               table + "'::regclass")
        .at(0)
        .at(0)
        .as<long>();
  }
  long table_pages(const std::string& table) {
    return run("SELECT pg_relation_size('quick." + table + "') / current_setting('block_size')::bigint")
        .at(0)
        .at(0)
        .as<long>();
  }

  std::unique_ptr<pqxx::connection> conn_;
};

// 50,000 items in 20,000 zones and 20,000 dead items, never vacuumed nor analyzed (autovacuum off,
// as in a stuck queue), then the statistics counters of the three tables reset: the live-row
// counters say 0. Before, the function took count_limit + 1 for the number of rows (items 5,001,
// zones 5,001, dead items 5,001) and sampled 100% of quick.items every round.
TEST_F(QueueMetricsTest, EstimatesAboveTheCountLimitDoNotDependOnTheStatisticsCounters) {
  for (const std::string table : {"items", "pointers", "dead_items"}) {
    run("ALTER TABLE quick." + table + " SET (autovacuum_enabled = false)");
  }
  run("INSERT INTO quick.items (tenant, job_type, vesting_time, zone_time, payload) "
      "SELECT 't' || (n % 20000), 'job', now() - interval '1 minute', now() - interval '1 minute', "
      "       jsonb_build_object('n', n) "
      "  FROM generate_series(1, 50000) n");
  run("INSERT INTO quick.pointers (tenant, vesting_time, last_active_time) "
      "SELECT 't' || t, now() + interval '1 hour', now() FROM generate_series(0, 19999) t");
  run("INSERT INTO quick.dead_items (id, tenant, job_type, priority, error_count, payload, enqueued_at, reason) "
      "SELECT -n, 't' || (n % 100), 'job', 0, 1, '{}', now(), 'test' FROM generate_series(1, 20000) n");
  ASSERT_EQ(run("SELECT count(*) FROM quick.pointers").at(0).at(0).as<int>(), 20000);
  for (const std::string table : {"items", "pointers", "dead_items"}) {
    run("SELECT pg_stat_reset_single_table_counters('quick." + table + "'::regclass)");
    EXPECT_EQ(run("SELECT pg_stat_get_live_tuples('quick." + table + "'::regclass)").at(0).at(0).as<long>(), 0)
        << table;
  }

  const long items_before = heap_pages_read("items");
  const auto values = metrics(0, 5000);
  const long items_read = heap_pages_read("items") - items_before;
  const long items_pages = table_pages("items");

  EXPECT_EQ(values.at("exact_items"), 0);
  EXPECT_GE(values.at("items"), 25000);
  EXPECT_LE(values.at("items"), 100000);
  EXPECT_GE(values.at("vested_items"), 25000);
  EXPECT_LE(values.at("vested_items"), 100000);
  EXPECT_EQ(values.at("exact_zones"), 0);
  EXPECT_GE(values.at("zones"), 10000);
  EXPECT_LE(values.at("zones"), 40000);
  EXPECT_EQ(values.at("exact_dead_items"), 0);
  EXPECT_GE(values.at("dead_items"), 10000);
  EXPECT_LE(values.at("dead_items"), 40000);
  // Counting the first 5,001 rows reads a tenth of the pages, the sample about as many again;
  // the whole table would be more than all of them.
  EXPECT_GT(items_pages, 300);
  EXPECT_LT(items_read, items_pages / 2) << items_pages << " pages in quick.items";
}

// A paused tenant's pointer waits unvisited, and a paused job type's items stay vested, for as long
// as the pause lasts: neither is a consumer falling behind. Before, acme's 30-minute-old pointer
// and item and gamma's 30-minute-old report item set max_pointer_lag_seconds and
// oldest_vested_item_age_seconds to 1800 while they were paused, and acme's
// tenant_pointer_lag_seconds too, so QuickPointerLag and QuickOldestVestedItemTooOld fired
// during any pause.
TEST_F(QueueMetricsTest, PausedTenantsAndJobTypesAreLeftOutOfTheLagsAndAgesAndCounted) {
  run("SELECT quick.enqueue('acme', 'job'), quick.enqueue('acme', 'job'), quick.enqueue('acme', 'job')");
  run("SELECT quick.enqueue('beta', 'job'), quick.enqueue('gamma', 'report')");
  run("UPDATE quick.items SET vesting_time = now() - interval '30 minutes', zone_time = now() - interval "
      "'30 minutes' WHERE tenant IN ('acme', 'gamma')");
  run("UPDATE quick.items SET vesting_time = now() - interval '20 seconds', zone_time = now() - interval "
      "'20 seconds' WHERE tenant = 'beta'");
  run("UPDATE quick.pointers SET vesting_time = now() - interval '30 minutes' WHERE tenant = 'acme'");
  run("UPDATE quick.pointers SET vesting_time = now() - interval '10 seconds' WHERE tenant = 'beta'");
  // As a visit leaves a zone holding only paused items: requeued for later.
  run("UPDATE quick.pointers SET vesting_time = now() + interval '10 minutes' WHERE tenant = 'gamma'");

  const auto tenant_lag = [](const std::vector<QueueMetric>& values, const std::string& tenant) {
    for (const auto& value : values) {
      if (value.metric == "tenant_pointer_lag_seconds" && value.tenant == tenant) return value.value;
    }
    return -1.0;
  };
  // What the queue looks like before the pauses: the lags are real.
  auto values = metrics(5, 10000);
  EXPECT_GE(values.at("max_pointer_lag_seconds"), 1800);
  EXPECT_GE(values.at("oldest_vested_item_age_seconds"), 1800);
  EXPECT_EQ(value_of(values, "paused_tenants"), 0);
  EXPECT_EQ(value_of(values, "paused_job_types"), 0);

  run("SELECT quick.pause_tenant('acme', 'test'), quick.pause_job_type('report', 'test')");
  std::vector<QueueMetric> all;
  {
    pqxx::read_transaction txn(*conn_);
    all = queue_metrics(txn, 5, 10000);
    txn.commit();
  }
  values.clear();
  for (const auto& value : all) {
    if (!value.tenant) values[value.metric] = value.value;
  }
  // beta's pointer (10 s) and item (20 s) are the oldest that are not paused.
  EXPECT_GE(values.at("max_pointer_lag_seconds"), 10);
  EXPECT_LT(values.at("max_pointer_lag_seconds"), 600);
  EXPECT_GE(values.at("oldest_vested_item_age_seconds"), 20);
  EXPECT_LT(values.at("oldest_vested_item_age_seconds"), 600);
  EXPECT_EQ(value_of(values, "paused_tenants"), 1);
  EXPECT_EQ(value_of(values, "paused_job_types"), 1);
  // The deepest zone is acme's, still listed with its depth, its lag 0 while paused.
  EXPECT_EQ(tenant_lag(all, "acme"), 0);
  EXPECT_GE(tenant_lag(all, "beta"), 10);
  EXPECT_EQ(values.at("items"), 5);
  EXPECT_EQ(values.at("vested_items"), 5);
}

}  // namespace
}  // namespace quick::store
