// A consumer survives its environment: terminated backends (it reconnects and carries on, and
// handler transactions stay exactly-once), throwing handlers (transient failures, retried per
// policy), and databases it cannot use at all (no quick schema, nothing listening): it keeps
// running, logs, never throws from start()/stop(), and stops promptly.
#include <gtest/gtest.h>

#include <atomic>
#include <iostream>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <thread>

#include "quick/consumer.h"
#include "quick/quick.h"
#include "support/consumer_helpers.h"
#include "support/eventually.h"
#include "support/processes.h"
#include "support/silent_listener.h"
#include "support/test_database.h"
#include "util/logging.h"

namespace quick {
namespace {

using namespace testing;

class ResilienceTest : public testing::DatabaseTest {
 protected:
  int queued() { return query_value<int>("SELECT count(*) FROM quick.items"); }
  bool queued_item(std::int64_t id) {
    return query_value<int>("SELECT count(*) FROM quick.items WHERE id = " + std::to_string(id)) == 1;
  }
  // Enqueues `count` items of job type "on-main" into this test's database one after another
  // (`pause` between them), each waited for up to `within`: how many were done (completed and
  // their completions written) within it.
  int done_within(int count, milliseconds within, milliseconds pause = milliseconds(0)) {
    int done = 0;
    for (int i = 0; i < count; ++i) {
      const auto item = enqueue_one(url(), "tenant-m", "on-main");
      if (eventually([&] { return !queued_item(item); }, within)) ++done;
      std::this_thread::sleep_for(pause);
    }
    return done;
  }
};

// Captures what a component logger writes while it lives.
class LogCapture {
 public:
  explicit LogCapture(const std::string& logger_name)
      : logger_(util::component_logger(logger_name)), sink_(std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(200)) {
    logger_->sinks().push_back(sink_);
  }
  ~LogCapture() {
    auto& sinks = logger_->sinks();
    sinks.erase(std::remove(sinks.begin(), sinks.end(), sink_), sinks.end());
  }
  std::string text() const {
    std::string all;
    for (const auto& line : sink_->last_formatted()) all += line;
    return all;
  }

