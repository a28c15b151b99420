// Failures and the per-job-type retry policy (Algorithm 3, lines 3-5, and paper section 6:
// exponential backoff on the error count, in-line retries, permanent failures, and giving up).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <iostream>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "quick/consumer.h"
#include "quick/quick.h"
#include "support/eventually.h"
#include "support/test_database.h"

namespace quick {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using testing::eventually;

double ms(Clock::duration duration) { return std::chrono::duration<double, std::milli>(duration).count(); }

// What a handler saw on one run.
struct Run {
  Clock::time_point started;
  Clock::time_point ended;
  std::chrono::microseconds waited{0};
  int attempt = 0;
  int error_count = 0;
  std::optional<std::string> last_error;
  // When the item vested for this run, on the local clock: handler start - waited().
  Clock::time_point vested() const { return started - waited; }
};

class RunLog {
 public:
  // Records the start of a run; returns its index.
  std::size_t start(const JobContext& job) {
    std::lock_guard<std::mutex> lock(mutex_);
    Run run;
    run.started = Clock::now();
    run.waited = job.waited();
    run.attempt = job.attempt();
    run.error_count = job.item().error_count;
    run.last_error = job.item().last_error;
    runs_.push_back(run);
    return runs_.size() - 1;
  }
  void end(std::size_t index) {
    std::lock_guard<std::mutex> lock(mutex_);
    runs_[index].ended = Clock::now();
  }
  std::vector<Run> runs() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return runs_;
  }
  std::size_t size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return runs_.size();
  }

 private:
  mutable std::mutex mutex_;
  std::vector<Run> runs_;
};

class RetryPolicyTest : public testing::DatabaseTest {
 protected:
  ConsumerConfig base_config() const {
    ConsumerConfig config;
    config.databases.push_back(DatabaseConfig{"main", url()});
    config.scanner.idle_poll_interval = 5ms;
    config.manager.p_duration = 500ms;
    config.manager.min_inactive = 60s;
    config.worker.item_lease_duration = 1s;
    config.stop_deadline = 2s;
    config.default_job_type.retry.backoff_jitter = 0;
    return config;
  }

  std::int64_t enqueue(const std::string& tenant, const std::string& job_type, const std::string& payload = "{}") {
    auto conn = connect();
    pqxx::work txn(*conn);
    NewItem item;
    item.tenant = tenant;
    item.job_type = job_type;
    item.payload = payload;
    const auto result = enqueue_in(txn, item);
    txn.commit();
    return result.item_id;
  }

  int count(const std::string& sql) const { return query_value<int>(sql); }
};

// An always-failing handler (4 failures, then success) with backoff_base 100 ms and no jitter:
// the item vests again 100, 200, 400, 800 ms after each failure, its error count goes up by one
// each time, and each run sees the previous failure's reason.
TEST_F(RetryPolicyTest, BackoffDoublesWithEveryFailure) {
  ConsumerConfig config = base_config();
  config.default_job_type.retry.backoff_base = 100ms;
  config.default_job_type.retry.backoff_max = 60s;
  config.default_job_type.retry.max_attempts = 0;
  Consumer consumer(config);
  RunLog log;
  consumer.handle("flaky", [&](JobContext& job) {
    const auto index = log.start(job);
    const bool fail = index < 4;
    log.end(index);
    if (fail) return JobResult::retry("failure " + std::to_string(index));
    return JobResult::done();
  });
  enqueue("tenant", "flaky");
  consumer.start();
  ASSERT_TRUE(eventually([&] { return log.size() == 5 && count("SELECT count(*) FROM quick.items") == 0; }, 60s))
      << "runs: " << log.size();
  consumer.stop();

  const auto runs = log.runs();
  std::cout << "retry delays (item vested again after the failure):";
  for (std::size_t k = 0; k < 4; ++k) {
    const double delay = ms(runs[k + 1].vested() - runs[k].ended);
    const double expected = 100.0 * (1 << k);
    std::cout << " " << delay << " ms (backoff " << expected << ")";
    EXPECT_GE(delay, expected - 20) << "failure " << k;
    EXPECT_LE(delay, expected + 250) << "failure " << k;
    EXPECT_EQ(runs[k + 1].error_count, static_cast<int>(k) + 1);
    EXPECT_EQ(runs[k + 1].last_error.value_or("<none>"), "failure " + std::to_string(k));
  }
  std::cout << std::endl;
  EXPECT_EQ(runs[0].error_count, 0);
  EXPECT_EQ(consumer.stats().items_retried, 4u);
  EXPECT_EQ(consumer.stats().items_done, 1u);
}

