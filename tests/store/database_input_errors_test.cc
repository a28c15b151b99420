// Bad input that only the database finds (store/sql_errors.h): it arrives as InvalidArgument
// naming what was wrong, and says that the caller's transaction is aborted (Postgres aborts it,
// as for any error), unlike the bad input the C++ API refuses before any statement runs.
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "quick/quick.h"
#include "support/items.h"
#include "support/test_database.h"

namespace quick::testing {
namespace {

using ::testing::HasSubstr;

// A JSON number Postgres's numeric cannot hold (at most 16383 digits after the decimal point):
// jsonb refuses it with 22003, "value overflows numeric format". A double takes it for 0.
const char* const kUnstorableNumber = R"({"n": 1e-20000})";

class DatabaseInputErrorsTest : public DatabaseTest {
 protected:
  // Expects `operation` to throw InvalidArgument naming the payload.
  template <typename Operation>
  void expect_payload_rejected(Operation&& operation) {
    try {
      operation();
      ADD_FAILURE() << "expected quick::InvalidArgument";
    } catch (const InvalidArgument& error) {
      EXPECT_THAT(error.what(), HasSubstr("payload"));
      EXPECT_THAT(error.what(), HasSubstr("value overflows numeric format"));
      EXPECT_TRUE(error.transaction_aborted());
    }
  }
};

TEST_F(DatabaseInputErrorsTest, AJsonNumberPostgresCannotStoreIsAnInvalidPayload) {
  EXPECT_NO_THROW(validate_new_item(make_item("acme", "job", kUnstorableNumber)));
  for (const bool new_zone : {true, false}) {
    SCOPED_TRACE(new_zone ? "a new zone" : "an existing zone");
    auto conn = connect();
    if (!new_zone) enqueue(*conn, make_item("acme"));
    const auto bad = make_item("acme", "job", kUnstorableNumber);
    expect_payload_rejected([&] {
      pqxx::work txn(*conn);
      enqueue_in(txn, bad);
    });
    expect_payload_rejected([&] {
      pqxx::work txn(*conn);
      enqueue_batch_in(txn, {make_item("acme"), bad});
    });
    expect_payload_rejected([&] { enqueue(*conn, bad); });
    expect_payload_rejected([&] { enqueue_batch(*conn, {make_item("acme"), bad}); });
    EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.items"), new_zone ? 0 : 1);
    query("DELETE FROM quick.items");
  }
}

// A delay too long for an interval (here 584,000 years, whose microseconds overflow a 64-bit
// integer) is refused as too long, never wrapped around to a short one: it was sent as 384
// microseconds, and the item vested at once.
TEST_F(DatabaseInputErrorsTest, ADurationTooLongForAnIntervalIsRefusedNotWrapped) {
  const auto forever = std::chrono::milliseconds(18446744073709552LL);
  auto conn = connect();
  for (const bool new_zone : {true, false}) {
    SCOPED_TRACE(new_zone ? "a new zone" : "an existing zone");
    if (!new_zone) enqueue(*conn, make_item("acme"));
    EXPECT_THROW(
        {
          pqxx::work txn(*conn);
          enqueue_in(txn, make_item("acme", "job", "{}", forever));
        },
        InvalidArgument);
    EXPECT_THROW(enqueue(*conn, make_item("acme", "job", "{}", forever)), InvalidArgument);
    EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.items"), new_zone ? 0 : 1);
  }
}

// The two kinds of InvalidArgument: refused before anything was sent, the transaction usable;
// refused by the database, the transaction aborted with the caller's earlier work in it.
TEST_F(DatabaseInputErrorsTest, InvalidArgumentSaysWhetherTheTransactionIsAborted) {
  query("UPDATE quick.limits SET max_vesting_delay = '1 hour'");
  auto conn = connect();
  {
    pqxx::work txn(*conn);
    enqueue_in(txn, make_item("kept"));
    try {
      enqueue_in(txn, make_item("acme", "job", "{}", std::chrono::hours(-1)));
      ADD_FAILURE() << "expected quick::InvalidArgument";
    } catch (const InvalidArgument& error) {
      EXPECT_THAT(error.what(), HasSubstr("vesting_delay"));
      EXPECT_FALSE(error.transaction_aborted());
    }
    txn.commit();
  }
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.items WHERE tenant = 'kept'"), 1);
  {
    pqxx::work txn(*conn);
    enqueue_in(txn, make_item("lost"));
    try {
      enqueue_in(txn, make_item("acme", "job", "{}", std::chrono::hours(2)));
      ADD_FAILURE() << "expected quick::InvalidArgument";
    } catch (const InvalidArgument& error) {
      EXPECT_THAT(error.what(), HasSubstr("vesting_delay"));
      EXPECT_TRUE(error.transaction_aborted());
    }
    // What the header warns of: the commit rolls back (libpqxx 6.4 does not say so).
    try {
      txn.commit();
    } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch): either way, nothing is kept
    }
  }
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.items WHERE tenant = 'lost'"), 0);
}

}  // namespace
}  // namespace quick::testing
