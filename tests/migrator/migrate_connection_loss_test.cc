// migrate() whose connection is lost mid-run: the libpqxx exception arrives unchanged
// (migrate.h), not as a SchemaError saying the work "was rolled back", which a connection lost
// during COMMIT cannot know. The migrating session waits for a lock this test holds, and is
// terminated while it waits (pg_terminate_backend), in a migration and in the definitions.
#include <future>
#include <string>

#include <gtest/gtest.h>

#include "quick/errors.h"
#include "quick/migrate.h"
#include "support/test_database.h"

namespace quick::testing {
namespace {

class MigrateConnectionLossTest : public DatabaseTest {
 protected:
  // Runs migrate() on `url` while `blocker` (an open transaction) holds what it will wait for;
  // terminates the migrating session once it waits for a lock. Rethrows what migrate() threw.
  void migrate_terminated_while_waiting(const std::string& url) {
    pqxx::connection conn(url);
    const int pid = conn.backendpid();
    auto terminator = std::async(std::launch::async, [&] {
      pqxx::connection admin(url);
      pqxx::nontransaction session(admin);
      for (int attempt = 0; attempt < 300; ++attempt) {
        if (session.exec_params("SELECT 1 FROM pg_catalog.pg_locks WHERE pid = $1 AND NOT granted", pid).size() == 1) {
          return session.exec_params("SELECT pg_catalog.pg_terminate_backend($1)", pid).at(0).at(0).as<bool>();
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      return false;
    });
    try {
      migrate(conn);
    } catch (...) {
      EXPECT_TRUE(terminator.get()) << "the migrating session never waited for the lock";
      throw;
    }
    ADD_FAILURE() << "migrate() returned";
    terminator.get();
  }
};

TEST_F(MigrateConnectionLossTest, AConnectionLostInAMigrationArrivesAsLibpqxxException) {
  EmptyDatabase empty;
  pqxx::connection holder(empty.url());
  pqxx::work blocker(holder);
  blocker.exec("CREATE SCHEMA quick");  // migration 0004's CREATE SCHEMA IF NOT EXISTS waits for it
  EXPECT_THROW(migrate_terminated_while_waiting(empty.url()), pqxx::broken_connection);
  blocker.abort();
  pqxx::connection conn(empty.url());
  EXPECT_EQ(applied_schema_version(conn), 0);
}

TEST_F(MigrateConnectionLossTest, AConnectionLostInTheDefinitionsArrivesAsLibpqxxException) {
  auto holder = connect();
  pqxx::work blocker(*holder);
  blocker.exec("SELECT * FROM quick.zone_depth LIMIT 0");  // CREATE OR REPLACE VIEW waits for it
  EXPECT_THROW(migrate_terminated_while_waiting(url()), pqxx::broken_connection);
}

}  // namespace
}  // namespace quick::testing
