// Unit tests (no database) for store::classify_error: libpqxx 6.4 exception types and SQLSTATEs.
#include "store/error_classification.h"

#include <gtest/gtest.h>

#include <pqxx/pqxx>

#include <stdexcept>
#include <string>

namespace quick::store {
namespace {

ErrorClassification of_state(const char* sqlstate, const std::string& message = "ERROR:  boom\nDETAIL: x") {
  return classify_error(pqxx::sql_error(message, "SELECT 1", sqlstate));
}

TEST(ClassifyError, BrokenConnectionIsConnectionLost) {
  const auto c = classify_error(pqxx::broken_connection("server closed the connection unexpectedly"));
  EXPECT_EQ(c.kind, ErrorKind::kConnectionLost);
  EXPECT_TRUE(c.connection_unusable());
  EXPECT_EQ(c.message, "server closed the connection unexpectedly");
}

// The message is logged by every loop and kept as an item's last_error: never with a password.
TEST(ClassifyError, MessageHidesPasswords) {
  const auto c = classify_error(
      pqxx::broken_connection("could not reach postgresql://app:s3cret@db.example/app, nor password=other-secret"));
  EXPECT_EQ(c.message, "could not reach postgresql://app:***@db.example/app, nor password=***");
}

TEST(ClassifyError, InDoubtIsInDoubt) {
  const auto c = classify_error(pqxx::in_doubt_error("lost connection during commit"));
  EXPECT_EQ(c.kind, ErrorKind::kInDoubt);
  EXPECT_TRUE(c.connection_unusable());
}

TEST(ClassifyError, TransactionRollbacksAreTransient) {
  EXPECT_EQ(classify_error(pqxx::serialization_failure("could not serialize access")).kind, ErrorKind::kTransient);
  EXPECT_EQ(classify_error(pqxx::deadlock_detected("deadlock detected")).kind, ErrorKind::kTransient);
  EXPECT_EQ(classify_error(pqxx::transaction_rollback("rolled back")).kind, ErrorKind::kTransient);
  EXPECT_FALSE(classify_error(pqxx::serialization_failure("x")).connection_unusable());
}

TEST(ClassifyError, SqlStates) {
  EXPECT_EQ(of_state("40001").kind, ErrorKind::kTransient);       // serialization_failure
  EXPECT_EQ(of_state("40P01").kind, ErrorKind::kTransient);       // deadlock_detected
  EXPECT_EQ(of_state("55P03").kind, ErrorKind::kTransient);       // lock_not_available
  EXPECT_EQ(of_state("55006").kind, ErrorKind::kTransient);       // object_in_use
  EXPECT_EQ(of_state("57014").kind, ErrorKind::kTransient);       // query_canceled
  EXPECT_EQ(of_state("53300").kind, ErrorKind::kTransient);       // too_many_connections
  EXPECT_EQ(of_state("53200").kind, ErrorKind::kTransient);       // out_of_memory
  EXPECT_EQ(of_state("57P01").kind, ErrorKind::kConnectionLost);  // admin_shutdown
  EXPECT_EQ(of_state("57P02").kind, ErrorKind::kConnectionLost);  // crash_shutdown
  EXPECT_EQ(of_state("57P03").kind, ErrorKind::kConnectionLost);  // cannot_connect_now
  EXPECT_EQ(of_state("08006").kind, ErrorKind::kConnectionLost);  // connection_failure
  EXPECT_EQ(of_state("08003").kind, ErrorKind::kConnectionLost);  // connection_does_not_exist
  EXPECT_EQ(of_state("42P01").kind, ErrorKind::kPermanent);       // undefined_table
  EXPECT_EQ(of_state("42601").kind, ErrorKind::kPermanent);       // syntax_error
  EXPECT_EQ(of_state("23505").kind, ErrorKind::kPermanent);       // unique_violation
  EXPECT_EQ(of_state("22P02").kind, ErrorKind::kPermanent);       // invalid_text_representation
  EXPECT_EQ(of_state("XX000").kind, ErrorKind::kTransient);       // internal_error
}

TEST(ClassifyError, SqlStateAndPrimaryMessageAreReported) {
  const auto c = of_state("42P01", "ERROR:  relation \"quick.items\" does not exist\nLINE 1: ...");
  EXPECT_EQ(c.sqlstate, "42P01");
  EXPECT_EQ(c.message, "relation \"quick.items\" does not exist");
  EXPECT_FALSE(c.connection_unusable());
  EXPECT_EQ(of_state("57P01", "FATAL:  terminating connection due to administrator command").message,
            "terminating connection due to administrator command");
}

TEST(ClassifyError, SqlErrorWithoutStateIsPermanent) {
  const auto c = classify_error(pqxx::sql_error("ERROR:  something", "SELECT 1"));
  EXPECT_EQ(c.kind, ErrorKind::kPermanent);
  EXPECT_EQ(c.sqlstate, "");
  EXPECT_EQ(of_state("4000").kind, ErrorKind::kPermanent);  // malformed state
}

TEST(ClassifyError, SqlErrorSubclassesUseTheirState) {
  EXPECT_EQ(classify_error(pqxx::unique_violation("dup", "INSERT", "23505")).kind, ErrorKind::kPermanent);
  EXPECT_EQ(classify_error(pqxx::undefined_table("no table", "SELECT", "42P01")).kind, ErrorKind::kPermanent);
  EXPECT_EQ(classify_error(pqxx::insufficient_resources("oom", "SELECT", "53200")).kind, ErrorKind::kTransient);
}

TEST(ClassifyError, NonDatabaseExceptionsArePermanent) {
  EXPECT_EQ(classify_error(std::runtime_error("oops")).kind, ErrorKind::kPermanent);
  EXPECT_EQ(classify_error(pqxx::usage_error("misuse")).kind, ErrorKind::kPermanent);
  EXPECT_EQ(classify_error(std::runtime_error("oops")).message, "oops");
}

TEST(ClassifyCurrentException, ClassifiesTheExceptionInFlight) {
  try {
    throw pqxx::sql_error("ERROR:  canceling statement due to statement timeout", "SELECT", "57014");
  } catch (...) {
    const auto c = classify_current_exception();
    EXPECT_EQ(c.kind, ErrorKind::kTransient);
    EXPECT_EQ(c.sqlstate, "57014");
  }
  try {
    throw pqxx::broken_connection("gone");
  } catch (...) {
    EXPECT_EQ(classify_current_exception().kind, ErrorKind::kConnectionLost);
  }
  try {
    throw 42;
  } catch (...) {
    const auto c = classify_current_exception();
    EXPECT_EQ(c.kind, ErrorKind::kPermanent);
    EXPECT_EQ(c.message, "unknown exception");
  }
}

TEST(ErrorKind, ToString) {
  EXPECT_STREQ(to_string(ErrorKind::kConnectionLost), "connection lost");
  EXPECT_STREQ(to_string(ErrorKind::kInDoubt), "commit in doubt");
  EXPECT_STREQ(to_string(ErrorKind::kTransient), "transient");
  EXPECT_STREQ(to_string(ErrorKind::kPermanent), "permanent");
}

}  // namespace
}  // namespace quick::store
