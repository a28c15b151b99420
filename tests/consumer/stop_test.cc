// Consumer::stop(): loses nothing under load, is prompt (stop_deadline plus a short grace even
// when a handler ignores should_stop()), is idempotent, and gives back buffered items at once.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <future>
#include <iostream>
#include <memory>
#include <mutex>
#include <thread>

#include "quick/consumer.h"
#include "quick/quick.h"
#include "support/consumer_helpers.h"
#include "support/eventually.h"
#include "support/processes.h"
#include "support/test_database.h"

namespace quick {
namespace {

using namespace testing;

class StopTest : public testing::DatabaseTest {
 protected:
  int count(const std::string& where) { return query_value<int>("SELECT count(*) FROM quick.items WHERE " + where); }
  // Items whose lease is running: held by some consumer.
  int leased() { return count("lease_id IS NOT NULL AND vesting_time > clock_timestamp()"); }
};

// A producer keeps committing items while two consumers run; both are stopped mid-load. Every
// committed item is then either completed or back in the queue, unleased; a second pair of
// consumers drains the rest.
TEST_F(StopTest, StopDuringLoadLosesNothingAndLeavesNoItemLeased) {
  std::mutex committed_mutex;
  std::set<std::int64_t> committed;
  std::atomic<bool> producing{true};
  std::thread producer([&] {
    pqxx::connection conn(url());
    int n = 0;
    while (producing.load()) {
      std::vector<NewItem> items;
      for (int i = 0; i < 5; ++i, ++n) {
        NewItem item;
        item.tenant = "t" + std::to_string(n % 40);
        item.job_type = "work";
        item.payload = "{\"n\":" + std::to_string(n) + "}";
        items.push_back(item);
      }
      pqxx::work txn(conn);
      const auto results = enqueue_batch_in(txn, items);
      txn.commit();
      std::lock_guard<std::mutex> lock(committed_mutex);
      for (const auto& result : results) committed.insert(result.item_id);
      std::this_thread::sleep_for(milliseconds(3));
    }
  });

  RunLog first_runs;
  auto make_consumers = [&](const std::string& prefix, RunLog& runs) {
    std::vector<std::unique_ptr<Consumer>> consumers;
    for (int c = 0; c < 2; ++c) {
      auto config = fast_config(url(), prefix + std::to_string(c));
      config.worker.item_lease_duration = seconds(30);  // only stop() may give items back
      auto consumer = std::make_unique<Consumer>(config);
      consumer->handle("work", [&runs](JobContext& job) {
        runs.record(job.item().id);
        std::this_thread::sleep_for(milliseconds(2));
        return JobResult::done();
      });
      consumers.push_back(std::move(consumer));
    }
    return consumers;
  };
  auto first = make_consumers("first-", first_runs);
  for (auto& consumer : first) consumer->start();
  ASSERT_TRUE(eventually([&] { return first_runs.distinct() >= 150; }, seconds(60)))
      << "the consumers ran only " << first_runs.distinct() << " items";

  // Stop both at once, mid-load, while the producer goes on.
  std::vector<std::thread> stoppers;
  for (auto& consumer : first) stoppers.emplace_back([&consumer] { consumer->stop(); });
  for (auto& stopper : stoppers) stopper.join();
  std::this_thread::sleep_for(milliseconds(100));  // let the producer commit a few more
  producing = false;
  producer.join();

  std::uint64_t done_by_first = 0, released_by_first = 0;
  for (auto& consumer : first) {
    done_by_first += consumer->stats().items_done;
    released_by_first += consumer->stats().items_released;
  }
  const auto still_queued = queued_ids(url());
  const auto ran_before_stop = first_runs.ids();
  std::cout << committed.size() << " items committed; before the stop " << ran_before_stop.size()
            << " ran (items_done=" << done_by_first << ", released at stop=" << released_by_first << "); "
            << still_queued.size() << " still queued" << std::endl;
  EXPECT_EQ(leased(), 0) << "a stopped consumer still holds leases: its items are invisible until they expire";
  for (const auto id : committed) {
    EXPECT_TRUE(ran_before_stop.count(id) > 0 || still_queued.count(id) > 0)
        << "item " << id << " was committed but neither ran nor is queued: lost";
  }
  for (const auto id : ran_before_stop) {
    EXPECT_EQ(still_queued.count(id), 0u) << "item " << id
                                          << " ran to completion before the stop but its "
                                             "acknowledgment was not flushed";
  }
  EXPECT_EQ(done_by_first, ran_before_stop.size());
  EXPECT_FALSE(still_queued.empty()) << "the stop was not mid-load";

  RunLog second_runs;
  auto second = make_consumers("second-", second_runs);
  for (auto& consumer : second) consumer->start();
  const bool drained = eventually([&] { return count("true") == 0; }, seconds(60));
  for (auto& consumer : second) consumer->stop();
  ASSERT_TRUE(drained) << count("true") << " items still queued after 60 s";
  std::uint64_t done_total = done_by_first;
  for (auto& consumer : second) done_total += consumer->stats().items_done;
  for (const auto id : committed) {
    EXPECT_GE(first_runs.runs(id) + second_runs.runs(id), 1) << "item " << id << " never ran";
  }
  EXPECT_EQ(done_total, committed.size()) << "each committed item is completed exactly once";
  std::cout << "after draining: " << committed.size() << " committed, " << done_total << " completed, "
            << (first_runs.ran_more_than_once() + second_runs.ran_more_than_once()) << " ran twice" << std::endl;
}

// Handlers that honour should_stop(): stop() gives them stop_deadline to finish, then asks them
// to stop, and returns shortly after. Their items are released: they vest at once, and the
// interruption is not counted as an error.
TEST_F(StopTest, StopIsPromptWithLongHandlersThatHonourShouldStop) {
  const auto ids = enqueue_items(url(), 3, 3, "long");
  auto config = fast_config(url(), "prompt");
  config.worker.threads = 3;
  config.stop_deadline = milliseconds(800);
  Consumer consumer(config);
  std::atomic<int> running{0}, asked_to_stop{0};
  consumer.handle("long", [&](JobContext& job) {
    ++running;
    const auto give_up = Clock::now() + seconds(60);
    while (!job.should_stop() && Clock::now() < give_up) std::this_thread::sleep_for(milliseconds(5));
    if (job.should_stop()) ++asked_to_stop;
    return JobResult::retry("interrupted");
  });
  consumer.start();
  ASSERT_TRUE(eventually([&] { return running.load() == 3; }, seconds(30)))
      << "only " << running << " handlers started";

  const auto stop_started = Clock::now();
  consumer.stop();
  const auto elapsed = std::chrono::duration_cast<milliseconds>(Clock::now() - stop_started);
  std::cout << "stop() with 3 long handlers and stop_deadline 800ms took " << elapsed.count() << " ms\n"
            << consumer.stats().to_string() << std::endl;
  EXPECT_GE(elapsed, config.stop_deadline) << "running handlers were not given stop_deadline to finish";
  EXPECT_LT(elapsed, config.stop_deadline + milliseconds(1500)) << "stop() was not prompt";
  EXPECT_EQ(asked_to_stop.load(), 3) << "should_stop() did not turn true for every running handler";

  const auto stats = consumer.stats();
  EXPECT_EQ(stats.items_released, 3u);
  EXPECT_EQ(stats.items_retried, 0u) << "an interruption by stop() is not a failure";
  EXPECT_EQ(count("true"), 3);
  EXPECT_EQ(count("lease_id IS NULL AND vesting_time <= clock_timestamp() AND error_count = 0"), 3)
      << "interrupted items must vest at once, with their error count unchanged";
}

TEST_F(StopTest, StopIsIdempotentSafeBeforeStartAndFromSeveralThreads) {
  enqueue_items(url(), 20, 5, "quick");
  {
    Consumer never_started(fast_config(url(), "never-started"));
    const auto before = Clock::now();
    never_started.stop();
    never_started.stop();
    EXPECT_LT(Clock::now() - before, milliseconds(500)) << "stop() before start() must return at once";
  }  // destructor of a consumer that never started

  RunLog runs;
  auto consumer = std::make_unique<Consumer>(fast_config(url(), "twice"));
  consumer->handle("quick", [&runs](JobContext& job) {
    runs.record(job.item().id);
    return JobResult::done();
  });
  consumer->start();
  consumer->start();  // idempotent too
  ASSERT_TRUE(eventually([&] { return count("true") == 0; }, seconds(30)));

  const auto before = Clock::now();
  std::vector<std::thread> stoppers;
  for (int i = 0; i < 3; ++i) stoppers.emplace_back([&] { consumer->stop(); });
  for (auto& stopper : stoppers) stopper.join();
  consumer->stop();
  const auto elapsed = Clock::now() - before;
  EXPECT_LT(elapsed, seconds(3)) << "stopping an idle consumer took "
                                 << std::chrono::duration_cast<milliseconds>(elapsed).count() << " ms";
  EXPECT_EQ(consumer->stats().items_done, 20u);
  consumer.reset();  // destructor after stop
  EXPECT_EQ(runs.distinct(), 20u);
  EXPECT_EQ(runs.total(), 20u);
}

// One Worker is busy with a handler that will not finish soon; the items buffered behind it are
// released as soon as stop() begins, not when it ends: they vest at once, error count unchanged.
TEST_F(StopTest, ItemsBufferedButNotStartedAreReleasedAsSoonAsStopBegins) {
  constexpr int kItems = 12;
  enqueue_items(url(), kItems, kItems, "job");
  auto config = fast_config(url(), "buffered");
  config.worker.threads = 1;
  config.worker.prefetch_zones = 6;
  config.stop_deadline = seconds(20);
  Consumer consumer(config);
  std::mutex mutex;
  std::condition_variable changed;
  bool let_go = false;
  std::atomic<std::int64_t> blocker{0};
  std::atomic<int> started{0};
  consumer.handle("job", [&](JobContext& job) {
    ++started;
    std::int64_t expected = 0;
    if (blocker.compare_exchange_strong(expected, job.item().id)) {
      std::unique_lock<std::mutex> lock(mutex);
      changed.wait_for(lock, seconds(60), [&] { return let_go; });
    }
    return JobResult::done();
  });
  consumer.start();
  ASSERT_TRUE(eventually([&] { return blocker.load() != 0 && consumer.stats().items_buffered >= 3; }, seconds(30)))
      << "expected one running and at least 3 buffered items: " << consumer.stats().to_string();
  std::this_thread::sleep_for(milliseconds(100));  // let the Scanner fill the buffer up
  const int leased_before = leased();
  const auto buffered_before = consumer.stats().items_buffered;
  std::cout << "before stop: 1 running, " << buffered_before << " buffered, " << leased_before << " leased"
            << std::endl;
  ASSERT_GE(leased_before, 4);

  auto stopping = std::async(std::launch::async, [&] { consumer.stop(); });
  const bool released = eventually([&] { return leased() == 1; }, seconds(10));
  const bool stop_still_running = stopping.wait_for(milliseconds(0)) != std::future_status::ready;
  {
    std::lock_guard<std::mutex> lock(mutex);
    let_go = true;
  }
  changed.notify_all();
  stopping.get();

  EXPECT_TRUE(released) << "buffered items still leased " << leased() << " while stop() waited for the running handler";
  EXPECT_TRUE(stop_still_running) << "stop() did not wait for the running handler";
  EXPECT_EQ(started.load(), 1) << "a buffered item was started after stop() began";
  EXPECT_EQ(count("true"), kItems - 1) << "only the running item completes";
  EXPECT_EQ(count("lease_id IS NOT NULL"), 0);
  EXPECT_EQ(count("error_count <> 0"), 0) << "releasing an item is not an error";
  EXPECT_EQ(count("vesting_time > clock_timestamp()"), 0) << "released items vest at once";
  const auto stats = consumer.stats();
  EXPECT_GE(stats.items_released, static_cast<std::uint64_t>(leased_before - 1));
  EXPECT_EQ(stats.items_done, 1u);
}

// stop() gives back the items it did not finish "so they become available at once" (consumer.h):
// another consumer must get them within seconds, not when the stopped consumer's 30 s leases
// would have run out. (One item per zone, so each zone's pointer is what must vest again.)
TEST_F(StopTest, ItemsReleasedByStopAreRunByAnotherConsumerWithoutWaitingForTheirLeases) {
  constexpr int kItems = 8;
  const auto ids = enqueue_items(url(), kItems, kItems, "job");
  auto config = fast_config(url(), "leaving");
  config.worker.threads = 1;
  config.worker.prefetch_zones = 4;
  config.worker.item_lease_duration = seconds(30);
  config.stop_deadline = milliseconds(100);
  std::atomic<int> started{0};
  {
    Consumer leaving(config);
    leaving.handle("job", [&](JobContext& job) {
      ++started;
      while (!job.should_stop()) std::this_thread::sleep_for(milliseconds(5));
      return JobResult::retry("stopping");
    });
    leaving.start();
    ASSERT_TRUE(eventually([&] { return started.load() == 1 && leaving.stats().items_buffered >= 2; }, seconds(30)))
        << leaving.stats().to_string();
    leaving.stop();
    std::cout << "the stopped consumer released " << leaving.stats().items_released << " items" << std::endl;
    ASSERT_GE(leaving.stats().items_released, 3u);
  }
  ASSERT_EQ(count("lease_id IS NOT NULL"), 0);

  RunLog runs;
  auto next_config = fast_config(url(), "taking-over");
  next_config.worker.item_lease_duration = seconds(30);
  Consumer next(next_config);
  next.handle("job", [&runs](JobContext& job) {
    runs.record(job.item().id);
    return JobResult::done();
  });
  const auto started_next = Clock::now();
  next.start();
  const bool drained = eventually([&] { return count("true") == 0; }, seconds(6));
  next.stop();
  std::cout << "the next consumer ran " << runs.distinct() << " of " << kItems << " items in "
            << seconds_since(started_next) << " s" << std::endl;
  EXPECT_TRUE(drained) << count("true") << " released items were not run within 6 s; their zones' pointers vest in: "
                       << query(
                              "SELECT string_agg(round(extract(epoch FROM p.vesting_time - now()))::text || 's', ', ') "
                              "FROM quick.pointers p")[0][0]
                              .c_str();
}

// A handler that ignores should_stop() is left behind after stop_deadline and a short grace:
// stop() returns, and its item vests again when its lease runs out (it is no longer extended),
// so another consumer can run it while the stuck handler is still running.
TEST_F(StopTest, HandlerIgnoringShouldStopDoesNotMakeStopHang) {
  const auto ids = enqueue_items(url(), 1, 1, "stubborn");
  // Shared with the handler, which outlives the test body's stack if the worker is left behind.
  struct Stuck {
    std::mutex mutex;
    std::condition_variable changed;
    bool let_go = false;
    std::atomic<bool> running{false}, returned{false};
  };
  auto stuck = std::make_shared<Stuck>();
  auto config = fast_config(url(), "stubborn");
  config.worker.threads = 1;
  config.stop_deadline = milliseconds(300);
  config.worker.item_lease_duration = seconds(2);
  auto consumer = std::make_unique<Consumer>(config);
  consumer->handle("stubborn", [stuck](JobContext&) {
    stuck->running = true;
    std::unique_lock<std::mutex> lock(stuck->mutex);
    stuck->changed.wait_for(lock, seconds(60), [&] { return stuck->let_go; });  // never looks at should_stop
    stuck->returned = true;
    return JobResult::done();
  });
  consumer->start();
  ASSERT_TRUE(eventually([&] { return stuck->running.load(); }, seconds(30)));

  const auto stop_started = Clock::now();
  auto stopping = std::async(std::launch::async, [&] { consumer->stop(); });
  const bool stopped = stopping.wait_for(config.stop_deadline + seconds(2) + milliseconds(1500)) ==
                       std::future_status::ready;
  const auto elapsed = std::chrono::duration_cast<milliseconds>(Clock::now() - stop_started);
  std::cout << "stop() with a handler ignoring should_stop took " << elapsed.count() << " ms" << std::endl;
  if (!stopped) {
    {
      std::lock_guard<std::mutex> lock(stuck->mutex);
      stuck->let_go = true;
    }
    stuck->changed.notify_all();
    stopping.wait();
    FAIL() << "stop() hung on a handler that ignores should_stop() (stop_deadline 300ms + 2s grace)";
  }
  EXPECT_FALSE(stuck->returned.load());

  // The item's lease is not extended any more: another consumer gets it within the lease.
  RunLog rescue_runs;
  Consumer rescuer(fast_config(url(), "rescuer"));
  rescuer.handle("stubborn", [&rescue_runs](JobContext& job) {
    rescue_runs.record(job.item().id);
    return JobResult::done();
  });
  rescuer.start();
  const bool rescued = eventually([&] { return count("true") == 0; }, seconds(30));
  rescuer.stop();
  EXPECT_TRUE(rescued) << "the stuck handler's item never vested again";
  EXPECT_EQ(rescue_runs.runs(ids.front()), 1);
  EXPECT_FALSE(stuck->returned.load()) << "the item ran again while the first handler was still stuck";

  {
    std::lock_guard<std::mutex> lock(stuck->mutex);
    stuck->let_go = true;
  }
  stuck->changed.notify_all();
  EXPECT_TRUE(eventually([&] { return stuck->returned.load(); }, seconds(10)));
  consumer.reset();                                // destroying the consumer whose worker was left behind is safe
  std::this_thread::sleep_for(milliseconds(200));  // let the left-behind worker thread end
}

}  // namespace
}  // namespace quick
