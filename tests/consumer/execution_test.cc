// Running handlers (Algorithm 3): the execution bound, lease extension while a handler runs,
// the per-consumer throttle of a job type, and exactly-once completion through
// JobContext::transaction() (paper section 5: side effects and completion in one transaction).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
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

long long ms(Clock::duration duration) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(duration).count();
}

class ExecutionTest : public testing::DatabaseTest {
 protected:
  ConsumerConfig base_config() const {
    ConsumerConfig config;
    config.databases.push_back(DatabaseConfig{"main", url()});
    config.scanner.idle_poll_interval = 5ms;
    config.manager.p_duration = 500ms;
    config.manager.min_inactive = 60s;
    config.worker.item_lease_duration = 1s;
    config.stop_deadline = 2s;
    config.default_job_type.retry.backoff_base = 50ms;
    config.default_job_type.retry.backoff_jitter = 0;
    return config;
  }

  std::int64_t enqueue(const std::string& tenant, const std::string& job_type) {
    auto conn = connect();
    pqxx::work txn(*conn);
    NewItem item;
    item.tenant = tenant;
    item.job_type = job_type;
    const auto result = enqueue_in(txn, item);
    txn.commit();
    return result.item_id;
  }

  int count(const std::string& sql) const { return query_value<int>(sql); }

  // An application table the handlers write to through JobContext::transaction().
  void create_effects_table() const {
    query("CREATE TABLE public.effects (item_id bigint NOT NULL, run integer NOT NULL)");
  }
  static void record_effect(JobContext& job, int run) {
    job.transaction().exec("INSERT INTO public.effects (item_id, run) VALUES (" + std::to_string(job.item().id) + ", " +
                           std::to_string(run) + ")");
  }
  // A handler whose first run writes its effect and then works until should_stop() (at most
  // 20 s); later runs write theirs and return done. What the first run saw is kept here.
  struct FirstRunUntilStopped {
    std::atomic<int> runs{0};
    std::atomic<bool> wrote{false}, told_to_stop{false}, returned{false};
  };
  static Handler first_run_until_stopped(FirstRunUntilStopped& first) {
    return [&first](JobContext& job) {
      const int run = ++first.runs;
      record_effect(job, run);
      if (run == 1) {
        first.wrote = true;
        const auto started = Clock::now();
        while (!job.should_stop() && Clock::now() - started < 20s) std::this_thread::sleep_for(5ms);
        first.told_to_stop = job.should_stop();
        first.returned = true;
      }
      return JobResult::done();
    };
  }
  std::vector<int> effect_runs(std::int64_t item_id) const {
    std::vector<int> runs;
    for (const auto& row :
         query("SELECT run FROM public.effects WHERE item_id = " + std::to_string(item_id) + " ORDER BY run")) {
      runs.push_back(row[0].as<int>());
    }
    return runs;
  }
};

