// One pointer per zone without a unique index on quick.pointers (docs/protocol.md#pointer-slots):
// the triggers of sql/functions/pointer_slots.sql make an INSERT into quick.pointers behave as the
// old INSERT ... ON CONFLICT (tenant) DO NOTHING, and keep quick.pointer_slots equal to the set of
// tenants with a pointer whoever writes the table. Two sessions are stepped by hand; a session
// that would wait for the other's row lock fails with 55P03 (lock_timeout), so "waits" is an
// outcome, not a timing.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "support/test_database.h"

namespace quick {
namespace {

// What one statement did: rows affected, or the SQLSTATE it failed with.
struct Outcome {
  std::string sqlstate;  // empty: it succeeded
  int rows = 0;
};

class PointerSlotsTest : public testing::DatabaseTest {
 protected:
  // A session outside any implicit transaction: the test sends BEGIN and COMMIT itself.
  std::unique_ptr<pqxx::connection> session() {
    auto conn = connect();
    pqxx::nontransaction setup(*conn);
    setup.exec("SET lock_timeout = '200ms'");
    return conn;
  }
  static Outcome run(pqxx::connection& conn, const std::string& sql) {
    pqxx::nontransaction txn(conn);
    try {
      const auto result = txn.exec(sql);
      return Outcome{"", static_cast<int>(result.affected_rows())};
    } catch (const pqxx::serialization_failure&) {  // libpqxx 6.4: not a pqxx::sql_error
      return Outcome{"40001", 0};
    } catch (const pqxx::sql_error& error) {
      return Outcome{error.sqlstate(), 0};
    }
  }
  static std::string insert_pointer(const std::string& tenant) {
    return "INSERT INTO quick.pointers (tenant, vesting_time, last_active_time) VALUES ('" + tenant +
           "', statement_timestamp(), statement_timestamp())";
  }
  long long count(const std::string& table, const std::string& tenant) {
    return query_value<long long>("SELECT count(*) FROM " + table + " WHERE tenant = '" + tenant + "'");
  }
  // Tenants in one table and not in the other, either way.
  long long mismatches() {
    return query_value<long long>(
        "SELECT count(*) FROM (SELECT tenant FROM quick.pointers EXCEPT SELECT tenant FROM quick.pointer_slots "
        "UNION ALL SELECT tenant FROM quick.pointer_slots EXCEPT SELECT tenant FROM quick.pointers) x");
  }
};

TEST_F(PointerSlotsTest, ASecondPointerForATenantIsNotInserted) {
  query(insert_pointer("t"));
  EXPECT_EQ(query(insert_pointer("t")).affected_rows(), 0u);
  EXPECT_EQ(count("quick.pointers", "t"), 1);
  EXPECT_EQ(count("quick.pointer_slots", "t"), 1);
}

TEST_F(PointerSlotsTest, ACreatorWaitsForAConcurrentCreatorAndThenInsertsNothing) {
  auto first = session();
  auto second = session();
  ASSERT_EQ(run(*first, "BEGIN").sqlstate, "");
  ASSERT_EQ(run(*first, insert_pointer("t")).rows, 1);
  EXPECT_EQ(run(*second, insert_pointer("t")).sqlstate, "55P03") << "must wait for the first creator";
  ASSERT_EQ(run(*first, "COMMIT").sqlstate, "");
  const auto after = run(*second, insert_pointer("t"));
  EXPECT_EQ(after.sqlstate, "");
  EXPECT_EQ(after.rows, 0);
  EXPECT_EQ(count("quick.pointers", "t"), 1);
}

TEST_F(PointerSlotsTest, ACreatorWhoseFirstCreatorRolledBackInsertsThePointer) {
  auto first = session();
  auto second = session();
  ASSERT_EQ(run(*first, "BEGIN").sqlstate, "");
  ASSERT_EQ(run(*first, insert_pointer("t")).rows, 1);
  ASSERT_EQ(run(*first, "ROLLBACK").sqlstate, "");
  EXPECT_EQ(run(*second, insert_pointer("t")).rows, 1);
  EXPECT_EQ(count("quick.pointers", "t"), 1);
  EXPECT_EQ(mismatches(), 0);
}

TEST_F(PointerSlotsTest, ARepeatableReadCreatorThatCannotSeeTheOtherPointerFailsWithASerializationFailure) {
  auto reader = session();
  ASSERT_EQ(run(*reader, "BEGIN ISOLATION LEVEL REPEATABLE READ").sqlstate, "");
  ASSERT_EQ(run(*reader, "SELECT count(*) FROM quick.pointers").sqlstate, "");  // takes the snapshot
  query(insert_pointer("t"));
  EXPECT_EQ(run(*reader, insert_pointer("t")).sqlstate, "40001");
  run(*reader, "ROLLBACK");
  EXPECT_EQ(count("quick.pointers", "t"), 1);
}

TEST_F(PointerSlotsTest, ACreatorWaitsForADeletionAndThenInsertsTheNewPointer) {
  query(insert_pointer("t"));
  auto collector = session();
  auto creator = session();
  ASSERT_EQ(run(*collector, "BEGIN").sqlstate, "");
  ASSERT_EQ(run(*collector, "DELETE FROM quick.pointers WHERE tenant = 't'").rows, 1);
  EXPECT_EQ(run(*creator, insert_pointer("t")).sqlstate, "55P03") << "must wait for the deletion";
  ASSERT_EQ(run(*collector, "COMMIT").sqlstate, "");
  EXPECT_EQ(run(*creator, insert_pointer("t")).rows, 1);
  EXPECT_EQ(count("quick.pointers", "t"), 1);
  EXPECT_EQ(mismatches(), 0);
}

TEST_F(PointerSlotsTest, DeletingOrTruncatingFreesTheSlots) {
  query(insert_pointer("a"));
  query(insert_pointer("b"));
  query("DELETE FROM quick.pointers WHERE tenant = 'a'");
  EXPECT_EQ(count("quick.pointer_slots", "a"), 0);
  EXPECT_EQ(count("quick.pointer_slots", "b"), 1);
  query("TRUNCATE quick.pointers");
  EXPECT_EQ(query_value<long long>("SELECT count(*) FROM quick.pointer_slots"), 0);
  EXPECT_EQ(query(insert_pointer("b")).affected_rows(), 1u) << "a truncated tenant gets a pointer again";
}

// A deletion that bypassed the triggers (the upgrade to migration 0011 runs the older functions
// for a moment; session_replication_role = replica) leaves the slot behind. Skipping every later
// insert of the tenant's pointer would make quick.enqueue's loop spin; the slot is taken over.
TEST_F(PointerSlotsTest, ASlotWhosePointerIsGoneIsTakenOverByTheNextInsert) {
  query("SELECT quick.enqueue('t', 'job')");
  query("ALTER TABLE quick.pointers DISABLE TRIGGER free_pointer_slot");
  query("DELETE FROM quick.pointers WHERE tenant = 't'");
  query("ALTER TABLE quick.pointers ENABLE TRIGGER free_pointer_slot");
  ASSERT_EQ(count("quick.pointer_slots", "t"), 1) << "the slot was left behind";
  query("SET statement_timeout = '10s'; SELECT quick.enqueue('t', 'job')");
  EXPECT_EQ(count("quick.pointers", "t"), 1);
  EXPECT_EQ(mismatches(), 0);
}

// Two creators meeting one stale slot: the takeover locks the slot it decided on and deletes that
// one only, so a second creator waits for it instead of taking over the slot the first put in its
// place (which would leave the tenant two pointers), and then finds the first one's pointer.
TEST_F(PointerSlotsTest, ASecondCreatorWaitsForATakeoverInProgressAndThenUsesItsPointer) {
  query("SELECT quick.enqueue('t', 'job')");
  query("ALTER TABLE quick.pointers DISABLE TRIGGER free_pointer_slot");
  query("DELETE FROM quick.pointers WHERE tenant = 't'");
  query("ALTER TABLE quick.pointers ENABLE TRIGGER free_pointer_slot");
  query("DELETE FROM quick.items WHERE tenant = 't'");
  ASSERT_EQ(count("quick.pointer_slots", "t"), 1) << "the slot was left behind";

  auto first = session();
  auto second = session();
  ASSERT_EQ(run(*first, "BEGIN").sqlstate, "");
  ASSERT_EQ(run(*first, "SELECT quick.enqueue('t', 'first')").sqlstate, "") << "the takeover";
  EXPECT_EQ(run(*second, "SELECT quick.enqueue('t', 'second')").sqlstate, "55P03") << "waits for the takeover";
  ASSERT_EQ(run(*first, "COMMIT").sqlstate, "");
  EXPECT_EQ(run(*second, "SELECT quick.enqueue('t', 'second')").sqlstate, "");

  EXPECT_EQ(count("quick.pointers", "t"), 1);
  EXPECT_EQ(count("quick.items", "t"), 2);
  EXPECT_EQ(mismatches(), 0);
}

TEST_F(PointerSlotsTest, APointerNeverChangesTenant) {
  query(insert_pointer("a"));
  EXPECT_THROW(query("UPDATE quick.pointers SET tenant = 'b' WHERE tenant = 'a'"), pqxx::sql_error);
  EXPECT_EQ(count("quick.pointers", "a"), 1);
  EXPECT_EQ(mismatches(), 0);
}

TEST_F(PointerSlotsTest, TheSlotsFollowThePointersThroughEnqueuesVisitsAndCollection) {
  query("SELECT quick.enqueue('t' || g, 'job') FROM generate_series(1, 50) g");
  EXPECT_EQ(query_value<long long>("SELECT count(*) FROM quick.pointer_slots"), 50);
  // Every zone emptied, then visited: its pointer is collected at once (min_inactive 0).
  query("DELETE FROM quick.items");
  query(
      "SELECT count(*) FROM quick.visit_zones(ARRAY(SELECT 't' || g FROM generate_series(1, 50) g), 10, "
      "'30 s', '0 s')");
  EXPECT_EQ(query_value<long long>("SELECT count(*) FROM quick.pointers"), 0) << "the empty zones are collected";
  EXPECT_EQ(mismatches(), 0);
  query("SELECT quick.enqueue('t' || g, 'job') FROM generate_series(1, 50) g");
  EXPECT_EQ(query_value<long long>("SELECT count(*) FROM quick.pointers"), 50);
  EXPECT_EQ(mismatches(), 0);
}

}  // namespace
}  // namespace quick
