// Two databases of one cluster migrated at the same time: the migrator's lock is each database's
// own, but the roles migration 0006 creates are the cluster's. A cluster of this test's own, so
// that the roles do not exist yet.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <exception>
#include <memory>
#include <string>
#include <thread>

#include <pqxx/pqxx>

#include "local_postgres/local_cluster.h"
#include "quick/migrate.h"
#include "support/eventually.h"
#include "support/own_cluster.h"
#include "support/processes.h"
#include "support/test_database.h"

namespace quick {
namespace {

using namespace std::chrono_literals;

// Whether a backend of the cluster waits for a lock (the migrators, behind the role we create).
int sessions_waiting(const std::string& url) {
  pqxx::connection conn(url);
  return pqxx::nontransaction(conn)
      .exec("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname LIKE 'migrated_%'")
      .at(0)
      .at(0)
      .as<int>();
}

// Deterministic: a third session creates quick_producer and holds its transaction open, so both
// migrators find no such role, try to create it, and wait on the catalog's unique index; then it
// commits, and both CREATE ROLEs fail with a unique violation. Run again, migration 0006 finds the
// role; both databases end up migrated.
TEST(ConcurrentMigrations, TwoDatabasesOfOneClusterMigratedAtOnceBothSucceed) {
  testing::TempDir dir;
  local_postgres::LocalCluster cluster(dir.cluster_state_dir("cluster"));
  const std::string url = cluster.start();
  testing::expect_cluster_inside(cluster, dir.path());
  {
    pqxx::connection admin(url);
    pqxx::nontransaction(admin).exec("CREATE DATABASE migrated_a");
    pqxx::nontransaction(admin).exec("CREATE DATABASE migrated_b");
  }
  pqxx::connection role_creator(url);
  pqxx::work creating(role_creator);
  creating.exec("CREATE ROLE quick_producer NOLOGIN");

  std::exception_ptr errors[2];
  std::thread migrators[2];
  const std::string names[2] = {"migrated_a", "migrated_b"};
  for (int k = 0; k < 2; ++k) {
    migrators[k] = std::thread([&, k] {
      try {
        pqxx::connection conn(testing::url_for_database(url, names[k]));
        migrate(conn);
      } catch (...) {
        errors[k] = std::current_exception();
      }
    });
  }
  const bool both_waited = testing::eventually([&] { return sessions_waiting(url) == 2; }, 30s);
  creating.commit();
  for (auto& migrator : migrators) migrator.join();
  EXPECT_TRUE(both_waited) << "the migrators never both waited on the role (the race was not arranged)";
  for (int k = 0; k < 2; ++k) {
    if (!errors[k]) continue;
    try {
      std::rethrow_exception(errors[k]);
    } catch (const std::exception& error) {
      ADD_FAILURE() << names[k] << ": " << error.what();
    }
  }
  for (const auto& name : names) {
    pqxx::connection conn(testing::url_for_database(url, name));
    EXPECT_EQ(applied_schema_version(conn), latest_schema_version()) << name;
  }
  cluster.stop();
}

}  // namespace
}  // namespace quick
