// Schema migrations (include/quick/migrate.h): quick::migrate, the schema version checks, and
// applying migrations/ with psql, which must work as well as the migrator.
#include <atomic>
#include <filesystem>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "local_postgres/local_cluster.h"
#include "quick/quick.h"
#include "support/commands.h"
#include "support/items.h"
#include "support/own_cluster.h"
#include "support/processes.h"
#include "support/schema_snapshot.h"
#include "support/test_database.h"

namespace quick {
namespace {

using ::testing::HasSubstr;
using testing::DatabaseTest;
using testing::run_psql_file;
using testing::source_dir;

class MigrateTest : public DatabaseTest {
 protected:
  // A new, empty database (no quick schema); returns its connection string. Dropped after the test.
  std::string create_empty_database() {
    scratch_databases_.push_back(std::make_unique<testing::EmptyDatabase>());
    return scratch_databases_.back()->url();
  }

  static pqxx::result run(const std::string& url, const std::string& sql) {
    pqxx::connection conn(url);
    pqxx::nontransaction session(conn);
    return session.exec(sql);
  }
  static std::string value(const std::string& url, const std::string& sql) {
    const auto result = run(url, sql);
    return result.at(0)[0].is_null() ? "NULL" : result.at(0)[0].as<std::string>();
  }
  static bool exists(const std::string& url, const std::string& relation) {
    return value(url, "SELECT to_regclass('" + relation + "') IS NOT NULL") == "t";
  }
  // Every recorded migration with its timestamp: changes whenever anything is (re)applied.
  static std::string migration_log(const std::string& url) {
    return value(url,
                 "SELECT string_agg(version || ':' || name || '@' || applied_at, ',' ORDER BY version) "
                 "FROM quick.schema_migrations");
  }