 private:
  std::shared_ptr<spdlog::logger> logger_;
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> sink_;
};

// Handlers write a row per run in their own transaction, which commits together with the
// item's completion; every backend of the database is terminated four times meanwhile.
TEST_F(ResilienceTest, ConsumerReconnectsAfterItsBackendsAreTerminatedAndDrainsEverythingExactlyOnce) {
  query("CREATE TABLE public.handler_writes (item_id bigint NOT NULL)");
  constexpr int kItems = 300;
  const auto ids = enqueue_items(url(), kItems, 30, "write");
  auto config = fast_config(url(), "terminated");
  config.reconnect_delay_max = milliseconds(100);
  Consumer consumer(config);
  RunLog runs;
  consumer.handle("write", [&runs](JobContext& job) {
    runs.record(job.item().id);
    std::this_thread::sleep_for(milliseconds(8));
    job.transaction().exec_params("INSERT INTO public.handler_writes (item_id) VALUES ($1)", job.item().id);
    return JobResult::done();
  });
  consumer.start();

  int kills = 0, terminated = 0;
  for (int round = 0; round < 4; ++round) {
    const std::size_t ran_before = runs.total();
    // Wait for progress since the last kill (the consumer came back), unless it is all done.
    ASSERT_TRUE(eventually([&] { return runs.total() >= ran_before + 20 || queued() == 0; }, seconds(60)))
        << "no progress after terminating the consumer's backends " << kills << " time(s)\n"
        << consumer.stats().to_string();
    if (queued() == 0) break;
    terminated += query_value<int>(
        "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity "
        "WHERE datname = current_database() AND pid <> pg_backend_pid()");
    ++kills;
  }
  const bool drained = eventually([&] { return queued() == 0; }, seconds(60));
  consumer.stop();
  const auto stats = consumer.stats();
  std::cout << kills << " rounds of pg_terminate_backend ended " << terminated
            << " backends; reconnects=" << stats.reconnects << " database_errors=" << stats.database_errors
            << " in_doubt=" << stats.in_doubt_commits << " handler runs=" << runs.total() << "\n"
            << stats.to_string() << std::endl;
  ASSERT_TRUE(drained) << queued() << " items still queued 60 s after the last termination";
  ASSERT_GE(kills, 2) << "the queue drained before the backends could be terminated twice";
  EXPECT_GT(terminated, 0);
  EXPECT_GT(stats.reconnects, 0u);
  EXPECT_GT(stats.database_errors, 0u);
  for (const auto id : ids) EXPECT_GE(runs.runs(id), 1) << "item " << id << " never ran";
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.dead_items"), 0);
  // Exactly once: the handler's write committed with the completion, once per item.
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM public.handler_writes"), kItems);
  EXPECT_EQ(query_value<int>("SELECT count(DISTINCT item_id) FROM public.handler_writes"), kItems);
}

TEST_F(ResilienceTest, ThrowingHandlerIsATransientFailureRetriedPerPolicyAndTheConsumerKeepsRunning) {
  constexpr int kFlaky = 20;
  const auto flaky_ids = enqueue_items(url(), kFlaky, 10, "flaky", "f");
  const auto doomed_ids = enqueue_items(url(), 1, 1, "always_throws", "d");
  auto config = fast_config(url(), "throwing");
  JobTypeConfig doomed = config.default_job_type;
  doomed.retry.max_attempts = 3;
  config.job_types["always_throws"] = doomed;
  Consumer consumer(config);

  struct SecondRun {
    int attempt = 0, error_count = 0;
    std::string last_error;
  };
  std::mutex mutex;
  std::map<std::int64_t, SecondRun> second_runs;
  consumer.handle("flaky", [&](JobContext& job) -> JobResult {
    if (job.item().error_count == 0) throw std::runtime_error("boom " + std::to_string(job.item().id));
    std::lock_guard<std::mutex> lock(mutex);
    second_runs[job.item().id] = SecondRun{job.attempt(), job.item().error_count, job.item().last_error.value_or("")};
    return JobResult::done();
  });
  std::atomic<int> doomed_runs{0};
  consumer.handle("always_throws", [&](JobContext&) -> JobResult {
    ++doomed_runs;
    throw 42;  // not even a std::exception
  });
  RunLog later_runs;
  consumer.handle("later", [&](JobContext& job) {
    later_runs.record(job.item().id);
    return JobResult::done();
  });
  consumer.start();

  ASSERT_TRUE(eventually([&] { return queued() == 0; }, seconds(60))) << queued() << " items still queued\n"
                                                                      << consumer.stats().to_string();
  // Still running: new work is picked up.
  const auto later_ids = enqueue_items(url(), 5, 5, "later", "l");
  const bool later_done = eventually([&] { return later_runs.distinct() == 5 && queued() == 0; }, seconds(30));
  consumer.stop();
  const auto stats = consumer.stats();
  std::cout << stats.to_string() << std::endl;

  EXPECT_TRUE(later_done) << "the consumer stopped processing after handlers threw";
  for (const auto id : flaky_ids) {
    ASSERT_EQ(second_runs.count(id), 1u) << "item " << id << " was not retried after its handler threw";
    EXPECT_EQ(second_runs[id].attempt, 2);
    EXPECT_EQ(second_runs[id].error_count, 1) << "a throw counts as one error";
    EXPECT_NE(second_runs[id].last_error.find("boom " + std::to_string(id)), std::string::npos)
        << "the exception's message is recorded as last_error, got: " << second_runs[id].last_error;
  }
  EXPECT_EQ(doomed_runs.load(), 3) << "max_attempts 3";
  const auto dead = query("SELECT id, error_count, reason FROM quick.dead_items");
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0][0].as<std::int64_t>(), doomed_ids.front());
  EXPECT_EQ(dead[0][1].as<int>(), 3) << "the dead item records its 3 failed attempts";
  const std::string reason = dead[0][2].as<std::string>();
  EXPECT_NE(reason.find("non-standard exception"), std::string::npos) << reason;
  EXPECT_NE(reason.find("max_attempts"), std::string::npos) << reason;
  EXPECT_EQ(stats.handler_exceptions, static_cast<std::uint64_t>(kFlaky + 3));
  EXPECT_EQ(stats.items_retried, static_cast<std::uint64_t>(kFlaky + 2));
  EXPECT_EQ(stats.items_dead, 1u);
  EXPECT_EQ(stats.items_done, static_cast<std::uint64_t>(kFlaky + 5));
}

