// Which protocol statements wait for which (docs/protocol.md; research/pg-semantics.md, table A).
//
// Every session runs with lock_timeout = 100ms, so "blocks" is an outcome, not a timing: a
// statement that waits for a row lock fails with 55P03 (lock_not_available), and one that does
// not wait never does, however slow the machine. The sessions are driven one statement at a time
// from the test's thread, so no threads are needed.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "support/enqueue_paths.h"
#include "support/interleaving.h"
#include "support/test_database.h"

namespace quick {
namespace {

using testing::EnqueuePath;
using testing::execute_step;
using testing::sql_literal;
using testing::StepOutcome;

// One connection, stepped by hand. Errors are returned as outcomes; a failed statement inside a
// transaction leaves it aborted, as in any client, until the test sends ROLLBACK.
class Session {
 public:
  explicit Session(std::unique_ptr<pqxx::connection> conn) : conn_(std::move(conn)), txn_(*conn_) {
    txn_.exec("SET client_min_messages = error");
    txn_.exec("SET lock_timeout = '100ms'");
    txn_.exec("SET statement_timeout = '20s'");
  }
  StepOutcome run(const std::string& sql) { return execute_step(txn_, sql); }
  // For statements that must succeed: the first value of the first row.
  std::optional<std::string> value(const std::string& sql) {
    const auto outcome = run(sql);
    EXPECT_TRUE(outcome.ok()) << sql << ": " << outcome.error;
    return outcome.value();
  }

 private:
  std::unique_ptr<pqxx::connection> conn_;
  pqxx::nontransaction txn_;
};

constexpr const char* kTenant = "tenant-1";

std::string enqueue_sql() {
  return std::string("SELECT item_id FROM quick.enqueue(") + sql_literal(kTenant) + ", 'job')";
}
std::string lease_sql(const std::string& duration = "30 seconds") {
  return std::string("SELECT lease_id FROM quick.lease_pointers(ARRAY[") + sql_literal(kTenant) + "], interval " +
         sql_literal(duration) + ")";
}
std::string pointer_column(const std::string& column) {
  return "SELECT " + column + "::text FROM quick.pointers WHERE tenant = " + sql_literal(kTenant);
}

void expect_not_blocked(const StepOutcome& outcome, const std::string& what) {
  EXPECT_TRUE(outcome.ok()) << what << " should neither wait nor fail, got " << outcome.sqlstate << ": "
                            << outcome.error;
}

void expect_blocked(const StepOutcome& outcome, const std::string& what) {
  EXPECT_TRUE(outcome.failed() && outcome.sqlstate == "55P03")
      << what << " should wait for the lock (55P03 under lock_timeout), got " << outcome.text();
}

class LockCompatibilityTest : public testing::DatabaseTest {
 protected:
  void SetUp() override {
    DatabaseTest::SetUp();
    if (HasFatalFailure()) return;
    enqueuer_ = std::make_unique<Session>(connect());
    consumer_ = std::make_unique<Session>(connect());
  }
  void TearDown() override {
    enqueuer_.reset();
    consumer_.reset();
    DatabaseTest::TearDown();
  }

  // A committed item, so the tenant has a vested pointer with no lease.
  void enqueue_committed() { ASSERT_TRUE(enqueuer_->run(enqueue_sql()).ok()); }

  // A committed RC enqueue into a zone whose pointer is parked later (and not leased) records a
  // pull request; returns the parked vesting time.
  std::string park_pointer_and_request_pull() {
    EXPECT_TRUE(enqueuer_->run(enqueue_sql()).ok());
    query("UPDATE quick.pointers SET vesting_time = now() + interval '1 hour' WHERE tenant = " +
          std::string(sql_literal(kTenant)));
    EXPECT_TRUE(enqueuer_->run(enqueue_sql()).ok());
    EXPECT_EQ(query_value<long>("SELECT count(*) FROM quick.pointer_pulls"), 1);
    return enqueuer_->value(pointer_column("vesting_time")).value_or("");
  }