// execution_bound = 300 ms: a handler that works until told to stop is told so once its bound
// passes; the attempt counts as a failure ("execution bound exceeded"), and the item runs again
// with error_count 1.
TEST_F(ExecutionTest, ExecutionBoundStopsARunawayHandlerAndTheItemIsRetried) {
  ConsumerConfig config = base_config();
  JobTypeConfig runaway = config.default_job_type;
  runaway.execution_bound = 300ms;
  config.job_types["runaway"] = runaway;
  Consumer consumer(config);
  std::atomic<int> runs{0};
  std::atomic<long long> told_to_stop_after_ms{-1};
  std::atomic<long long> deadline_after_ms{-1};
  std::atomic<int> second_run_error_count{-1};
  std::mutex mutex;
  std::string second_run_last_error;
  consumer.handle("runaway", [&](JobContext& job) {
    const int run = ++runs;
    if (run == 1) {
      const auto started = Clock::now();
      deadline_after_ms = ms(job.deadline() - started);
      while (!job.should_stop() && Clock::now() - started < 20s) std::this_thread::sleep_for(5ms);
      told_to_stop_after_ms = ms(Clock::now() - started);
      return JobResult::retry("stopped when told to");
    }
    second_run_error_count = job.item().error_count;
    std::lock_guard<std::mutex> lock(mutex);
    second_run_last_error = job.item().last_error.value_or("<none>");
    return JobResult::done();
  });
  enqueue("tenant", "runaway");
  consumer.start();
  ASSERT_TRUE(eventually([&] { return runs.load() == 2 && count("SELECT count(*) FROM quick.items") == 0; }, 30s));
  consumer.stop();
  std::cout << "runaway handler told to stop after " << told_to_stop_after_ms.load() << " ms (bound 300 ms)"
            << std::endl;
  EXPECT_LE(deadline_after_ms.load(), 300);
  EXPECT_GE(deadline_after_ms.load(), 250);
  EXPECT_GE(told_to_stop_after_ms.load(), 290);
  EXPECT_LT(told_to_stop_after_ms.load(), 300 + 2000);
  EXPECT_EQ(second_run_error_count.load(), 1);
  {
    std::lock_guard<std::mutex> lock(mutex);
    EXPECT_NE(second_run_last_error.find("execution bound"), std::string::npos) << second_run_last_error;
  }
  const auto stats = consumer.stats();
  EXPECT_EQ(stats.items_execution_bound, 1u);
  EXPECT_EQ(stats.items_retried, 1u);
  EXPECT_EQ(stats.items_done, 1u);
}

// item_lease_duration = 1 s and a handler that takes 3.5 s: the lease is extended while it runs
// (the item never vests meanwhile, its lease id never changes), the handler is never asked to
// stop, and a second consumer scanning the same queue never starts the item.
TEST_F(ExecutionTest, ALongHandlerKeepsItsLeaseByExtensionAndNeverRunsTwice) {
  std::atomic<int> runs{0};
  std::atomic<bool> told_to_stop{false};
  std::atomic<bool> running{false};
  const auto handler = [&](JobContext& job) {
    ++runs;
    running = true;
    const auto started = Clock::now();
    while (Clock::now() - started < 3500ms) {
      if (job.should_stop()) told_to_stop = true;
      std::this_thread::sleep_for(10ms);
    }
    running = false;
    return JobResult::done();
  };
  std::vector<std::unique_ptr<Consumer>> consumers;
  for (int i = 0; i < 2; ++i) {
    ConsumerConfig config = base_config();
    config.consumer_id = "consumer-" + std::to_string(i);
    consumers.push_back(std::make_unique<Consumer>(config));
    consumers.back()->handle("slow", handler);
  }
  const auto id = enqueue("tenant", "slow");
  for (auto& consumer : consumers) consumer->start();
  ASSERT_TRUE(eventually([&] { return running.load(); }, 30s));
  const std::string lease_id = query_value<std::string>("SELECT lease_id::text FROM quick.items WHERE id = " +
                                                        std::to_string(id));
  int samples = 0;
  while (running.load()) {
    const auto row = query("SELECT lease_id::text, vesting_time > now() FROM quick.items WHERE id = " +
                           std::to_string(id));
    if (row.empty()) break;  // completed just now
    EXPECT_EQ(row[0][0].as<std::string>(), lease_id) << "the item was leased again while it ran";
    EXPECT_TRUE(row[0][1].as<bool>()) << "the item's lease ran out while its handler ran";
    ++samples;
    std::this_thread::sleep_for(50ms);
  }
  ASSERT_TRUE(eventually([&] { return count("SELECT count(*) FROM quick.items") == 0; }, 30s));
  std::this_thread::sleep_for(300ms);
  std::uint64_t extensions = 0;
  for (auto& consumer : consumers) {
    consumer->stop();
    extensions += consumer->stats().lease_extensions;
  }
  std::cout << samples << " samples while running; " << extensions << " lease extensions" << std::endl;
  EXPECT_GT(samples, 5);
  EXPECT_EQ(runs.load(), 1);
  EXPECT_FALSE(told_to_stop.load());
  EXPECT_GE(extensions, 3u);
}