// Algorithm 3's backoff is the time until the item runs again: a retried item runs soon after its
// backoff, even when the item lease is much longer (here 6 s against a 100 ms backoff).
TEST_F(RetryPolicyTest, ARetriedItemRunsSoonAfterItsBackoffNotWhenItsOldLeaseWouldHaveRunOut) {
  ConsumerConfig config = base_config();
  config.worker.item_lease_duration = 6s;
  config.default_job_type.retry.backoff_base = 100ms;
  Consumer consumer(config);
  RunLog log;
  consumer.handle("flaky", [&](JobContext& job) {
    const auto index = log.start(job);
    log.end(index);
    return index == 0 ? JobResult::retry("first run fails") : JobResult::done();
  });
  enqueue("tenant", "flaky");
  consumer.start();
  ASSERT_TRUE(eventually([&] { return log.size() == 2; }, 30s));
  consumer.stop();
  const auto runs = log.runs();
  const double gap = ms(runs[1].started - runs[0].ended);
  std::cout << "second run started " << gap << " ms after the first failed (backoff 100 ms, item lease 6 s); "
            << "it waited " << runs[1].waited.count() / 1000 << " ms after vesting" << std::endl;
  EXPECT_LT(gap, 100 + 1500) << "the retry waited for the pointer, which vests when the old item lease runs out";
}

// inline_retries = 2: the handler (which throws) runs three times in the same Worker, with
// attempt() 1, 2, 3, before the item is requeued once; every failed attempt counts, so its error
// count is then 3.
TEST_F(RetryPolicyTest, InlineRetriesRunTheHandlerNPlusOneTimesBeforeTheFirstRequeue) {
  ConsumerConfig config = base_config();
  config.default_job_type.retry.inline_retries = 2;
  config.default_job_type.retry.backoff_base = 30s;  // the requeued item stays away
  Consumer consumer(config);
  RunLog log;
  consumer.handle("flaky", [&](JobContext& job) -> JobResult {
    log.end(log.start(job));
    throw std::runtime_error("boom");
  });
  const auto id = enqueue("tenant", "flaky");
  consumer.start();
  const std::string requeued_sql = "SELECT count(*) FROM quick.items WHERE id = " + std::to_string(id) +
                                   " AND error_count = 3 AND lease_id IS NULL AND vesting_time > now() + interval '20 "
                                   "seconds'";
  ASSERT_TRUE(eventually([&] { return count(requeued_sql) == 1; }, 30s));
  std::this_thread::sleep_for(200ms);
  consumer.stop();
  const auto runs = log.runs();
  ASSERT_EQ(runs.size(), 3u);
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(runs[static_cast<std::size_t>(k)].attempt, k + 1);
    EXPECT_EQ(runs[static_cast<std::size_t>(k)].error_count, 0);
  }
  EXPECT_EQ(query_value<std::string>("SELECT last_error FROM quick.items WHERE id = " + std::to_string(id)),
            "handler threw: boom");
  const auto stats = consumer.stats();
  EXPECT_EQ(stats.items_inline_retries, 2u);
  EXPECT_EQ(stats.items_retried, 1u);
  EXPECT_EQ(stats.handler_exceptions, 3u);
}