// The retry policy's backoff, not the item lease, decides when a failed item runs again: with a
// 20 s lease and a 50 ms backoff, the second attempt comes within a few seconds of the first.
// (Each item is alone in its zone, so the zone's pointer is what must vest again.)
TEST_F(ResilienceTest, FailedItemRunsAgainAfterItsBackoffNotWhenItsLeaseWouldHaveRunOut) {
  const auto ids = enqueue_items(url(), 3, 3, "fails_once");
  auto config = fast_config(url(), "backoff");
  config.worker.item_lease_duration = seconds(20);
  config.default_job_type.retry.backoff_base = milliseconds(50);
  Consumer consumer(config);
  RunLog runs;
  consumer.handle("fails_once", [&runs](JobContext& job) -> JobResult {
    runs.record(job.item().id);
    if (job.item().error_count == 0) throw std::runtime_error("first attempt fails");
    return JobResult::done();
  });
  consumer.start();
  const bool retried = eventually(
      [&] {
        for (const auto id : ids)
          if (runs.runs(id) < 2) return false;
        return true;
      },
      seconds(6));
  consumer.stop();
  std::cout << consumer.stats().to_string() << std::endl;
  for (const auto id : ids) {
    const auto starts = runs.starts(id);
    ASSERT_FALSE(starts.empty()) << "item " << id << " never ran";
    if (starts.size() < 2) {
      ADD_FAILURE() << "item " << id << " failed with a 50 ms backoff but did not run again within 6 s "
                    << "(its lease was 20 s): "
                    << query(
                           "SELECT 'item vests in ' || (i.vesting_time - now())::text || ', "
                           "its zone pointer in ' || coalesce((p.vesting_time - now())::text, 'no pointer') FROM "
                           "quick.items i "
                           "LEFT JOIN quick.pointers p ON p.tenant = i.tenant WHERE i.id = " +
                           std::to_string(id))[0][0]
                           .c_str();
      continue;
    }
    const auto gap = std::chrono::duration_cast<milliseconds>(starts[1] - starts[0]);
    std::cout << "item " << id << ": second attempt " << gap.count() << " ms after the first" << std::endl;
    EXPECT_LT(gap, seconds(5));
  }
  EXPECT_TRUE(retried);
}

TEST_F(ResilienceTest, ConsumerOnADatabaseWithoutTheQuickSchemaKeepsRunningLogsAndStopsPromptly) {
  EmptyDatabase empty;
  LogCapture scanner_log("quick.scanner");
  auto config = fast_config(empty.url(), "no-schema");
  config.databases.front().name = "schemaless";
  Consumer consumer(config);
  consumer.handle("any", [](JobContext&) { return JobResult::done(); });
  ASSERT_NO_THROW(consumer.start());
  ASSERT_TRUE(eventually([&] { return consumer.stats().database_errors >= 2; }, seconds(30)))
      << "the Scanner did not keep retrying: " << consumer.stats().to_string();
  const auto before = Clock::now();
  ASSERT_NO_THROW(consumer.stop());
  const auto elapsed = std::chrono::duration_cast<milliseconds>(Clock::now() - before);
  std::cout << "stop() on a schemaless database took " << elapsed.count()
            << " ms; database_errors=" << consumer.stats().database_errors << std::endl;
  EXPECT_LT(elapsed, seconds(3)) << "stop() waited out an error backoff";
  const std::string log = scanner_log.text();
  EXPECT_NE(log.find("schemaless"), std::string::npos) << "the log does not name the database:\n" << log;
  EXPECT_NE(log.find("error"), std::string::npos) << "a missing schema is logged as an error:\n" << log;
  EXPECT_NE(log.find("does not exist"), std::string::npos) << "the log does not say what is missing:\n" << log;
}

