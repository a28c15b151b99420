// Which enqueues notify channel quick_wakeup (sql/functions/wake_consumers.sql): those that make
// work vest earlier than the Scanners know (a new zone's pointer, a pull request), on every
// enqueue path; never an enqueue into a zone whose pointer is already due, a rolled-back one, or
// one whose transaction turned notifications off (which PREPARE TRANSACTION needs). The one-call
// enqueues notify after their commit, in a transaction of their own.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>

#include "quick/producer.h"
#include "support/enqueue_paths.h"
#include "support/test_database.h"

namespace quick {
namespace {

using testing::EnqueuePath;

// A session that LISTENs on quick_wakeup and counts what arrives.
class Listener final : public pqxx::notification_receiver {
 public:
  explicit Listener(pqxx::connection& conn) : pqxx::notification_receiver(conn, "quick_wakeup"), conn_(conn) {}
  void operator()(const std::string&, int) override { ++received_; }

  // Notifications that arrive within `wait` (all of them: it keeps reading until the wait ends).
  int received_within(std::chrono::milliseconds wait) {
    received_ = 0;
    const auto end = std::chrono::steady_clock::now() + wait;
    while (std::chrono::steady_clock::now() < end) conn_.await_notification(0, 20000);
    return received_;
  }

 private:
  pqxx::connection& conn_;
  int received_ = 0;
};

constexpr std::chrono::milliseconds kWait{300};

class WakeUpNotificationTest : public testing::DatabaseTest, public ::testing::WithParamInterface<EnqueuePath> {
 protected:
  void SetUp() override {
    DatabaseTest::SetUp();
    listening_ = connect();
    listener_ = std::make_unique<Listener>(*listening_);
  }
  void TearDown() override {
    listener_.reset();
    listening_.reset();
    DatabaseTest::TearDown();
  }

  // One committed enqueue through the path under test; returns the notifications it sent.
  int enqueue_and_count(const std::string& tenant) {
    auto conn = connect();
    pqxx::work txn(*conn);
    const auto rows = txn.exec(testing::enqueue_statement(GetParam(), tenant));
    if (rows.empty()) txn.exec(testing::enqueue_statement(EnqueuePath::kSqlFunction, tenant));  // new zone
    txn.commit();
    return listener_->received_within(kWait);
  }

