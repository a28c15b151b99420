// Upgrading a database built before the 0.1.0 squash: the development migrations 0001-0004 (a
// frozen copy: tests/schema/fixtures/) left a version-4 database, with its own definitions of every
// function. `quick migrate` must bring it to exactly the schema a new database gets, and every
// queued item, lease, pointer, pull request, dead item and role must come through untouched.
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <pqxx/pqxx>

#include "quick/migrate.h"
#include "schema/sql_definitions.h"
#include "support/commands.h"
#include "support/schema_snapshot.h"
#include "support/test_database.h"

namespace quick::schema {
namespace {

// Every row of the queue's tables as the version-4 schema had them (its columns; later migrations
// may add columns and history rows), as text, in a stable order.
std::vector<std::string> queue_rows(pqxx::connection& conn) {
  pqxx::nontransaction session(conn);
  const std::vector<std::pair<std::string, std::string>> tables = {
      {"items",
       "id, tenant, job_type, priority, vesting_time, lease_id, error_count, payload, enqueued_at, "
       "client_item_id, last_error"},
      {"pointers", "tenant, vesting_time, lease_id, last_active_time, created_at"},
      {"pointer_pulls", "tenant, vesting_time, requested_at"},
      {"dead_items",
       "id, tenant, job_type, priority, error_count, payload, enqueued_at, client_item_id, last_error, "
       "died_at, reason"},
      {"consumer_roles", "role, holder, expires_at, acquired_at"},
      {"schema_migrations WHERE version <= 4", "version, name, applied_at"}};
  std::vector<std::string> rows;
  for (const auto& [table, columns] : tables) {
    const std::string sql = "SELECT '" + table + ": ' || row(" + columns + ")::text AS r FROM quick." + table +
                            " ORDER BY r";
    for (const auto& row : session.exec(sql)) rows.push_back(row[0].as<std::string>());
  }
  return rows;
}

class UpgradeTest : public testing::DatabaseTest {
 protected:
  // A version-4 database as the pre-0.1.0 `quick migrate` left it, with queued work in every state.
  void build_legacy_database_with_work() {
    const auto built = testing::run_psql_file(
        legacy_.url(), testing::source_dir() / "tests" / "schema" / "fixtures" / "pre_0_1_0_schema_version_4.sql");
    ASSERT_EQ(built.exit_code, 0) << built.output;
    pqxx::connection conn(legacy_.url());
    pqxx::nontransaction session(conn);
    // Enqueued through the legacy functions: plain, delayed, prioritised, with a client id, batched.
    session.exec("SELECT quick.enqueue('alice', 'mail', '{\"n\": 1}')");
    session.exec("SELECT quick.enqueue('alice', 'mail', '{\"n\": 2}', vesting_delay => '1 hour')");
    session.exec("SELECT quick.enqueue('alice', 'urgent', '{}', priority => -5)");
    session.exec("SELECT quick.enqueue('bob', 'mail', '{}', client_item_id => 'order-7')");
    session.exec(R"(SELECT quick.enqueue_batch('[{"tenant": "carol", "job_type": "a"},
                                                  {"tenant": "carol", "job_type": "b", "priority": 3},
                                                  {"tenant": "dave", "job_type": "a"}]'))");
    // A leased item, a retried one with its error, a dead one.
    session.exec("SELECT quick.dequeue('carol', 1, '10 minutes')");
    session.exec(
        "SELECT quick.requeue(i.id, NULL, '2 minutes', 'timeout') FROM quick.items i "
        "WHERE i.tenant = 'dave'");
    session.exec(
        "SELECT quick.ack_items(ARRAY[l.id], ARRAY[l.lease_id], ARRAY['dead'], ARRAY[interval '0'], "
        "ARRAY['bad payload']) FROM quick.dequeue('bob', 1, '10 minutes') l");
    // A parked pointer with a pull request pending, and a consumer role.
    session.exec("UPDATE quick.pointers SET vesting_time = now() + interval '1 hour' WHERE tenant = 'alice'");
    session.exec("SELECT quick.enqueue('alice', 'mail', '{\"n\": 3}')");
    session.exec("SELECT quick.claim_role('in_order_scanner', 'consumer-1', '1 hour')");
    ASSERT_EQ(session.exec("SELECT count(*) FROM quick.pointer_pulls").at(0)[0].as<int>(), 1);
    ASSERT_EQ(session.exec("SELECT count(*) FROM quick.dead_items").at(0)[0].as<int>(), 1);
    ASSERT_EQ(session.exec("SELECT max(version) FROM quick.schema_migrations").at(0)[0].as<int>(), 4);
  }

  testing::EmptyDatabase legacy_;
};

TEST_F(UpgradeTest, QuickMigrateBringsAVersion4DatabaseToTheNewSchemaWithEveryQueuedItemIntact) {
  build_legacy_database_with_work();
  if (HasFatalFailure()) return;
  pqxx::connection conn(legacy_.url());
  const auto before = queue_rows(conn);
  EXPECT_FALSE(stale_functions(conn).empty()) << "the fixture should define the functions differently";

  const auto report = migrate(conn);
  EXPECT_EQ(report.version_before, 4);
  EXPECT_EQ(report.version_after, latest_schema_version());

  EXPECT_EQ(queue_rows(conn), before) << "the upgrade changed queued work";
  EXPECT_TRUE(stale_functions(conn).empty());
  EXPECT_NO_THROW(require_current_schema(conn));
  // This test's own database was built from scratch by quick::migrate (the test template).
  EXPECT_EQ(testing::schema_difference(testing::schema_snapshot(url()), testing::schema_snapshot(legacy_.url())), "");
}

TEST_F(UpgradeTest, TheUpgradedQueueServesTheItemsItHeldBefore) {
  build_legacy_database_with_work();
  if (HasFatalFailure()) return;
  pqxx::connection conn(legacy_.url());
  migrate(conn);
  pqxx::nontransaction session(conn);
  session.exec("SELECT quick.apply_pointer_pulls()");
  // The vested items of every zone come out of one visit, in zone order; nothing was lost.
  const auto visited = session.exec(
      "SELECT tenant, job_type FROM quick.visit_zones(ARRAY['alice', 'bob', 'carol', 'dave'], 100, "
      "'1 minute', '1 minute') WHERE kind = 'item' ORDER BY tenant, priority, job_type");
  std::vector<std::string> items;
  for (const auto& row : visited) items.push_back(row[0].as<std::string>() + "/" + row[1].as<std::string>());
  EXPECT_THAT(items, ::testing::ElementsAre("alice/urgent", "alice/mail", "alice/mail", "carol/b"));
  EXPECT_EQ(session.exec("SELECT quick.retry_dead_item(id) IS NOT NULL FROM quick.dead_items").at(0)[0].as<bool>(),
            true);
  EXPECT_EQ(session.exec("SELECT count(*) FROM quick.orphaned_zones").at(0)[0].as<int>(), 0);
}

}  // namespace
}  // namespace quick::schema