TEST_F(ResilienceTest, ConsumerPointedAtAnUnreachablePortKeepsRetryingAndStopsPromptly) {
  LogCapture scanner_log("quick.scanner");
  auto config = fast_config("host=127.0.0.1 port=1 dbname=nowhere user=nobody connect_timeout=2", "unreachable");
  config.databases.front().name = "nowhere";
  Consumer consumer(config);
  consumer.handle("any", [](JobContext&) { return JobResult::done(); });
  ASSERT_NO_THROW(consumer.start());
  ASSERT_TRUE(eventually([&] { return consumer.stats().database_errors >= 3; }, seconds(30)))
      << "the Scanner did not keep retrying: " << consumer.stats().to_string();
  const auto before = Clock::now();
  ASSERT_NO_THROW(consumer.stop());
  const auto elapsed = std::chrono::duration_cast<milliseconds>(Clock::now() - before);
  const auto stats = consumer.stats();
  std::cout << "stop() with an unreachable database took " << elapsed.count()
            << " ms; database_errors=" << stats.database_errors << " reconnects=" << stats.reconnects << std::endl;
  EXPECT_LT(elapsed, seconds(3));
  EXPECT_GT(stats.reconnects, 0u) << "a refused connection is a connection problem, retried by reconnecting";
  const std::string log = scanner_log.text();
  EXPECT_NE(log.find("nowhere"), std::string::npos) << "the log does not name the database:\n" << log;
  EXPECT_NE(log.find("connection lost"), std::string::npos) << log;
}

// A second database where every visit fails (here its visit function is missing: a permanent
// error, retried no sooner than a second later) while its scans work. The Manager whose visit
// failed waits out that delay, but the failed visit's zones stay marked in progress meanwhile, so
// the Scanner hands none of them to another Manager: the first database's visits go on.
TEST_F(ResilienceTest, ADatabaseWhoseVisitsFailDoesNotHoldUpAnothersVisits) {
  MigratedDatabase second;
  {
    pqxx::connection conn(second.url());
    pqxx::nontransaction(conn).exec(
        "DO $$ BEGIN EXECUTE format('ALTER FUNCTION %s RENAME TO visit_zones_gone', "
        "(SELECT p.oid::regprocedure FROM pg_proc p WHERE p.proname = 'visit_zones' "
        "AND p.pronamespace = 'quick'::regnamespace)); END $$");
  }
  enqueue_one(second.url(), "tenant-s", "anything");
  ConsumerConfig config = fast_config(url(), "visits");
  config.databases.push_back(DatabaseConfig{"second", second.url()});
  Consumer consumer(config);
  consumer.handle("on-main", [](JobContext&) { return JobResult::done(); });
  consumer.start();
  ASSERT_TRUE(eventually([&] { return consumer.stats().database_errors >= 2; }, seconds(10)))
      << "the second database's visits did not fail";
  const int done_at_once = done_within(6, milliseconds(600));
  consumer.stop();
  EXPECT_EQ(done_at_once, 6) << "the first database's visits waited for Managers asleep after the second's failures";
}

// A second database whose server never answers (a host that vanished: a connection attempt waits
// for its connect_timeout, 5 s). Connections to it are attempted in the background, so the threads
// that serve every database never wait for one: the first database's items are found and
// completed at once, all along.
TEST_F(ResilienceTest, ADatabaseThatNeverAnswersDoesNotHoldUpAnothers) {
  SilentListener silent;
  ConsumerConfig config = fast_config(url(), "silent");
  config.databases.push_back(DatabaseConfig{"silent", silent.url()});
  Consumer consumer(config);
  consumer.handle("on-main", [](JobContext&) { return JobResult::done(); });
  const auto started = Clock::now();
  consumer.start();
  EXPECT_LT(testing::seconds_since(started), 1.0) << "start() waited for the silent server";
  const int done_at_once = done_within(6, seconds(1), milliseconds(500));
  const auto stop_asked = Clock::now();
  consumer.stop();
  EXPECT_LT(testing::seconds_since(stop_asked), 3.0) << "stop() waited for the silent server";
  EXPECT_EQ(done_at_once, 6) << "items on the first database waited for connection attempts to the silent one";
}

