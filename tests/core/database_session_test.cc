// core::DatabaseSession: every consumer connection is set up the same way whatever the server's
// defaults: READ COMMITTED, named, with the liveness settings (keepalives, tcp_user_timeout) and
// the timeouts its thread asks for.
#include <chrono>
#include <string>

#include <gtest/gtest.h>

#include "core/database_session.h"
#include "support/test_database.h"

namespace quick::core {
namespace {

using namespace std::chrono_literals;

class DatabaseSessionTest : public testing::DatabaseTest {};

std::string show(pqxx::connection& conn, const std::string& setting) {
  pqxx::nontransaction session(conn);
  return session.exec("SHOW " + setting).at(0).at(0).as<std::string>();
}

TEST_F(DatabaseSessionTest, EveryConnectionGetsTheConsumersSettings) {
  DatabaseSession session(url(), "quick/test/writer", 2s, 1s);
  auto& conn = session.connection();
  EXPECT_EQ(show(conn, "transaction_isolation"), "read committed");
  EXPECT_EQ(show(conn, "application_name"), "quick/test/writer");
  EXPECT_EQ(show(conn, "statement_timeout"), "2s");
  EXPECT_EQ(show(conn, "lock_timeout"), "1s");
  pqxx::nontransaction probe(conn);
  const bool tcp = !probe.exec("SELECT inet_server_addr()").at(0).at(0).is_null();
  probe.commit();
  if (tcp) {  // over a Unix socket Postgres ignores the tcp_* settings and shows 0
    EXPECT_EQ(show(conn, "tcp_user_timeout"), "30000");  // milliseconds
    EXPECT_EQ(show(conn, "tcp_keepalives_idle"), "10");
  }
}

TEST_F(DatabaseSessionTest, WithoutTimeoutsTheServersDefaultsStand) {
  DatabaseSession session(url(), "quick/test/scanner");
  auto& conn = session.connection();
  EXPECT_EQ(show(conn, "statement_timeout"), "0");
  EXPECT_EQ(show(conn, "lock_timeout"), "0");
}

}  // namespace
}  // namespace quick::core
