// The steady state's "baseline-b10+zone-writes" (bench/support/baseline_queue.h): the baseline
// whose producers also make the writes QuiCK's design adds to an enqueue.
// docs/benchmarks-history.md ("The same writes in the plain queue") reads its numbers as the cost of those writes, so
// these tests check, on a real server, that its enqueue really makes them: the per-tenant index, a lock on each
// tenant's pointer that holds until commit, and the move, which never waits for another producer.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/baseline_queue.h"
#include "support/load.h"
#include "support/test_database.h"

namespace quick::bench {
namespace {

using testing::DatabaseTest;

class BaselineZoneWritesTest : public DatabaseTest {
 protected:
  void SetUp() override {
    DatabaseTest::SetUp();
    if (HasFatalFailure()) return;
    // A statement that waited for another session's lock would fail the test, not hang it.
    query("ALTER DATABASE " + database_name() + " SET statement_timeout = '10s'");
    auto conn = connect();
    create_baseline_schema(*conn);
    add_zone_writes_schema(*conn, 3);
    // Every pointer starts an hour in the past, so a move is visible.
    query("UPDATE bench_baseline.zones SET vesting_time = now() - interval '1 hour'");
  }

  static std::vector<BaselineJob> jobs_for(const std::vector<int>& tenants) {
    std::vector<BaselineJob> jobs;
    for (int t : tenants) jobs.push_back(BaselineJob{tenant_name(t), "{}", 0});
    return jobs;
  }

  // Whether another session can take FOR UPDATE on the tenant's pointer without waiting: it
  // cannot while an enqueue holds its FOR KEY SHARE lock.
  bool pointer_free_for_update(int tenant) {
    auto other = connect();
    pqxx::work txn(*other);
    try {
      txn.exec("SELECT 1 FROM bench_baseline.zones WHERE tenant = '" + tenant_name(tenant) + "' FOR UPDATE NOWAIT");
      return true;
    } catch (const pqxx::sql_error& error) {
      EXPECT_EQ(error.sqlstate(), "55P03") << error.what();
      return false;
    }
  }

  bool moved(int tenant) {
    return query_value<bool>(
        "SELECT vesting_time > now() - interval '1 minute' FROM bench_baseline.zones "
        "WHERE tenant = '" +
        tenant_name(tenant) + "'");
  }
};

TEST_F(BaselineZoneWritesTest, LocksAndMovesEachTenantsPointerUntilCommitAndIndexesJobsInTenantOrder) {
  auto producer = connect();
  pqxx::work txn(*producer);
  enqueue_baseline_with_zone_writes(txn, jobs_for({0, 0, 1}));
  EXPECT_FALSE(pointer_free_for_update(0));
  EXPECT_FALSE(pointer_free_for_update(1));
  EXPECT_TRUE(pointer_free_for_update(2));
  EXPECT_FALSE(moved(0)) << "the move is seen only at commit";
  txn.commit();

  EXPECT_TRUE(moved(0));
  EXPECT_TRUE(moved(1));
  EXPECT_FALSE(moved(2));
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM bench_baseline.jobs"), 3);
  EXPECT_EQ(query_value<std::string>("SELECT indexdef FROM pg_indexes WHERE schemaname = 'bench_baseline' "
                                     "AND indexname = 'jobs_zone_order'"),
            "CREATE INDEX jobs_zone_order ON bench_baseline.jobs USING btree (tenant, priority, run_at)");
  EXPECT_TRUE(pointer_free_for_update(0));
}

TEST_F(BaselineZoneWritesTest, AProducerNeverWaitsForAnotherThatMovedTheSamePointerAndStillLocksIt) {
  auto first = connect();
  pqxx::work first_txn(*first);
  enqueue_baseline_with_zone_writes(first_txn, jobs_for({0}));  // holds tenant 0's pointer, moved

  auto second = connect();
  pqxx::work second_txn(*second);
  // Would wait for the first producer's row lock (and time out) without SKIP LOCKED.
  enqueue_baseline_with_zone_writes(second_txn, jobs_for({0, 1}));
  first_txn.commit();
  // The second could not move tenant 0's pointer, but it still holds the enqueue/GC lock on it.
  EXPECT_FALSE(pointer_free_for_update(0));
  second_txn.commit();

  EXPECT_EQ(query_value<int>("SELECT count(*) FROM bench_baseline.jobs"), 3);
  EXPECT_TRUE(moved(0));
  EXPECT_TRUE(moved(1));
}

}  // namespace
}  // namespace quick::bench