// One of a consumer's databases stops taking connections while the consumer holds an item of it.
// The threads that serve every database (the Scanner, the lease keeper, the writer) retry that
// one with a growing delay (here up to 10 s), but do not sleep that delay: the other database's
// items are found, their leases extended and their completions written as before.
class UnreachableSecondDatabaseTest : public ResilienceTest {
 protected:
  ConsumerConfig two_databases_config() {
    ConsumerConfig config = fast_config(url(), "two");
    config.databases.push_back(DatabaseConfig{"second", second_.url()});
    config.reconnect_delay_max = seconds(10);
    return config;
  }
  // Registers a handler for "on-second" that runs until the second database refuses connections.
  void hold_an_item_of_the_second_database(Consumer& consumer) {
    consumer.handle("on-second", [this](JobContext&) {
      second_held_ = true;
      while (!second_down_) std::this_thread::sleep_for(milliseconds(5));
      return JobResult::done();
    });
    enqueue_one(second_.url(), "tenant-s", "on-second");
  }
  // Once the item is held: the second database refuses connections, its sessions are ended, and
  // the consumer's retry delay for it has 3 s to grow past a second.
  void take_the_second_database_down() {
    ASSERT_TRUE(eventually([&] { return second_held_.load(); }, seconds(20)));
    set_allow_connections(false);
    pqxx::nontransaction(*admin_).exec_params(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", second_.name());
    second_down_ = true;
    std::this_thread::sleep_for(seconds(3));
  }
  void SetUp() override {
    ResilienceTest::SetUp();
    admin_ = connect();
  }
  void TearDown() override {
    if (admin_) set_allow_connections(true);
    ResilienceTest::TearDown();
  }

 private:
  void set_allow_connections(bool allow) {
    pqxx::nontransaction(*admin_).exec("ALTER DATABASE " + admin_->quote_name(second_.name()) +
                                       " WITH ALLOW_CONNECTIONS " + (allow ? "true" : "false"));
  }
  MigratedDatabase second_;
  std::unique_ptr<pqxx::connection> admin_;
  std::atomic<bool> second_held_{false}, second_down_{false};
};

// Before, the Scanner and the writer slept the delay: new items on the healthy database were
// found, and their completions written, only once it had passed.
TEST_F(UnreachableSecondDatabaseTest, TheOtherDatabasesItemsArePickedUpAndCompletedAtOnce) {
  Consumer consumer(two_databases_config());
  hold_an_item_of_the_second_database(consumer);
  consumer.handle("on-main", [](JobContext&) { return JobResult::done(); });
  consumer.start();
  take_the_second_database_down();
  const int written_at_once = done_within(3, seconds(1));
  consumer.stop();
  EXPECT_EQ(written_at_once, 3) << "items on the healthy database waited for the other's retry delay";
}

// Before, the lease keeper slept the delay between two rounds: a lease of 2 s on the healthy
// database ran out, and its item was leased and run again while its handler still ran.
TEST_F(UnreachableSecondDatabaseTest, TheOtherDatabasesLeasesAreStillExtended) {
  Consumer consumer(two_databases_config());  // item leases of 2 s, extended every 667 ms
  hold_an_item_of_the_second_database(consumer);
  std::atomic<int> runs{0};
  consumer.handle("long-on-main", [&](JobContext& job) {
    ++runs;
    const auto until = Clock::now() + seconds(5);
    while (Clock::now() < until && !job.should_stop()) std::this_thread::sleep_for(milliseconds(10));
    return JobResult::done();
  });
  consumer.start();
  take_the_second_database_down();
  const auto item = enqueue_one(url(), "tenant-m", "long-on-main");
  ASSERT_TRUE(eventually([&] { return runs.load() > 0; }, seconds(10)));
  // While the handler runs, the item's lease never lapses (its vesting time stays ahead).
  const std::string lapsed = "SELECT count(*) FROM quick.items WHERE id = " + std::to_string(item) +
                             " AND (vesting_time <= now() OR lease_id IS NULL)";
  int lapsed_seen = 0;
  while (queued_item(item) && runs.load() == 1) {
    lapsed_seen += query_value<int>(lapsed);
    std::this_thread::sleep_for(milliseconds(50));
  }
  const bool done = eventually([&] { return !queued_item(item); }, seconds(20));
  consumer.stop();
  EXPECT_TRUE(done);
  EXPECT_EQ(lapsed_seen, 0) << "the item's lease ran out while its handler ran";
  EXPECT_EQ(runs.load(), 1) << "the item ran again: its lease ran out while its handler ran";
  EXPECT_EQ(consumer.stats().items_lease_lost, 0u);
}

}  // namespace
}  // namespace quick