// An acknowledgment that cannot be written (a session holds the completed item's row) must not
// hold up the extension of another item's lease: the long handler keeps its lease throughout and
// runs once. The blocked item completes once the row is free: through its stuck acknowledgment,
// or through a second run, since its lease (not extended once its handler has returned) runs out
// meanwhile and a Manager waiting for the row may lease it again before the acknowledgment's retry
// does (which one depends on timing).
TEST_F(ExecutionTest, AStuckAcknowledgmentDoesNotDelayTheLeaseExtensionOfOtherItems) {
  std::atomic<int> slow_runs{0};
  std::atomic<bool> slow_running{false};
  std::atomic<bool> quick_done{false};
  ConsumerConfig config = base_config();  // item leases of 1 s, extended every third of a second
  Consumer consumer(config);
  consumer.handle("slow", [&](JobContext&) {
    ++slow_runs;
    slow_running = true;
    std::this_thread::sleep_for(3500ms);
    slow_running = false;
    return JobResult::done();
  });
  const auto quick_id = enqueue("quick-tenant", "quick");
  auto locker_conn = connect();
  pqxx::work locker(*locker_conn);
  std::atomic<int> quick_runs{0};
  consumer.handle("quick", [&](JobContext&) {
    // Once this item is leased, someone else takes its row: its acknowledgment will wait.
    if (quick_runs++ == 0) {
      locker.exec("SELECT 1 FROM quick.items WHERE id = " + std::to_string(quick_id) + " FOR UPDATE");
    }
    quick_done = true;
    return JobResult::done();
  });
  const auto slow_id = enqueue("slow-tenant", "slow");
  consumer.start();
  ASSERT_TRUE(eventually([&] { return quick_done.load() && slow_running.load(); }, 30s));
  const std::string lease_id = query_value<std::string>("SELECT lease_id::text FROM quick.items WHERE id = " +
                                                        std::to_string(slow_id));
  while (slow_running.load()) {
    const auto row = query("SELECT lease_id::text, vesting_time > now() FROM quick.items WHERE id = " +
                           std::to_string(slow_id));
    if (row.empty()) break;
    EXPECT_EQ(row[0][0].as<std::string>(), lease_id) << "the slow item was leased again while it ran";
    EXPECT_TRUE(row[0][1].as<bool>()) << "the slow item's lease ran out while the acknowledgment was stuck";
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_EQ(count("SELECT count(*) FROM quick.items WHERE id = " + std::to_string(quick_id)), 1)
      << "the acknowledgment waits for the row";
  locker.abort();
  ASSERT_TRUE(eventually([&] { return count("SELECT count(*) FROM quick.items") == 0; }, 30s));
  consumer.stop();
  EXPECT_EQ(slow_runs.load(), 1);
  EXPECT_GE(consumer.stats().lease_extensions, 3u);
}

// An item whose handler has finished stays held, its lease extended, until its acknowledgment is
// written: with acknowledgments batched for 3 s and leases of 1 s, no item runs twice.
TEST_F(ExecutionTest, AFinishedItemKeepsItsLeaseUntilItsAcknowledgmentIsWritten) {
  ConsumerConfig config = base_config();  // item leases of 1 s, extended every third of a second
  config.worker.ack_interval = 3s;
  Consumer consumer(config);
  std::mutex mutex;
  std::map<std::int64_t, int> runs;
  consumer.handle("job", [&](JobContext& job) {
    std::lock_guard<std::mutex> lock(mutex);
    ++runs[job.item().id];
    return JobResult::done();
  });
  for (int i = 0; i < 5; ++i) enqueue("tenant-" + std::to_string(i), "job");
  consumer.start();
  ASSERT_TRUE(eventually([&] { return count("SELECT count(*) FROM quick.items") == 0; }, 30s));
  consumer.stop();
  std::lock_guard<std::mutex> lock(mutex);
  EXPECT_EQ(runs.size(), 5u);
  for (const auto& [id, n] : runs) EXPECT_EQ(n, 1) << "item " << id << " ran again while its acknowledgment waited";
  EXPECT_EQ(consumer.stats().items_lease_lost, 0u);
  EXPECT_GE(consumer.stats().lease_extensions, 5u) << "the finished items' leases were extended";
}

// max_in_flight = 2 for "limited", 6 Workers, plenty of items of both types: never more than two
// "limited" handlers run at once, while "unlimited" items run alongside them.
TEST_F(ExecutionTest, MaxInFlightCapsConcurrentHandlersOfATypeWhileOtherTypesStillRun) {
  ConsumerConfig config = base_config();
  config.worker.threads = 6;
  JobTypeConfig limited = config.default_job_type;
  limited.max_in_flight = 2;
  config.job_types["limited"] = limited;
  // Small visits, so that items of both types keep arriving while "limited" is at its cap (with a
  // large dequeue_max the first visit takes every item and the unlimited ones finish first).
  config.manager.dequeue_max = 2;
  {
    auto conn = connect();
    pqxx::work txn(*conn);
    std::vector<NewItem> items;
    for (int t = 0; t < 12; ++t) {
      for (int i = 0; i < 6; ++i) {
        NewItem item;
        item.tenant = "tenant-" + std::to_string(t);
        item.job_type = i % 2 == 0 ? "limited" : "unlimited";
        items.push_back(item);
      }
    }
    enqueue_batch_in(txn, items);
    txn.commit();
  }
  Consumer consumer(config);
  std::atomic<int> limited_running{0}, limited_max{0}, unlimited_running{0}, unlimited_max{0};
  std::atomic<int> unlimited_beside_full_limited{0}, done{0};
  consumer.handle("limited", [&](JobContext&) {
    const int now = ++limited_running;
    int seen = limited_max.load();
    while (now > seen && !limited_max.compare_exchange_weak(seen, now)) {
    }
    std::this_thread::sleep_for(40ms);
    --limited_running;
    ++done;
    return JobResult::done();
  });
  consumer.handle("unlimited", [&](JobContext&) {
    const int now = ++unlimited_running;
    int seen = unlimited_max.load();
    while (now > seen && !unlimited_max.compare_exchange_weak(seen, now)) {
    }
    if (limited_running.load() == 2) ++unlimited_beside_full_limited;
    std::this_thread::sleep_for(20ms);
    --unlimited_running;
    ++done;
    return JobResult::done();
  });
  const auto start = Clock::now();
  consumer.start();
  ASSERT_TRUE(eventually([&] { return done.load() == 72; }, 60s)) << "done: " << done.load();
  const auto elapsed = Clock::now() - start;
  consumer.stop();
  const auto stats = consumer.stats();
  std::cout << "72 items in " << ms(elapsed) << " ms; max concurrent limited " << limited_max.load() << ", unlimited "
            << unlimited_max.load() << "; unlimited runs beside 2 limited: " << unlimited_beside_full_limited.load()
            << "; throttled " << stats.items_throttled << std::endl;
  EXPECT_LE(limited_max.load(), 2);
  EXPECT_EQ(limited_max.load(), 2) << "the throttle should still allow two at once";
  EXPECT_GT(unlimited_beside_full_limited.load(), 0);
  EXPECT_GE(unlimited_max.load(), 2);
  EXPECT_EQ(count("SELECT count(*) FROM quick.items"), 0);
}

// The throttle is per consumer, whichever Manager dequeued the item: with eight Managers visiting
// many one-item zones at once (selection_frac 1, one zone per visit), max_in_flight = 1 still
// means one "limited" handler at a time.
TEST_F(ExecutionTest, MaxInFlightHoldsWhenSeveralManagersHandOverItemsAtOnce) {
  constexpr int kItems = 300;
  {
    auto conn = connect();
    pqxx::work txn(*conn);
    std::vector<NewItem> items(kItems);
    for (int i = 0; i < kItems; ++i) {
      items[static_cast<std::size_t>(i)].tenant = "tenant-" + std::to_string(i);
      items[static_cast<std::size_t>(i)].job_type = "limited";
    }
    enqueue_batch_in(txn, items);
    txn.commit();
  }
  ConsumerConfig config = base_config();
  config.scanner.idle_poll_interval = 1ms;
  config.scanner.selection_frac = 1.0;
  config.manager.threads = 8;
  config.manager.pointers_per_batch = 1;
  config.manager.pointers_per_batch_alone = 0;  // one zone per visit, also once it knows it is alone
  config.manager.p_duration = 100ms;
  config.worker.threads = 8;
  JobTypeConfig limited = config.default_job_type;
  limited.max_in_flight = 1;
  config.job_types["limited"] = limited;
  Consumer consumer(config);
  std::atomic<int> running{0}, max_running{0}, done{0};
  consumer.handle("limited", [&](JobContext&) {
    const int now = ++running;
    int seen = max_running.load();
    while (now > seen && !max_running.compare_exchange_weak(seen, now)) {
    }
    std::this_thread::sleep_for(1ms);
    --running;
    ++done;
    return JobResult::done();
  });
  consumer.start();
  ASSERT_TRUE(eventually([&] { return done.load() == kItems; }, 90s)) << "done: " << done.load();
  consumer.stop();
  std::cout << kItems << " items, max_in_flight 1: at most " << max_running.load() << " ran at once; throttled "
            << consumer.stats().items_throttled << " times" << std::endl;
  EXPECT_EQ(max_running.load(), 1);
}

// A throttled item is given back without an error and runs as soon as a slot of its type frees
// up, not when the lease it was dequeued with would have run out (here 4 s): three items of one
// zone, max_in_flight 1, 100 ms each, take about 300 ms.
TEST_F(ExecutionTest, ThrottledItemsRunAsSoonAsASlotOfTheirTypeFreesUp) {
  ConsumerConfig config = base_config();
  config.worker.threads = 4;
  config.worker.item_lease_duration = 4s;
  JobTypeConfig limited = config.default_job_type;
  limited.max_in_flight = 1;
  config.job_types["limited"] = limited;
  {
    auto conn = connect();
    pqxx::work txn(*conn);
    std::vector<NewItem> items(3);
    for (auto& item : items) {
      item.tenant = "tenant";
      item.job_type = "limited";
    }
    enqueue_batch_in(txn, items);
    txn.commit();
  }
  Consumer consumer(config);
  std::atomic<int> done{0}, running{0}, max_running{0};
  consumer.handle("limited", [&](JobContext&) {
    const int now = ++running;
    int seen = max_running.load();
    while (now > seen && !max_running.compare_exchange_weak(seen, now)) {
    }
    std::this_thread::sleep_for(100ms);
    --running;
    ++done;
    return JobResult::done();
  });
  const auto start = Clock::now();
  consumer.start();
  ASSERT_TRUE(eventually([&] { return done.load() == 3; }, 60s));
  const auto elapsed = Clock::now() - start;
  consumer.stop();
  std::cout << "3 throttled items (100 ms each, max_in_flight 1) done in " << ms(elapsed) << " ms; throttled "
            << consumer.stats().items_throttled << " times" << std::endl;
  EXPECT_EQ(max_running.load(), 1);
  EXPECT_LT(elapsed, 300ms + 1500ms) << "throttled items waited for their old item lease to run out";
  EXPECT_EQ(count("SELECT count(*) FROM quick.items WHERE error_count > 0"), 0);
}

// Exactly once: a handler writes through JobContext::transaction() and returns done; its writes
// and the item's completion commit together: one effect per item, no item left, no duplicate.
TEST_F(ExecutionTest, HandlerWritesAndTheCompletionCommitTogether) {
  create_effects_table();
  std::vector<std::int64_t> ids;
  for (int i = 0; i < 20; ++i) ids.push_back(enqueue("tenant-" + std::to_string(i % 4), "write"));
  ConsumerConfig config = base_config();
  config.worker.threads = 4;
  Consumer consumer(config);
  consumer.handle("write", [&](JobContext& job) {
    record_effect(job, 1);
    return JobResult::done();
  });
  consumer.start();
  ASSERT_TRUE(eventually([&] { return count("SELECT count(*) FROM quick.items") == 0; }, 30s));
  consumer.stop();
  EXPECT_EQ(count("SELECT count(*) FROM public.effects"), 20);
  EXPECT_EQ(count("SELECT count(DISTINCT item_id) FROM public.effects"), 20);
  for (const auto id : ids) EXPECT_EQ(effect_runs(id), std::vector<int>{1}) << "item " << id;
  EXPECT_EQ(consumer.stats().items_done, 20u);
}

// A run that wrote through the transaction and then threw, and one that wrote and returned retry,
// leave no trace: their writes are rolled back with the failed attempt, the item stays queued and
// runs again; only the successful run's write remains.
TEST_F(ExecutionTest, WritesOfAFailedAttemptAreRolledBackAndTheItemStaysQueued) {
  create_effects_table();
  const auto id = enqueue("tenant", "write");
  Consumer consumer(base_config());
  std::atomic<int> runs{0};
  std::atomic<int> queued_after_first_run{-1};
  consumer.handle("write", [&](JobContext& job) -> JobResult {
    const int run = ++runs;
    record_effect(job, run);
    if (run == 1) throw std::runtime_error("failed after writing");
    if (run == 2) return JobResult::retry("wrote, then failed");
    return JobResult::done();
  });
  consumer.start();
  ASSERT_TRUE(eventually([&] { return runs.load() >= 1; }, 30s));
  // Between the first and the second run: no effect, the item still queued with one error.
  ASSERT_TRUE(eventually(
      [&] {
        return runs.load() > 1 ||
               count("SELECT count(*) FROM quick.items WHERE error_count = 1 AND lease_id IS NULL") == 1;
      },
      10s));
  if (runs.load() == 1) {
    EXPECT_EQ(count("SELECT count(*) FROM public.effects"), 0);
  }
  ASSERT_TRUE(eventually([&] { return count("SELECT count(*) FROM quick.items") == 0; }, 30s));
  consumer.stop();
  EXPECT_EQ(runs.load(), 3);
  EXPECT_EQ(effect_runs(id), std::vector<int>{3});
  EXPECT_EQ(consumer.stats().items_retried, 2u);
}

// The lease is stolen (another consumer took the item) after the handler wrote but before it
// completed: the completion in the handler's transaction fails, the write is rolled back, and the
// item is not completed by that run. It runs again later; only that run's write remains.
TEST_F(ExecutionTest, AHandlerWhoseLeaseWasStolenBeforeCompletionHasItsWriteRolledBack) {
  create_effects_table();
  const auto id = enqueue("tenant", "write");
  Consumer consumer(base_config());
  std::atomic<int> runs{0};
  std::atomic<bool> wrote{false}, stolen{false}, first_returned{false};
  consumer.handle("write", [&](JobContext& job) {
    const int run = ++runs;
    record_effect(job, run);
    if (run == 1) {
      wrote = true;
      const auto started = Clock::now();
      while (!stolen.load() && Clock::now() - started < 20s) std::this_thread::sleep_for(1ms);
      first_returned = true;
    }
    return JobResult::done();
  });
  consumer.start();
  ASSERT_TRUE(eventually([&] { return wrote.load(); }, 30s));
  query("UPDATE quick.items SET lease_id = gen_random_uuid() WHERE id = " + std::to_string(id));
  stolen = true;
  ASSERT_TRUE(eventually([&] { return first_returned.load(); }, 10s));
  std::this_thread::sleep_for(100ms);
  if (runs.load() == 1) {
    EXPECT_EQ(count("SELECT count(*) FROM quick.items WHERE id = " + std::to_string(id)), 1)
        << "the item was completed by a run that had lost its lease";
    EXPECT_EQ(count("SELECT count(*) FROM public.effects"), 0) << "the write of a run without lease committed";
  }
  // The stolen lease runs out and the item runs again, this time to completion.
  ASSERT_TRUE(eventually([&] { return count("SELECT count(*) FROM quick.items") == 0; }, 30s));
  consumer.stop();
  EXPECT_EQ(runs.load(), 2);
  EXPECT_EQ(effect_runs(id), std::vector<int>{2});
  EXPECT_GE(consumer.stats().items_lease_lost, 1u);
  EXPECT_EQ(consumer.stats().items_done, 1u);
}

// Same, but the handler keeps working until it learns of the loss through should_stop() (the
// lease extension finds the lease gone): it is told to stop, and its write is rolled back even
// though it returns done.
TEST_F(ExecutionTest, AHandlerLearnsOfALostLeaseThroughShouldStopAndItsWriteIsRolledBack) {
  create_effects_table();
  const auto id = enqueue("tenant", "write");
  Consumer consumer(base_config());
  FirstRunUntilStopped first;
  consumer.handle("write", first_run_until_stopped(first));
  consumer.start();
  ASSERT_TRUE(eventually([&] { return first.wrote.load(); }, 30s));
  const auto stolen_at = Clock::now();
  query("UPDATE quick.items SET lease_id = gen_random_uuid() WHERE id = " + std::to_string(id));
  ASSERT_TRUE(eventually([&] { return first.returned.load(); }, 25s));
  const auto noticed_after = Clock::now() - stolen_at;
  std::cout << "the handler was told to stop " << ms(noticed_after) << " ms after its lease was stolen" << std::endl;
  EXPECT_TRUE(first.told_to_stop.load());
  EXPECT_LT(noticed_after, 3s);  // lease_extend_interval is 333 ms
  ASSERT_TRUE(eventually([&] { return count("SELECT count(*) FROM quick.items") == 0; }, 30s));
  consumer.stop();
  EXPECT_EQ(first.runs.load(), 2);
  EXPECT_EQ(effect_runs(id), std::vector<int>{2});
  EXPECT_EQ(consumer.stats().items_done, 1u);
}

// What a visit lost in a server crash leaves behind (visits commit without waiting for the WAL
// flush: docs/protocol.md#durability-of-a-consumers-commits): the item and its pointer vested
// again while this consumer still runs the item. The next visit leases it again, and that new
// lease tells the running copy to stop at once, not at the next extension round (here 20 s
// away), and its write is rolled back; the second copy completes it.
TEST_F(ExecutionTest, AnItemLeasedAgainWhileItsFirstCopyRunsStopsTheFirstCopy) {
  create_effects_table();
  const auto id = enqueue("tenant", "write");
  ConsumerConfig config = base_config();
  config.worker.item_lease_duration = 60s;
  config.worker.lease_extend_interval = 20s;
  Consumer consumer(config);
  FirstRunUntilStopped first;
  consumer.handle("write", first_run_until_stopped(first));
  consumer.start();
  ASSERT_TRUE(eventually([&] { return first.wrote.load(); }, 30s));
  const auto lost_at = Clock::now();
  // The state before the visit: no lease, the item and its pointer vested.
  query("UPDATE quick.items SET lease_id = NULL, vesting_time = zone_time WHERE id = " + std::to_string(id));
  query("UPDATE quick.pointers SET vesting_time = now() WHERE tenant = 'tenant'");
  query("NOTIFY quick_wakeup");
  ASSERT_TRUE(eventually([&] { return first.returned.load(); }, 25s));
  const auto noticed_after = Clock::now() - lost_at;
  std::cout << "the first copy was told to stop " << ms(noticed_after) << " ms after its visit was undone" << std::endl;
  EXPECT_TRUE(first.told_to_stop.load());
  EXPECT_LT(noticed_after, 10s) << "told by the new lease, not by an extension round";
  ASSERT_TRUE(eventually([&] { return count("SELECT count(*) FROM quick.items") == 0; }, 30s));
  consumer.stop();
  EXPECT_EQ(first.runs.load(), 2);
  EXPECT_EQ(effect_runs(id), std::vector<int>{2});
  EXPECT_EQ(consumer.stats().items_done, 1u);
}

}  // namespace
}  // namespace quick