 private:
  std::vector<std::unique_ptr<testing::EmptyDatabase>> scratch_databases_;
};

TEST_F(MigrateTest, MigrateAppliesEveryMigrationToAnEmptyDatabaseAndRecordsTheVersions) {
  const auto empty = create_empty_database();
  pqxx::connection conn(empty);
  EXPECT_EQ(applied_schema_version(conn), 0);
  const auto report = migrate(conn);
  EXPECT_EQ(report.version_before, 0);
  EXPECT_EQ(report.version_after, latest_schema_version());
  EXPECT_GE(latest_schema_version(), 1);
  ASSERT_FALSE(report.applied.empty());
  EXPECT_EQ(report.applied.front(), "0004_baseline");
  EXPECT_EQ(value(empty, "SELECT string_agg(version || ':' || name, ',' ORDER BY version) FROM quick.schema_migrations")
                .substr(0, 10),
            "4:baseline");
  EXPECT_EQ(applied_schema_version(conn), latest_schema_version());
  EXPECT_NO_THROW(require_current_schema(conn));
  EXPECT_TRUE(exists(empty, "quick.queue_summary")) << "migrate must apply sql/views.sql";
  EXPECT_TRUE(exists(empty, "quick.orphaned_zones"));
  EXPECT_EQ(value(empty,
                  "SELECT to_regprocedure('quick.visit_zones(text[],integer,interval,interval,text[],bigint)') "
                  "IS NOT NULL"),
            "t")
      << "migrate must apply sql/functions/";
  {
    // migrate() acted as the schema's owner (quick_admin) and gave the session back as it was.
    pqxx::nontransaction session(conn);
    EXPECT_TRUE(session.exec1("SELECT current_user = session_user")[0].as<bool>());
  }
  // The schema works.
  pqxx::work txn(conn);
  EXPECT_FALSE(enqueue_in(txn, testing::make_item("t")).duplicate);
  txn.commit();
}

TEST_F(MigrateTest, MigrateTwiceIsANoOp) {
  const auto empty = create_empty_database();
  pqxx::connection conn(empty);
  migrate(conn);
  const auto log = migration_log(empty);
  const auto second = migrate(conn);
  EXPECT_TRUE(second.applied.empty());
  EXPECT_EQ(second.version_before, latest_schema_version());
  EXPECT_EQ(second.version_after, latest_schema_version());
  EXPECT_EQ(migration_log(empty), log);
}

TEST_F(MigrateTest, MigrateOnTheFixturesMigratedDatabaseAppliesNothing) {
  auto conn = connect();
  const auto report = migrate(*conn);
  EXPECT_TRUE(report.applied.empty());
  EXPECT_EQ(report.version_before, report.version_after);
}

TEST_F(MigrateTest, MigrateRefusesADatabaseWithANewerSchemaAndLeavesItUnchanged) {
  const int future = latest_schema_version() + 1;
  query("DROP VIEW quick.queue_summary");  // migrate would re-create it if it touched anything
  query("INSERT INTO quick.schema_migrations (version, name) VALUES (" + std::to_string(future) +
        ", 'from_the_future')");
  const auto log = migration_log(url());
  auto conn = connect();
  try {
    migrate(*conn);
    FAIL() << "expected SchemaError";
  } catch (const SchemaError& error) {
    EXPECT_THAT(error.what(), HasSubstr(std::to_string(future)));
    EXPECT_THAT(error.what(), HasSubstr("newer"));
  }
  EXPECT_EQ(migration_log(url()), log);
  EXPECT_FALSE(exists(url(), "quick.queue_summary")) << "migrate touched a newer schema";
  EXPECT_EQ(applied_schema_version(*conn), future);
  pqxx::nontransaction session(*conn);
  EXPECT_TRUE(session.exec1("SELECT current_user = session_user")[0].as<bool>())
      << "a refused migrate kept the schema owner's role";
}

TEST_F(MigrateTest, MigrationThatFailsIsRolledBackAndReported) {
  const auto empty = create_empty_database();
  run(empty, "CREATE SCHEMA quick; CREATE TABLE quick.items (mine int)");
  pqxx::connection conn(empty);
  try {
    migrate(conn);
    FAIL() << "expected SchemaError";
  } catch (const SchemaError& error) {
    EXPECT_THAT(error.what(), HasSubstr("0004_baseline"));
    EXPECT_THAT(error.what(), HasSubstr("rolled back"));
  }
  EXPECT_FALSE(exists(empty, "quick.schema_migrations")) << "a failed migration left objects behind";
  EXPECT_FALSE(exists(empty, "quick.pointers"));
  EXPECT_EQ(value(empty,
                  "SELECT string_agg(attname, ',') FROM pg_attribute "
                  "WHERE attrelid = 'quick.items'::regclass AND attnum > 0"),
            "mine");
  // The connection is usable again.
  pqxx::nontransaction session(conn);
  EXPECT_EQ(session.exec("SELECT 1").at(0)[0].as<int>(), 1);
}

TEST_F(MigrateTest, ConcurrentMigratorsApplyEachVersionOnce) {
  const auto empty = create_empty_database();
  auto migrate_in_thread = [&] {
    pqxx::connection conn(empty);
    return migrate(conn);
  };
  auto first = std::async(std::launch::async, migrate_in_thread);
  auto second = std::async(std::launch::async, migrate_in_thread);
  const auto a = first.get();
  const auto b = second.get();
  EXPECT_FALSE(a.applied.empty() && b.applied.empty());
  EXPECT_TRUE(a.applied.empty() || b.applied.empty());
  EXPECT_EQ(value(empty, "SELECT count(*) FROM quick.schema_migrations"),
            std::to_string(a.applied.size() + b.applied.size()));
}

TEST_F(MigrateTest, RequireCurrentSchemaAcceptsOnlyTheCurrentVersion) {
  auto current = connect();
  EXPECT_NO_THROW(require_current_schema(*current));

  const auto empty = create_empty_database();
  pqxx::connection missing(empty);
  try {
    require_current_schema(missing);
    FAIL() << "expected SchemaError for a database without the quick schema";
  } catch (const SchemaError& error) {
    EXPECT_THAT(error.what(), HasSubstr("no quick schema"));
  }

  // Older than this build: no version recorded yet.
  query("DELETE FROM quick.schema_migrations");
  try {
    require_current_schema(*current);
    FAIL() << "expected SchemaError for an old schema";
  } catch (const SchemaError& error) {
    EXPECT_THAT(error.what(), HasSubstr("quick migrate"));
  }

  query("INSERT INTO quick.schema_migrations (version, name) VALUES (" + std::to_string(latest_schema_version() + 1) +
        ", 'from_the_future')");
  try {
    require_current_schema(*current);
    FAIL() << "expected SchemaError for a newer schema";
  } catch (const SchemaError& error) {
    EXPECT_THAT(error.what(), HasSubstr("newer"));
  }
}

TEST_F(MigrateTest, PsqlAppliesTheBaselineOnceAndMigrateThenAppliesOnlyTheFunctionsAndViews) {
  const auto migration = source_dir() / "migrations" / "0004_baseline.sql";
  ASSERT_TRUE(std::filesystem::exists(migration)) << migration;
  const auto empty = create_empty_database();

  const auto first = run_psql_file(empty, migration);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_EQ(value(empty, "SELECT string_agg(version::text, ',') FROM quick.schema_migrations"), "4");
  EXPECT_FALSE(exists(empty, "quick.queue_summary")) << "views are not part of the migration file";
  EXPECT_EQ(value(empty, "SELECT to_regproc('quick.enqueue') IS NULL"), "t")
      << "functions are not part of the migration file";
  run(empty, "INSERT INTO quick.pointers (tenant, vesting_time, last_active_time) VALUES ('t', now(), now())");
  run(empty, "INSERT INTO quick.items (tenant, job_type, vesting_time) VALUES ('t', 'job', now())");
  const auto log = migration_log(empty);

  const auto second = run_psql_file(empty, migration);
  EXPECT_NE(second.exit_code, 0) << "a second psql run must fail";
  EXPECT_THAT(second.output, HasSubstr("already applied"));
  EXPECT_EQ(migration_log(empty), log);
  EXPECT_EQ(value(empty, "SELECT count(*) FROM quick.items"), "1");

  pqxx::connection conn(empty);
  const auto report = migrate(conn);
  EXPECT_EQ(report.version_before, 4);
  EXPECT_EQ(report.version_after, latest_schema_version());
  EXPECT_EQ(report.applied.size(), static_cast<std::size_t>(latest_schema_version() - 4));
  EXPECT_TRUE(exists(empty, "quick.queue_summary"));
  EXPECT_EQ(value(empty, "SELECT quick.max_payload_bytes()"), "1048576");
  EXPECT_EQ(value(empty, "SELECT count(*) FROM quick.items"), "1");
  EXPECT_NO_THROW(require_current_schema(conn));
}

// Migration 0012 gives every item its place in its zone (zone_time): its vesting time, or for an
// item leased right now the migration's time, in the past, where a scan finds it if its lease runs
// out. It drops every zone's floor and quick.visit_zones, whose older version would raise floors
// past the items it leases until the function files define the new one.
TEST_F(MigrateTest, Migration0012GivesEachItemItsPlaceAndDropsTheFloorsAndTheOldVisit) {
  const auto database = create_empty_database();
  for (const char* file :
       {"0004_baseline.sql", "0005_limits.sql", "0006_roles.sql", "0007_visit_byte_budget.sql", "0008_operations.sql",
        "0009_placement.sql", "0010_zone_floor.sql", "0011_pointer_slots.sql"}) {
    const auto applied = run_psql_file(database, source_dir() / "migrations" / file);
    ASSERT_EQ(applied.exit_code, 0) << file << ": " << applied.output;
  }
  run(database,
      "CREATE FUNCTION quick.visit_zones(text[], integer, interval, interval, text[], bigint) "
      "RETURNS void LANGUAGE sql AS 'SELECT'");
  run(database,
      "INSERT INTO quick.pointers (tenant, vesting_time, last_active_time, floor_priority, floor_vesting) "
      "VALUES ('t', now(), now(), 0, now())");
  run(database,
      "INSERT INTO quick.items (tenant, job_type, vesting_time, lease_id) VALUES "
      "('t', 'vested', now() - interval '1 minute', NULL), ('t', 'delayed', now() + interval '1 hour', NULL), "
      "('t', 'leased', now() + interval '30 seconds', gen_random_uuid()), "
      "('t', 'lease_ran_out', now() - interval '5 seconds', gen_random_uuid())");

  const auto applied = run_psql_file(database, source_dir() / "migrations" / "0012_zone_time.sql");
  ASSERT_EQ(applied.exit_code, 0) << applied.output;
  EXPECT_EQ(value(database,
                  "SELECT string_agg(job_type || ':' || CASE WHEN zone_time = vesting_time THEN 'at rest' "
                  "WHEN zone_time < vesting_time AND zone_time <= now() THEN 'in the past' ELSE 'wrong' END, ',' "
                  "ORDER BY job_type) FROM quick.items"),
            "delayed:at rest,lease_ran_out:at rest,leased:in the past,vested:at rest");
  EXPECT_EQ(
      value(database, "SELECT count(*) FROM quick.pointers WHERE floor_priority IS NULL AND floor_vesting IS NULL"),
      "1");
  EXPECT_EQ(value(database,
                  "SELECT to_regprocedure('quick.visit_zones(text[],integer,interval,interval,text[],bigint)') "
                  "IS NULL"),
            "t");
  EXPECT_EQ(value(database, "SELECT indexdef FROM pg_indexes WHERE indexname = 'items_zone_order'"),
            "CREATE INDEX items_zone_order ON quick.items USING btree (tenant, priority, zone_time)");
}

TEST_F(MigrateTest, PsqlCanReapplyTheViewsFile) {
  const auto views = source_dir() / "sql" / "views.sql";
  const auto first = run_psql_file(url(), views);
  EXPECT_EQ(first.exit_code, 0) << first.output;
  const auto second = run_psql_file(url(), views);
  EXPECT_EQ(second.exit_code, 0) << second.output;
  EXPECT_EQ(query_value<int>("SELECT orphaned_zones FROM quick.queue_summary"), 0);
}

// The roles are cluster-wide, so this needs a cluster of its own where they do not exist yet
// (docs/security.md#installing-without-createrole and #who-owns-the-schema):
// - a login without CREATEROLE that owns its database migrates up to migration 0006, which stops
//   with a message naming what to do; once an administrator has created the roles, its next
//   migrate goes on to migration 0015, which asks for the login's membership in quick_admin (the
//   schema's owner from then on). Its functions and views exist (applied with psql, as a
//   version-14 install has them); once it is granted quick_admin, migrate hands them all over;
// - a login with CREATEROLE migrates in one go and grants itself quick_admin;
// - a superuser migrating a database another login installed leaves that login a member, so
//   it keeps its access;
// - a login that neither owns the schema nor is a superuser is refused before anything runs;
// - an operator's login that is only a member of quick_admin migrates: a missing function is
//   created as quick_admin, and the operator's session is itself again afterwards; a producer's
//   login is refused before anything runs.
TEST(MigrateWithoutCreateroleTest, MigrationsAskForRolesAndMembershipThenAnyMemberOfQuickAdminMigrates) {
  testing::TempDir dir;
  local_postgres::LocalCluster cluster(dir.cluster_state_dir("cluster"));
  const std::string superuser = cluster.start();
  testing::expect_cluster_inside(cluster, dir.path());
  struct StopCluster {
    local_postgres::LocalCluster& cluster;
    ~StopCluster() {
      try {
        cluster.stop();
      } catch (const std::exception& error) {
        ADD_FAILURE() << "could not stop the test's cluster: " << error.what();
      }
    }
  } stop_cluster{cluster};
  const auto as_superuser = [&](const std::string& sql) {
    pqxx::connection admin(superuser);
    pqxx::nontransaction session(admin);
    session.exec(sql);
  };
  // A login of the cluster, on `database`, with a password of its own.
  const auto login = [&](const std::string& name, const std::string& database) {
    return cluster.connection_string(database) + " user=" + name + " password=" + name + "-password passfile=/dev/null";
  };
  const auto single_value = [](pqxx::connection& conn, const std::string& sql) {
    pqxx::nontransaction session(conn);
    return session.exec1(sql)[0].as<std::string>();
  };
  const auto create_login_and_database = [&](const std::string& name, const std::string& attributes) {
    as_superuser("CREATE ROLE " + name + " LOGIN " + attributes + " PASSWORD '" + name + "-password'");
    as_superuser("CREATE DATABASE " + name + "_db OWNER " + name);
  };

  create_login_and_database("installer", "NOCREATEROLE");
  pqxx::connection installer(login("installer", "installer_db"));
  try {
    migrate(installer);
    ADD_FAILURE() << "migrated without the roles";
  } catch (const std::exception& error) {
    EXPECT_THAT(error.what(), HasSubstr("role quick_producer does not exist and installer may not create roles"));
  }
  for (const char* role : {"quick_producer", "quick_consumer", "quick_admin"}) {
    as_superuser(std::string("CREATE ROLE ") + role + " NOLOGIN");
  }
  try {
    migrate(installer);
    ADD_FAILURE() << "handed the schema to quick_admin without being a member of it";
  } catch (const std::exception& error) {
    EXPECT_THAT(error.what(), HasSubstr("installer is not a member of quick_admin, which is to own schema quick"));
    EXPECT_THAT(error.what(), HasSubstr("hint: As an administrator: GRANT quick_admin TO installer"));
  }
  EXPECT_EQ(applied_schema_version(installer), 14) << "0015 must roll back whole";
  const auto psql_definitions = testing::run_command(
      "cd " + testing::shell_quote(testing::source_dir().string()) + " && cat sql/functions/*.sql sql/views.sql | " +
      testing::shell_quote(testing::psql_binary()) + " -X -q -v ON_ERROR_STOP=1 -o /dev/null " +
      testing::shell_quote(login("installer", "installer_db")));
  ASSERT_EQ(psql_definitions.exit_code, 0) << psql_definitions.output;
  EXPECT_EQ(single_value(installer,
                         "SELECT pg_get_userbyid(relowner) FROM pg_class WHERE oid = 'quick.queue_summary'::regclass"),
            "installer");
  as_superuser("GRANT quick_admin TO installer");
  migrate(installer);
  EXPECT_EQ(applied_schema_version(installer), latest_schema_version());
  EXPECT_EQ(testing::objects_of_schema_quick_not_owned_by_quick_admin(login("installer", "installer_db")), "");
  EXPECT_EQ(single_value(installer, "SELECT current_user"), "installer");
  EXPECT_EQ(single_value(installer,
                         "SELECT has_function_privilege('quick_producer', "
                         "'quick.enqueue(text,text,jsonb,interval,integer,text)', 'EXECUTE')::text"),
            "true");

  create_login_and_database("creator", "CREATEROLE");
  {
    pqxx::connection creator(login("creator", "creator_db"));
    migrate(creator);
    EXPECT_EQ(testing::objects_of_schema_quick_not_owned_by_quick_admin(login("creator", "creator_db")), "");
    EXPECT_EQ(single_value(creator, "SELECT pg_has_role('creator', 'quick_admin', 'MEMBER')::text"), "true");
  }

  // Installed by a login that may not hand the schema over; a superuser does, and the login
  // keeps its access. Before that, a login that is neither the owner nor a superuser is refused.
  as_superuser("CREATE ROLE web LOGIN PASSWORD 'web-password' IN ROLE quick_producer");
  create_login_and_database("app_owner", "NOCREATEROLE");
  {
    pqxx::connection app_owner(login("app_owner", "app_owner_db"));
    EXPECT_THROW(migrate(app_owner), SchemaError);
    EXPECT_EQ(applied_schema_version(app_owner), 14);
    pqxx::connection web_on_app_owner_db(login("web", "app_owner_db"));
    try {
      migrate(web_on_app_owner_db);
      ADD_FAILURE() << "a login that does not own the schema migrated it";
    } catch (const SchemaError& error) {
      EXPECT_THAT(error.what(), HasSubstr("schema quick in database app_owner_db belongs to app_owner, not to web: "
                                          "migrate as app_owner or a superuser"));
    }
    pqxx::connection database_superuser(cluster.connection_string("app_owner_db"));
    migrate(database_superuser);
    EXPECT_EQ(testing::objects_of_schema_quick_not_owned_by_quick_admin(cluster.connection_string("app_owner_db")), "");
    EXPECT_EQ(single_value(app_owner, "SELECT count(*)::text FROM quick.items"), "0");
    EXPECT_NO_THROW(migrate(app_owner));
  }

  // An operator: a member of quick_admin and nothing else. With no migration pending, a function
  // file's function is missing: migrate creates it as quick_admin (the session's switch to the
  // owner, not migration 0015's SET ROLE, makes it so).
  as_superuser("CREATE ROLE operator LOGIN NOCREATEROLE PASSWORD 'operator-password' IN ROLE quick_admin");
  {
    pqxx::connection database_superuser(cluster.connection_string("installer_db"));
    pqxx::nontransaction session(database_superuser);
    session.exec("DROP FUNCTION quick.tenant_database(text)");
  }
  pqxx::connection web(login("web", "installer_db"));
  try {
    migrate(web);
    ADD_FAILURE() << "a producer's login migrated";
  } catch (const std::exception& error) {
    EXPECT_THAT(error.what(), HasSubstr("schema quick in database installer_db belongs to quick_admin, and web is not "
                                        "a member of it"));
  }
  EXPECT_EQ(single_value(web, "SELECT (to_regprocedure('quick.tenant_database(text)') IS NULL)::text"), "true")
      << "the refused migrate must not have run anything";
  pqxx::connection operator_login(login("operator", "installer_db"));
  const auto report = migrate(operator_login);
  EXPECT_TRUE(report.applied.empty());
  EXPECT_EQ(single_value(operator_login, "SELECT current_user"), "operator");
  EXPECT_EQ(testing::objects_of_schema_quick_not_owned_by_quick_admin(login("operator", "installer_db")), "");
  EXPECT_EQ(single_value(operator_login,
                         "SELECT (has_function_privilege('quick_producer', 'quick.tenant_database(text)', 'EXECUTE') "
                         "AND NOT has_function_privilege('public', 'quick.tenant_database(text)', 'EXECUTE'))::text"),
            "true");
  EXPECT_NO_THROW(require_current_schema(operator_login));
}

}  // namespace
}  // namespace quick