  std::unique_ptr<pqxx::connection> listening_;
  std::unique_ptr<Listener> listener_;
};

TEST_P(WakeUpNotificationTest, ANewZoneNotifiesOnceItCommits) { EXPECT_EQ(enqueue_and_count("new"), 1); }

TEST_P(WakeUpNotificationTest, AZoneWhosePointerIsAlreadyDueSendsNothing) {
  query("SELECT quick.enqueue('due', 'job')");
  listener_->received_within(kWait);  // the zone's creation
  EXPECT_EQ(enqueue_and_count("due"), 0);
}

TEST_P(WakeUpNotificationTest, AnItemThatVestsBeforeItsParkedZonesPointerNotifies) {
  query("SELECT quick.enqueue('parked', 'job', '{}', interval '1 hour')");
  listener_->received_within(kWait);
  EXPECT_EQ(enqueue_and_count("parked"), 1);
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.pointer_pulls WHERE tenant = 'parked'"), 1);
}

INSTANTIATE_TEST_SUITE_P(EveryPath, WakeUpNotificationTest, ::testing::ValuesIn(testing::every_enqueue_path()),
                         [](const auto& info) { return testing::enqueue_path_name(info.param); });

class WakeUpSettingTest : public testing::DatabaseTest {};

TEST_F(WakeUpSettingTest, ARolledBackEnqueueSendsNothing) {
  auto listening = connect();
  Listener listener(*listening);
  auto conn = connect();
  {
    pqxx::work txn(*conn);
    txn.exec("SELECT quick.enqueue('rolled_back', 'job')");
    txn.abort();
  }
  EXPECT_EQ(listener.received_within(kWait), 0);
}

TEST_F(WakeUpSettingTest, ATransactionThatTurnsNotificationsOffSendsNoneAndCanBePrepared) {
  auto listening = connect();
  Listener listener(*listening);
  auto conn = connect();
  pqxx::nontransaction session(*conn);
  session.exec("BEGIN");
  session.exec("SET LOCAL quick.wake_consumers = off");
  session.exec("SELECT quick.enqueue('prepared', 'job')");
  session.exec("PREPARE TRANSACTION 'wake_up_test'");
  session.exec("COMMIT PREPARED 'wake_up_test'");
  EXPECT_EQ(listener.received_within(kWait), 0);
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.items WHERE tenant = 'prepared'"), 1);

  // Without the setting Postgres refuses to prepare it: the reason the setting exists.
  session.exec("BEGIN");
  session.exec("SELECT quick.enqueue('refused', 'job')");
  EXPECT_THROW(session.exec("PREPARE TRANSACTION 'wake_up_test_2'"), pqxx::feature_not_supported);
  session.exec("ROLLBACK");
}

TEST_F(WakeUpSettingTest, ARetryThatVestsBeforeItsParkedPointerNotifiesThroughItsPullRequest) {
  query("SELECT quick.enqueue('retried', 'job', '{}', interval '1 hour')");
  auto listening = connect();
  Listener listener(*listening);
  query("SELECT quick.request_pointer_pulls(ARRAY['retried'], ARRAY[now()], ARRAY[0])");
  EXPECT_EQ(listener.received_within(kWait), 1);
}

// A producer that pulls a parked zone's pointer in its own transaction records no request: the
// pull itself notifies, single item and batch alike.
TEST_F(WakeUpSettingTest, PullingAParkedPointerInTheCallersTransactionNotifies) {
  query("SELECT quick.enqueue('single', 'job', '{}', interval '1 hour')");
  query("SELECT quick.enqueue('batch', 'job', '{}', interval '1 hour')");
  auto listening = connect();
  Listener listener(*listening);
  auto conn = connect();
  EnqueueOptions pulling;
  pulling.pull_in_transaction = true;
  NewItem item;
  item.job_type = "job";
  for (const bool batch : {false, true}) {
    item.tenant = batch ? "batch" : "single";
    pqxx::work txn(*conn);
    if (batch) enqueue_batch_in(txn, {item, item}, pulling);
    else enqueue_in(txn, item, pulling);
    txn.commit();
    EXPECT_EQ(listener.received_within(kWait), 1) << item.tenant;
  }
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.pointer_pulls"), 0) << "pulled, not requested";
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.pointers WHERE vesting_time > now()"), 0);
}

// The one-call enqueues (quick::enqueue, quick::enqueue_batch) notify after their statement has
// committed, in a transaction of their own (sql/queries/enqueue_now.sql), so that the enqueue's
// commit does not wait for the server-wide lock of a notifying commit: the same notifications as
// every other path, one per enqueue that needs one.
class OneCallWakeUpTest : public testing::DatabaseTest {
 protected:
  // The session holds the sleepers' lock, as a listening Scanner does while it sleeps
  // (sql/functions/scanner_sleep.sql): without one, the one-call enqueues skip their wake-ups.
  static void sleep_as_a_scanner(pqxx::connection& conn) {
    EXPECT_TRUE(pqxx::nontransaction(conn).exec1("SELECT quick.scanner_sleeps()")[0].as<bool>());
  }
  // One one-call enqueue for `tenant` (single item or a batch of two); returns the
  // notifications it sent.
  int enqueue_and_count(pqxx::connection& conn, Listener& listener, const std::string& tenant, bool batch) {
    NewItem item;
    item.tenant = tenant;
    item.job_type = "job";
    if (batch) enqueue_batch(conn, {item, item});
    else enqueue(conn, item);
    return listener.received_within(kWait);
  }
};

TEST_F(OneCallWakeUpTest, NotifiesForANewZoneAndAParkedZoneButNotForADueOne) {
  for (const bool batch : {false, true}) {
    SCOPED_TRACE(batch ? "enqueue_batch" : "enqueue");
    const std::string suffix = batch ? "_batch" : "_single";
    query("SELECT quick.enqueue('due" + suffix + "', 'job')");
    query("SELECT quick.enqueue('parked" + suffix + "', 'job', '{}', interval '1 hour')");
    auto listening = connect();
    Listener listener(*listening);
    sleep_as_a_scanner(*listening);
    auto conn = connect();
    EXPECT_EQ(enqueue_and_count(*conn, listener, "new" + suffix, batch), 1) << "a new zone";
    EXPECT_EQ(enqueue_and_count(*conn, listener, "parked" + suffix, batch), 1) << "a parked zone";
    EXPECT_EQ(enqueue_and_count(*conn, listener, "due" + suffix, batch), 0) << "a zone already due";
    EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.pointers WHERE tenant = 'parked" + suffix +
                               "' AND vesting_time <= now()"),
              1)
        << "the parked zone's pointer was pulled";
  }
}

