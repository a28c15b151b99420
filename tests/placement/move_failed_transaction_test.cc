// A move whose transaction on one side had already failed when it was prepared (the caller's
// application-rows callback caught an SQL error and carried on): Postgres answers PREPARE
// TRANSACTION with a rollback and no error, so the move must notice, roll back both sides and
// throw, before it decides anything. And a prepared transaction that is gone when the mover comes
// to commit it leaves the move in doubt, for recovery, instead of committing the other side.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "quick/placement.h"
#include "quick/producer.h"
#include "support/items.h"
#include "support/placement_fixture.h"

namespace quick::testing {
namespace {

class MoveFailedTransactionTest : public TwoDatabaseTest {
 protected:
  void enqueue_items(const std::string& tenant, int count) {
    pqxx::connection conn(url_of("one"));
    for (int i = 0; i < count; ++i) enqueue(conn, make_item(tenant, "job", "{\"i\": " + std::to_string(i) + "}"));
  }
  std::string holder_of(const std::string& tenant) {
    pqxx::connection conn(url_of("one"));
    pqxx::nontransaction session(conn);
    return session.exec_params("SELECT quick.tenant_database($1)", tenant).at(0).at(0).as<std::string>();
  }
};

// An SQL error the callback swallows: libpqxx 6.4 leaves the transaction object active, the
// session's transaction aborted.
void swallow_an_sql_error(pqxx::work& txn) {
  try {
    txn.exec_params("SELECT 1/$1::int", 0);
  } catch (const pqxx::sql_error&) {  // NOLINT(bugprone-empty-catch): what the test is about
  }
}

TEST_F(MoveFailedTransactionTest, AFailedTransactionOnEitherSideFailsTheMoveAndLeavesTheItemsAtTheSource) {
  struct Case {
    const char* side;
    bool destination;
  };
  for (const auto& c : {Case{"destination", true}, Case{"source", false}}) {
    SCOPED_TRACE(c.side);
    const std::string tenant = std::string("acme-") + c.side;
    enqueue_items(tenant, 5);
    ASSERT_EQ(items_of("one", tenant), 5);
    try {
      move_tenant(config_, tenant, "two", {}, [&](pqxx::work& source, pqxx::work& destination) {
        swallow_an_sql_error(c.destination ? destination : source);
      });
      ADD_FAILURE() << "the move reported success";
    } catch (const Error& error) {
      EXPECT_THAT(error.what(), ::testing::HasSubstr(std::string("the ") + c.side +
                                                     "'s transaction had failed before it was prepared"));
    }
    EXPECT_EQ(items_of("one", tenant), 5);
    EXPECT_EQ(items_of("two", tenant), 0);
    EXPECT_EQ(prepared_moves("one") + prepared_moves("two"), 0);
    EXPECT_EQ(holder_of(tenant), "one");
    EXPECT_EQ(value_in("one", "SELECT count(*) FROM quick.tenant_moves WHERE decision = 'commit' AND tenant = '" +
                                  tenant + "'"),
              0);
    // Nothing is left for recovery, and the move succeeds when run again.
    EXPECT_TRUE(resolve_moves(config_).empty());
    EXPECT_EQ(move_tenant(config_, tenant, "two").items, 5);
    EXPECT_EQ(items_of("one", tenant), 0);
    EXPECT_EQ(items_of("two", tenant), 5);
  }
}

// After the decision, a prepared transaction that COMMIT PREPARED no longer finds (another
// process ended it) leaves the move in doubt: the mover stops there, and recovery, following the
// decision, commits the rest.
TEST_F(MoveFailedTransactionTest, APreparedTransactionGoneAtTheCommitLeavesTheMoveInDoubt) {
  enqueue_items("acme", 5);
  std::string move_id;
  auto end_destination_elsewhere = [&](MoveStep step) {
    if (step != MoveStep::kDecided) return;
    pqxx::connection conn(url_of("two"));
    pqxx::nontransaction session(conn);
    const auto gid = session.exec("SELECT gid FROM pg_prepared_xacts WHERE gid LIKE 'quick_move:%'").at(0).at(0);
    move_id = gid.as<std::string>().substr(std::string("quick_move:").size(), 36);
    session.exec("COMMIT PREPARED " + session.quote(gid.as<std::string>()));
  };
  EXPECT_THROW(move_tenant(config_, "acme", "two", {}, {}, end_destination_elsewhere), MoveInDoubt);
  EXPECT_EQ(prepared_moves("one"), 1) << "the source was committed after the destination's commit failed";
  const auto resolved = resolve_moves(config_);
  ASSERT_EQ(resolved.size(), 1u);
  EXPECT_EQ(resolved[0].move_id, move_id);
  EXPECT_EQ(resolved[0].decision, "commit");
  EXPECT_EQ(items_of("one", "acme"), 0);
  EXPECT_EQ(items_of("two", "acme"), 5);
  EXPECT_EQ(prepared_moves("one") + prepared_moves("two"), 0);
}

}  // namespace
}  // namespace quick::testing