  std::unique_ptr<Session> enqueuer_;
  std::unique_ptr<Session> consumer_;
};

// The same promises for each implementation of the enqueue protocol: the SQL function and the C++
// producer's fast paths (the pointer exists in these tests, so a fast path never falls back).
class EnqueueLockCompatibilityTest : public LockCompatibilityTest, public ::testing::WithParamInterface<EnqueuePath> {
 protected:
  // One enqueue inside the enqueuer's open transaction; it must insert its item.
  void enqueue_in_open_transaction() {
    const auto outcome = enqueuer_->run(testing::enqueue_statement(GetParam(), kTenant));
    ASSERT_TRUE(outcome.ok()) << outcome.error;
    ASSERT_EQ(outcome.row_count(), 1u) << "the enqueue inserted nothing";
  }
};

TEST_P(EnqueueLockCompatibilityTest, AnOpenEnqueueDoesNotBlockLeasingNorReleasingNorSettlingItsPointer) {
  enqueue_committed();
  ASSERT_TRUE(enqueuer_->run("BEGIN").ok());
  enqueue_in_open_transaction();  // holds FOR KEY SHARE until COMMIT

  const auto lease = consumer_->run(lease_sql());
  expect_not_blocked(lease, "quick.lease_pointers");
  ASSERT_EQ(lease.row_count(), 1u) << "the consumer must win the lease, not skip the pointer";
  const std::string lease_id = *lease.value();

  const auto release = consumer_->run(
      "UPDATE quick.pointers SET vesting_time = statement_timestamp(), lease_id = NULL "
      "WHERE tenant = " +
      std::string(sql_literal(kTenant)) + " AND lease_id = " + sql_literal(lease_id) + "::uuid RETURNING 1");
  expect_not_blocked(release, "a lease release UPDATE");
  EXPECT_EQ(release.row_count(), 1u);

  const auto second = consumer_->run(lease_sql());
  ASSERT_EQ(second.row_count(), 1u);
  const auto settle = consumer_->run("SELECT action FROM quick.settle_pointers(ARRAY[" +
                                     std::string(sql_literal(kTenant)) + "], ARRAY[" + sql_literal(*second.value()) +
                                     "::uuid], ARRAY[true], interval '0')");
  expect_not_blocked(settle, "quick.settle_pointers");
  // The GC's FOR UPDATE SKIP LOCKED skips a pointer an enqueuer holds: released, never deleted.
  EXPECT_EQ(settle.value(), std::optional<std::string>("released_busy"));

  EXPECT_TRUE(enqueuer_->run("COMMIT").ok());
  EXPECT_EQ(query_value<long>("SELECT count(*) FROM quick.orphaned_zones"), 0);
}

TEST_P(EnqueueLockCompatibilityTest, AnInProgressLeaseDoesNotBlockAnEnqueueAtAnyIsolationLevel) {
  enqueue_committed();
  for (const std::string isolation : {"READ COMMITTED", "REPEATABLE READ", "SERIALIZABLE"}) {
    SCOPED_TRACE(isolation);
    ASSERT_TRUE(consumer_->run("BEGIN").ok());
    const auto lease = consumer_->run(lease_sql("1 millisecond"));  // uncommitted lease update
    ASSERT_TRUE(lease.ok()) << lease.error;
    ASSERT_EQ(lease.row_count(), 1u);

    ASSERT_TRUE(enqueuer_->run("BEGIN ISOLATION LEVEL " + isolation).ok());
    const auto enqueue = enqueuer_->run(testing::enqueue_statement(GetParam(), kTenant));
    expect_not_blocked(enqueue, "the enqueue (FOR KEY SHARE)");
    EXPECT_EQ(enqueue.row_count(), 1u) << "the enqueue inserted nothing";

    EXPECT_TRUE(consumer_->run("COMMIT").ok());
    EXPECT_TRUE(enqueuer_->run("COMMIT").ok());
    // Let the 1 ms lease run out so the next round can lease the pointer again.
    ASSERT_TRUE(consumer_->run("SELECT pg_sleep(0.01)").ok());
  }
}

TEST_P(EnqueueLockCompatibilityTest, AnOpenEnqueueBlocksDeletingThePointerAndLockingItForUpdate) {
  enqueue_committed();
  ASSERT_TRUE(enqueuer_->run("BEGIN").ok());
  enqueue_in_open_transaction();

  const std::string where = std::string(" WHERE tenant = ") + sql_literal(kTenant);
  expect_blocked(consumer_->run("DELETE FROM quick.pointers" + where), "DELETE of the pointer");
  expect_blocked(consumer_->run("SELECT 1 FROM quick.pointers" + where + " FOR UPDATE"),
                 "SELECT ... FOR UPDATE of the pointer");

  ASSERT_TRUE(enqueuer_->run("COMMIT").ok());
  // The same statement goes through once the enqueue is over: it was the enqueue's lock.
  EXPECT_TRUE(consumer_->run("SELECT 1 FROM quick.pointers" + where + " FOR UPDATE").ok());
}

TEST_P(EnqueueLockCompatibilityTest, ConsumersDoNotSkipAPointerThatAnOpenEnqueueHolds) {
  enqueue_committed();
  ASSERT_TRUE(enqueuer_->run("BEGIN").ok());
  enqueue_in_open_transaction();

  const auto peek = consumer_->run("SELECT tenant FROM quick.peek_pointers(100)");
  expect_not_blocked(peek, "quick.peek_pointers");
  EXPECT_EQ(peek.value(), std::optional<std::string>(kTenant));

  const auto lease = consumer_->run("SELECT tenant FROM quick.lease_next_pointers(100, interval '30 seconds')");
  expect_not_blocked(lease, "quick.lease_next_pointers");
  EXPECT_EQ(lease.value(), std::optional<std::string>(kTenant))
      << "an enqueue in flight must not hide its tenant from consumers (FOR UPDATE would)";

  EXPECT_TRUE(enqueuer_->run("COMMIT").ok());
}

TEST_F(LockCompatibilityTest, ConcurrentLeasesOfOnePointerHaveExactlyOneWinnerAndNeitherWaits) {
  enqueue_committed();
  ASSERT_TRUE(consumer_->run("BEGIN").ok());
  const auto first = consumer_->run(lease_sql());
  ASSERT_EQ(first.row_count(), 1u);
  const auto second = enqueuer_->run(lease_sql());  // a second consumer, while the first is open
  expect_not_blocked(second, "a competing quick.lease_pointers");
  EXPECT_EQ(second.row_count(), 0u);
  EXPECT_TRUE(consumer_->run("COMMIT").ok());
  const auto third = enqueuer_->run(lease_sql());
  expect_not_blocked(third, "quick.lease_pointers after the winner committed");
  EXPECT_EQ(third.row_count(), 0u) << "the committed lease holds the pointer";
}

TEST_F(LockCompatibilityTest, ApplyingPointerPullsNeverWaitsForARowLockOnThePointer) {
  const std::string parked = park_pointer_and_request_pull();
  const std::string where = std::string(" WHERE tenant = ") + sql_literal(kTenant);

  for (const std::string lock : {"FOR UPDATE", "FOR NO KEY UPDATE"}) {
    SCOPED_TRACE(lock);
    ASSERT_TRUE(enqueuer_->run("BEGIN").ok());
    ASSERT_TRUE(enqueuer_->run("SELECT 1 FROM quick.pointers" + where + " " + lock).ok());
    const auto pull = consumer_->run("SELECT quick.apply_pointer_pulls()");
    expect_not_blocked(pull, "quick.apply_pointer_pulls");
    EXPECT_EQ(pull.value(), std::optional<std::string>("0"));
    EXPECT_EQ(query_value<long>("SELECT count(*) FROM quick.pointer_pulls"), 1)
        << "a request for a locked pointer stays for the next round";
    ASSERT_TRUE(enqueuer_->run("ROLLBACK").ok());
  }
  EXPECT_EQ(consumer_->value(pointer_column("vesting_time")), std::optional<std::string>(parked));

  // An open enqueue's FOR KEY SHARE does not stop the pull either (non-key update).
  ASSERT_TRUE(enqueuer_->run("BEGIN").ok());
  ASSERT_TRUE(enqueuer_->run(enqueue_sql()).ok());
  const auto pull = consumer_->run("SELECT quick.apply_pointer_pulls()");
  expect_not_blocked(pull, "quick.apply_pointer_pulls beside an open enqueue");
  EXPECT_EQ(pull.value(), std::optional<std::string>("1"));
  ASSERT_TRUE(enqueuer_->run("COMMIT").ok());
  EXPECT_TRUE(query_value<bool>("SELECT vesting_time <= now() FROM quick.pointers WHERE tenant = " +
                                std::string(sql_literal(kTenant))));
}

TEST_F(LockCompatibilityTest, ApplyingAPointerPullNeverShortensALiveLease) {
  enqueue_committed();
  const auto lease = consumer_->run(lease_sql("5 minutes"));
  ASSERT_EQ(lease.row_count(), 1u);
  const auto leased_until = consumer_->value(pointer_column("vesting_time"));

  // A REPEATABLE READ enqueue always records a pull (its snapshot may see a stale pointer), so
  // here a pull request for "now" meets a pointer leased for five minutes.
  ASSERT_TRUE(enqueuer_->run("BEGIN ISOLATION LEVEL REPEATABLE READ").ok());
  ASSERT_TRUE(enqueuer_->run(enqueue_sql()).ok());
  ASSERT_TRUE(enqueuer_->run("COMMIT").ok());
  ASSERT_EQ(query_value<long>("SELECT count(*) FROM quick.pointer_pulls"), 1);

  const auto pull = consumer_->run("SELECT quick.apply_pointer_pulls()");
  expect_not_blocked(pull, "quick.apply_pointer_pulls");
  EXPECT_EQ(pull.value(), std::optional<std::string>("0"));
  EXPECT_EQ(consumer_->value(pointer_column("vesting_time")), leased_until);
  EXPECT_EQ(consumer_->value(pointer_column("lease_id")), lease.value());
  EXPECT_EQ(query_value<long>("SELECT count(*) FROM quick.pointer_pulls"), 0)
      << "the lease holder settles the pointer from the zone, so the request is done";
  EXPECT_EQ(consumer_->run(lease_sql()).row_count(), 0u) << "a second consumer leased the zone";
}

TEST_F(LockCompatibilityTest, APointerLeasedPastTheMaximumPointerLeaseIsPulledInByAnEnqueue) {
  enqueue_committed();
  const auto lease = consumer_->run(lease_sql("5 minutes"));
  ASSERT_EQ(lease.row_count(), 1u);
  // The administrators lower the limit below the lease already taken: a pointer may now vest
  // later than any lease should last, and an item enqueued now must not wait for it.
  query("UPDATE quick.limits SET max_pointer_lease = '1 minute'");
  ASSERT_TRUE(enqueuer_->run(enqueue_sql()).ok());  // READ COMMITTED: records a request only if needed
  ASSERT_EQ(query_value<long>("SELECT count(*) FROM quick.pointer_pulls"), 1);
  const auto pull = consumer_->run("SELECT quick.apply_pointer_pulls()");
  expect_not_blocked(pull, "quick.apply_pointer_pulls");
  EXPECT_EQ(pull.value(), std::optional<std::string>("1"));
  EXPECT_TRUE(query_value<bool>("SELECT vesting_time <= now() FROM quick.pointers WHERE tenant = " +
                                std::string(sql_literal(kTenant))));
}

// No unique index on quick.pointers at all (docs/protocol.md#pointer-slots): one covering a column
// that leases change would turn lease updates into key updates, which conflict with enqueuers'
// FOR KEY SHARE (research/pg-semantics.md, exp2e), and even one on tenant alone checks every
// non-HOT update against all the pointer's versions. One pointer per tenant is kept by
// quick.pointer_slots, unique on tenant alone.
TEST_F(LockCompatibilityTest, PointersHaveNoUniqueIndexAndTheirSlotsAreUniqueOnTenantAlone) {
  const auto unique_indexes = [&](const std::string& table) {
    return query(
        "SELECT c.relname, i.indnatts, i.indexprs IS NULL AS plain, i.indpred IS NULL AS total, "
        "       (SELECT string_agg(a.attname, ',' ORDER BY k.n) FROM unnest(i.indkey) WITH ORDINALITY k(att, n) "
        "          JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.att) AS columns "
        "  FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
        " WHERE i.indrelid = '" +
        table + "'::regclass AND (i.indisunique OR i.indisexclusion)");
  };
  EXPECT_EQ(unique_indexes("quick.pointers").size(), 0u) << "quick.pointers must have no unique index";
  const auto slots = unique_indexes("quick.pointer_slots");
  ASSERT_EQ(slots.size(), 1u) << "quick.pointer_slots must have exactly one unique index";
  const auto row = slots[0];
  EXPECT_EQ(row["indnatts"].as<int>(), 1) << row["relname"].c_str() << " has INCLUDE columns";
  EXPECT_TRUE(row["plain"].as<bool>()) << row["relname"].c_str() << " has expressions";
  EXPECT_TRUE(row["total"].as<bool>()) << row["relname"].c_str() << " is partial";
  EXPECT_EQ(row["columns"].as<std::string>(""), "tenant");
}

INSTANTIATE_TEST_SUITE_P(EveryPath, EnqueueLockCompatibilityTest, ::testing::ValuesIn(testing::every_enqueue_path()),
                         [](const ::testing::TestParamInfo<EnqueuePath>& info) {
                           return testing::enqueue_path_name(info.param);
                         });

}  // namespace
}  // namespace quick