// The statement itself sends nothing: it commits without the notification and says it is due;
// quick.notify_consumers() in the next transaction sends it. A session that turned
// notifications off gets none at all.
TEST_F(OneCallWakeUpTest, TheEnqueueStatementCommitsWithoutNotifyingAndLeavesItToTheCaller) {
  query("SELECT quick.enqueue('parked', 'job', '{}', interval '1 hour')");
  auto listening = connect();
  Listener listener(*listening);
  sleep_as_a_scanner(*listening);
  const auto statement = testing::query_file_with_literals(
      "enqueue_now", {{"$1", "'parked'"}, {"$2", "'job'"}, {"$3", "'{}'"}, {"$4", "'0'"}, {"$5", "0"}});
  auto conn = connect();
  {
    pqxx::nontransaction autocommit(*conn);
    const auto row = autocommit.exec1(statement);
    EXPECT_FALSE(row[0].is_null());
    EXPECT_TRUE(row[1].as<bool>()) << "the wake-up is due";
    EXPECT_EQ(listener.received_within(kWait), 0) << "the enqueue's own transaction notified";
    EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.items WHERE tenant = 'parked'"), 2) << "committed";
    autocommit.exec("SELECT quick.notify_consumers()");
    EXPECT_EQ(listener.received_within(kWait), 1);
    // A session that turns notifications off: the setting holds for the notification after commit.
    autocommit.exec("SET quick.wake_consumers = off");
  }
  NewItem item;
  item.tenant = "quiet";
  item.job_type = "job";
  enqueue(*conn, item);
  enqueue_batch(*conn, {item});
  EXPECT_EQ(listener.received_within(kWait), 0);
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.items WHERE tenant = 'quiet'"), 2);
}

// A session whose own setting defers wake-ups (after_commit) still gets the one-call enqueue's
// notification: the call after the commit sends it.
TEST_F(OneCallWakeUpTest, ASessionThatDefersWakeUpsStillGetsTheNotification) {
  auto listening = connect();
  Listener listener(*listening);
  sleep_as_a_scanner(*listening);
  auto conn = connect();
  pqxx::nontransaction(*conn).exec("SET quick.wake_consumers = after_commit");
  EXPECT_EQ(enqueue_and_count(*conn, listener, "deferring", false), 1);
  EXPECT_EQ(enqueue_and_count(*conn, listener, "deferring_batch", true), 1);
}