// max_attempts = 3: after the third failed attempt the item moves to quick.dead_items with the
// reason; quick.retry_dead_item puts it back (same tenant, type and payload) and it runs again.
TEST_F(RetryPolicyTest, MaxAttemptsMovesTheItemToDeadItemsAndRetryDeadItemRunsItAgain) {
  ConsumerConfig config = base_config();
  config.default_job_type.retry.max_attempts = 3;
  config.default_job_type.retry.backoff_base = 50ms;
  Consumer consumer(config);
  RunLog log;
  std::atomic<bool> healed{false};
  std::mutex mutex;
  std::string healed_payload;
  consumer.handle("flaky", [&](JobContext& job) {
    log.end(log.start(job));
    if (!healed.load()) return JobResult::retry("downstream unavailable");
    std::lock_guard<std::mutex> lock(mutex);
    healed_payload = job.item().payload;
    return JobResult::done();
  });
  const auto id = enqueue("tenant", "flaky", "{\"order\": 42}");
  consumer.start();
  ASSERT_TRUE(eventually([&] { return count("SELECT count(*) FROM quick.dead_items") == 1; }, 30s));
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(log.size(), 3u);
  EXPECT_EQ(count("SELECT count(*) FROM quick.items"), 0);
  const auto dead = query("SELECT id, tenant, job_type, payload::text, reason FROM quick.dead_items");
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0][0].as<std::int64_t>(), id);
  EXPECT_EQ(dead[0][1].as<std::string>(), "tenant");
  EXPECT_EQ(dead[0][2].as<std::string>(), "flaky");
  EXPECT_EQ(dead[0][3].as<std::string>(), "{\"order\": 42}");
  const auto reason = dead[0][4].as<std::string>();
  EXPECT_NE(reason.find("downstream unavailable"), std::string::npos) << reason;
  EXPECT_NE(reason.find("max_attempts"), std::string::npos) << reason;
  EXPECT_EQ(consumer.stats().items_dead, 1u);

  healed = true;
  const auto new_id = query_value<std::int64_t>("SELECT quick.retry_dead_item(" + std::to_string(id) + ")");
  EXPECT_EQ(count("SELECT count(*) FROM quick.dead_items"), 0);
  ASSERT_TRUE(eventually([&] { return log.size() == 4 && count("SELECT count(*) FROM quick.items") == 0; }, 30s))
      << "the re-enqueued dead item did not run";
  consumer.stop();
  EXPECT_EQ(count("SELECT count(*) FROM quick.dead_items"), 0);
  EXPECT_EQ(log.runs()[3].error_count, 0) << "a re-enqueued dead item starts with a fresh error count";
  {
    std::lock_guard<std::mutex> lock(mutex);
    EXPECT_EQ(healed_payload, "{\"order\": 42}");
  }
  EXPECT_GT(new_id, 0);
  EXPECT_EQ(consumer.stats().items_done, 1u);
}

// In-line retries are attempts too (JobContext::attempt() counts them): with inline_retries = 1
// and max_attempts = 3 the handler runs three times in all, with attempt() 1, 2, 3.
TEST_F(RetryPolicyTest, MaxAttemptsCountsInlineRetriesAsAttempts) {
  ConsumerConfig config = base_config();
  config.default_job_type.retry.inline_retries = 1;
  config.default_job_type.retry.max_attempts = 3;
  config.default_job_type.retry.backoff_base = 50ms;
  Consumer consumer(config);
  RunLog log;
  consumer.handle("flaky", [&](JobContext& job) {
    log.end(log.start(job));
    return JobResult::retry("always fails");
  });
  enqueue("tenant", "flaky");
  consumer.start();
  ASSERT_TRUE(eventually([&] { return count("SELECT count(*) FROM quick.dead_items") == 1; }, 30s));
  std::this_thread::sleep_for(200ms);
  consumer.stop();
  std::vector<int> attempts;
  for (const auto& run : log.runs()) attempts.push_back(run.attempt);
  std::cout << "attempt() per run:";
  for (int attempt : attempts) std::cout << " " << attempt;
  std::cout << std::endl;
  EXPECT_EQ(attempts, (std::vector<int>{1, 2, 3}));
}

// JobResult::permanent_failure: no retry at all, in line or later; the item is dead at once, with
// the handler's reason.
TEST_F(RetryPolicyTest, PermanentFailureMovesTheItemToDeadItemsAtOnce) {
  ConsumerConfig config = base_config();
  config.default_job_type.retry.inline_retries = 3;
  config.default_job_type.retry.backoff_base = 50ms;
  Consumer consumer(config);
  RunLog log;
  consumer.handle("doomed", [&](JobContext& job) {
    log.end(log.start(job));
    return JobResult::permanent_failure("user was deleted");
  });
  const auto id = enqueue("tenant", "doomed");
  consumer.start();
  ASSERT_TRUE(eventually([&] { return count("SELECT count(*) FROM quick.dead_items") == 1; }, 30s));
  std::this_thread::sleep_for(300ms);
  consumer.stop();
  EXPECT_EQ(log.size(), 1u);
  EXPECT_EQ(count("SELECT count(*) FROM quick.items"), 0);
  EXPECT_EQ(query_value<std::int64_t>("SELECT id FROM quick.dead_items"), id);
  const auto reason = query_value<std::string>("SELECT reason FROM quick.dead_items");
  EXPECT_NE(reason.find("user was deleted"), std::string::npos) << reason;
  EXPECT_EQ(consumer.stats().items_dead, 1u);
  EXPECT_EQ(consumer.stats().items_retried, 0u);
}

