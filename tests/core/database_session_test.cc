// core::DatabaseSession: every consumer connection is set up the same way whatever the server's
// defaults: READ COMMITTED, named, with the liveness settings (keepalives, tcp_user_timeout) and
// the timeouts its thread asks for. A session that connects in the background never holds its
// thread for a server that does not answer.
#include <chrono>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "core/database_session.h"
#include "support/silent_listener.h"
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

TEST_F(DatabaseSessionTest, InTheBackgroundAServerThatAnswersIsConnectedOnTheFirstCall) {
  DatabaseSession session(url(), "quick/test/scanner", std::nullopt, 1s, DatabaseSession::Connecting::kInBackground);
  auto& conn = session.connection();
  EXPECT_EQ(show(conn, "application_name"), "quick/test/scanner");
  EXPECT_EQ(show(conn, "lock_timeout"), "1s");
  EXPECT_EQ(session.connects(), 1);
}

// A server that takes the connection and never answers: each call gives up after a short wait
// (instead of the 5 s connect_timeout), one attempt goes on meanwhile, and when it fails the next
// call reports its error.
TEST_F(DatabaseSessionTest, InTheBackgroundAServerThatNeverAnswersCostsEachCallAShortWait) {
  testing::SilentListener silent;
  DatabaseSession session(silent.url() + " connect_timeout=2", "quick/test/scanner", std::nullopt, std::nullopt,
                          DatabaseSession::Connecting::kInBackground);
  const auto began = std::chrono::steady_clock::now();
  int no_answer_yet = 0;
  std::string own_error;  // the attempt's, once its connect_timeout has passed
  while (own_error.empty() && std::chrono::steady_clock::now() - began < 8s) {
    const auto call = std::chrono::steady_clock::now();
    try {
      session.connection();
      FAIL() << "connected to a server that never answers";
    } catch (const pqxx::broken_connection& error) {
      const std::string what = error.what();
      if (what.find("no answer from the database server yet") != std::string::npos) {
        ++no_answer_yet;
      } else {
        own_error = what;
      }
    }
    EXPECT_LT(std::chrono::steady_clock::now() - call, 1s) << "a call waited for the connect_timeout";
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_GT(no_answer_yet, 3);
  EXPECT_FALSE(own_error.empty()) << "the attempt's own error was never reported";
  EXPECT_FALSE(session.connected());
}

}  // namespace
}  // namespace quick::core