// The batch statement's two branches (the fast path, and quick.enqueue_batch when a zone is new)
// both leave the wake-up to the caller.
TEST_F(OneCallWakeUpTest, TheBatchStatementLeavesTheWakeUpToTheCallerOnBothBranches) {
  query("SELECT quick.enqueue('parked', 'job', '{}', interval '1 hour')");
  auto listening = connect();
  Listener listener(*listening);
  sleep_as_a_scanner(*listening);
  auto conn = connect();
  pqxx::nontransaction autocommit(*conn);
  for (const std::string tenant : {"parked", "brand_new"}) {
    SCOPED_TRACE(tenant);
    const auto rows = autocommit.exec(testing::query_file_with_literals(
        "enqueue_batch_now", {{"$1", "'[{\"tenant\":\"" + tenant + "\",\"job_type\":\"job\"}]'"}, {"$2", "false"}}));
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_TRUE(rows[0][3].as<bool>()) << "the wake-up is due";
    EXPECT_EQ(listener.received_within(kWait), 0) << "the enqueue's own transaction notified";
  }
}

// While no listening Scanner sleeps (none holds the sleepers' lock), a one-call enqueue into a
// parked zone still pulls its pointer in but skips the wake-up: the Scanners are scanning anyway
// (sql/functions/scanner_sleep.sql). Once one announces its sleep, the wake-ups come again; once
// it wakes, they stop.
TEST_F(OneCallWakeUpTest, WhileEveryScannerIsAwakeTheOneCallEnqueueSkipsItsWakeUp) {
  query("SELECT quick.enqueue('parked', 'job', '{}', interval '1 hour')");
  query("SELECT quick.enqueue('parked_again', 'job', '{}', interval '1 hour')");
  auto listening = connect();
  Listener listener(*listening);
  auto conn = connect();
  EXPECT_EQ(enqueue_and_count(*conn, listener, "parked", false), 0) << "nobody asleep";
  EXPECT_EQ(enqueue_and_count(*conn, listener, "brand_new", true), 0) << "a new zone too";
  EXPECT_TRUE(
      query_value<bool>("SELECT EXISTS (SELECT 1 FROM quick.pointers WHERE tenant = 'parked' "
                        "AND vesting_time <= now())"))
      << "the pointer was pulled all the same";
  sleep_as_a_scanner(*listening);
  EXPECT_EQ(enqueue_and_count(*conn, listener, "parked_again", false), 1) << "a Scanner sleeps";
  EXPECT_TRUE(pqxx::nontransaction(*listening).exec1("SELECT quick.scanner_wakes()")[0].as<bool>());
  EXPECT_EQ(enqueue_and_count(*conn, listener, "newer", false), 0) << "awake again";
}

// The barrier: a Scanner cannot announce its sleep while an enqueue that skipped its wake-up is
// still open (its last scan could miss what that enqueue writes): quick.scanner_sleeps() says so,
// and takes neither lock; once the enqueue has committed, it can. The Scanner polls meanwhile.
TEST_F(OneCallWakeUpTest, AScannerCannotAnnounceItsSleepWhileASkippingEnqueueIsOpen) {
  auto enqueuer = connect();
  pqxx::work txn(*enqueuer);
  txn.exec("SET LOCAL quick.wake_consumers = one_call");  // the one-call statements' own mode
  txn.exec("SELECT quick.notify_consumers()");
  EXPECT_TRUE(txn.exec1("SELECT current_setting('quick.wakeup_due', true) IS DISTINCT FROM 'on'")[0].as<bool>())
      << "skipped: nobody asleep";
  auto scanner = connect();
  pqxx::nontransaction scanner_session(*scanner);
  EXPECT_FALSE(scanner_session.exec1("SELECT quick.scanner_sleeps()")[0].as<bool>()) << "the enqueue is open";
  EXPECT_EQ(scanner_session
                .exec1("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = "
                       "pg_backend_pid()")[0]
                .as<int>(),
            0)
      << "a refused announcement holds no lock";
  txn.commit();
  EXPECT_TRUE(scanner_session.exec1("SELECT quick.scanner_sleeps()")[0].as<bool>()) << "committed: it may sleep";
}

}  // namespace
}  // namespace quick