// on_permanent_failure = delete: a permanently failed item is gone without a dead row; other job
// types keep the default (dead_items).
TEST_F(RetryPolicyTest, PermanentFailureWithTheDeletePolicyLeavesNoDeadItem) {
  ConsumerConfig config = base_config();
  JobTypeConfig discard = config.default_job_type;
  discard.retry.on_permanent_failure = PermanentFailureAction::kDelete;
  config.job_types["discardable"] = discard;
  Consumer consumer(config);
  std::atomic<int> runs{0};
  const auto fail = [&](JobContext&) {
    ++runs;
    return JobResult::permanent_failure("not wanted");
  };
  consumer.handle("discardable", fail);
  consumer.handle("kept", fail);
  enqueue("tenant", "discardable");
  const auto kept_id = enqueue("tenant", "kept");
  consumer.start();
  ASSERT_TRUE(eventually([&] { return runs.load() == 2 && count("SELECT count(*) FROM quick.items") == 0; }, 30s));
  ASSERT_TRUE(eventually([&] { return consumer.stats().items_dead == 2; }, 10s));
  consumer.stop();
  EXPECT_EQ(runs.load(), 2);
  const auto dead = query("SELECT id, job_type FROM quick.dead_items");
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0][0].as<std::int64_t>(), kept_id);
  EXPECT_EQ(dead[0][1].as<std::string>(), "kept");
}

// JobResult::retry_after(700 ms): the item vests again 700 ms after the failure (not after the
// policy's backoff, and not in line), counting one error.
TEST_F(RetryPolicyTest, RetryAfterVestsAfterTheRequestedDelay) {
  ConsumerConfig config = base_config();
  config.default_job_type.retry.inline_retries = 2;
  config.default_job_type.retry.backoff_base = 30s;
  Consumer consumer(config);
  RunLog log;
  consumer.handle("later", [&](JobContext& job) {
    const auto index = log.start(job);
    log.end(index);
    return index == 0 ? JobResult::retry_after(700ms, "come back later") : JobResult::done();
  });
  enqueue("tenant", "later");
  consumer.start();
  ASSERT_TRUE(eventually([&] { return log.size() == 2 && count("SELECT count(*) FROM quick.items") == 0; }, 30s));
  consumer.stop();
  const auto runs = log.runs();
  const double delay = ms(runs[1].vested() - runs[0].ended);
  std::cout << "retry_after(700ms): item vested again " << delay << " ms after the failure" << std::endl;
  EXPECT_GE(delay, 700 - 20);
  EXPECT_LE(delay, 700 + 250);
  EXPECT_EQ(runs[1].error_count, 1);
  EXPECT_EQ(runs[1].last_error.value_or("<none>"), "come back later");
  EXPECT_EQ(consumer.stats().items_inline_retries, 0u);
}

// give_up_after = 600 ms: an item that keeps failing is retried until it is 600 ms old, then its
// next failure is permanent (dead item, with the reason naming give_up_after).
TEST_F(RetryPolicyTest, GiveUpAfterEndsRetriesOnceTheItemIsOldEnough) {
  ConsumerConfig config = base_config();
  config.default_job_type.retry.give_up_after = 600ms;
  config.default_job_type.retry.max_attempts = 0;
  config.default_job_type.retry.backoff_base = 100ms;
  Consumer consumer(config);
  std::atomic<int> runs{0};
  consumer.handle("flaky", [&](JobContext&) {
    ++runs;
    return JobResult::retry("still failing");
  });
  enqueue("tenant", "flaky");
  consumer.start();
  ASSERT_TRUE(eventually([&] { return count("SELECT count(*) FROM quick.dead_items") == 1; }, 30s));
  consumer.stop();
  EXPECT_GE(runs.load(), 2) << "retried at least once before giving up";
  const auto reason = query_value<std::string>("SELECT reason FROM quick.dead_items");
  EXPECT_NE(reason.find("give_up_after"), std::string::npos) << reason;
  EXPECT_GE(query_value<double>("SELECT extract(epoch FROM died_at - enqueued_at)::float8 FROM quick.dead_items"), 0.6);
  EXPECT_EQ(count("SELECT count(*) FROM quick.items"), 0);
}

}  // namespace
}  // namespace quick
