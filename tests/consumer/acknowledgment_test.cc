// The writer's batches of acknowledgments (docs/consumer.md#acknowledger-the-writer-thread): one
// acknowledgment the database will not take must not cost the others in its batch theirs (a
// completed item would run again), what a handler returns is made acceptable before it is
// batched, and stop() writes the outcomes of the items that finished even when another handler
// is stuck.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "quick/consumer.h"
#include "quick/quick.h"
#include "support/consumer_helpers.h"
#include "support/eventually.h"
#include "support/test_database.h"

namespace quick {
namespace {

using namespace std::chrono_literals;
using testing::eventually;

// How many times each item's handler ran.
class Runs {
 public:
  void add(std::int64_t id) {
    std::lock_guard<std::mutex> lock(mutex_);
    ++runs_[id];
  }
  int of(std::int64_t id) const {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto found = runs_.find(id);
    return found == runs_.end() ? 0 : found->second;
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::int64_t, int> runs_;
};

class AcknowledgmentTest : public testing::DatabaseTest {
 protected:
  // Acknowledgments wait up to a second, so that every outcome of a test's first round of runs
  // is written in one batch.
  ConsumerConfig batching_config() const {
    ConsumerConfig config = testing::fast_config(url(), "acks");
    config.worker.ack_interval = 1s;
    return config;
  }
  std::int64_t enqueue(const std::string& tenant, const std::string& job_type) {
    return testing::enqueue_one(url(), tenant, job_type);
  }
  int count(const std::string& sql) const { return query_value<int>(sql); }
  // Enqueues `held` items of job type "held" into zone "tenant-b0", starts the consumer, waits
  // until they are all leased (one visit takes them all), and has `holder` lock the zone's rows,
  // as a tenant move copying the zone does, until it commits.
  void lease_then_hold_the_zone(Consumer& consumer, int held, pqxx::work& holder) {
    testing::enqueue_items(url(), held, 1, "held", "tenant-b");
    consumer.start();
    ASSERT_TRUE(eventually([&] { return consumer.stats().items_dequeued >= static_cast<std::uint64_t>(held); }, 20s));
    holder.exec("SELECT 1 FROM quick.items WHERE tenant = 'tenant-b0' FOR UPDATE");
  }
  bool queued(std::int64_t id) const {
    return count("SELECT count(*) FROM quick.items WHERE id = " + std::to_string(id)) == 1;
  }
};

// A retry delay over quick.limits.max_vesting_delay makes quick.ack_items refuse its whole
// statement. The items completed in the same batch are still completed, once: each ran one time,
// also after their leases (2 s) would have run out. The refused retry is written again to vest
// at once, so its failures still count, and after max_attempts the item is dead instead of
// coming back after every lease.
TEST_F(AcknowledgmentTest, ARefusedRetryDoesNotCostTheCompletionsInItsBatch) {
  query("UPDATE quick.limits SET max_vesting_delay = interval '1 minute'");
  ConsumerConfig config = batching_config();
  JobTypeConfig far;
  far.retry.max_attempts = 2;
  config.job_types["too_far"] = far;
  Consumer consumer(config);
  Runs runs;
  consumer.handle("fine", [&](JobContext& job) {
    runs.add(job.item().id);
    return JobResult::done();
  });
  consumer.handle("too_far", [&](JobContext& job) {
    runs.add(job.item().id);
    return JobResult::retry_after(2min, "come back later");
  });
  const auto refused = enqueue("tenant-x", "too_far");
  std::vector<std::int64_t> fine;
  for (int k = 0; k < 3; ++k) fine.push_back(enqueue("tenant-" + std::to_string(k), "fine"));
  consumer.start();

  ASSERT_TRUE(eventually([&] { return !queued(fine[0]) && !queued(fine[1]) && !queued(fine[2]); }, 20s))
      << "the completions were dropped with the refused retry";
  ASSERT_TRUE(eventually(
      [&] { return count("SELECT count(*) FROM quick.dead_items WHERE id = " + std::to_string(refused)) == 1; }, 20s))
      << "the refused retry never counted its failures: runs " << runs.of(refused);
  std::this_thread::sleep_for(2500ms);  // past the leases the first round took
  consumer.stop();
  for (const auto id : fine) EXPECT_EQ(runs.of(id), 1) << "item " << id;
  EXPECT_EQ(runs.of(refused), 2);
  EXPECT_EQ(consumer.stats().items_done, 3u);
}

// JobResult::retry_after documents that a negative delay vests the item at once; the database
// refuses a negative interval, so the Worker sends zero.
TEST_F(AcknowledgmentTest, ANegativeRetryDelayVestsAtOnce) {
  Consumer consumer(batching_config());
  Runs runs;
  consumer.handle("fine", [&](JobContext& job) {
    runs.add(job.item().id);
    return JobResult::done();
  });
  consumer.handle("again", [&](JobContext& job) {
    runs.add(job.item().id);
    return job.item().error_count == 0 ? JobResult::retry_after(-1ms, "at once") : JobResult::done();
  });
  const auto again = enqueue("tenant-a", "again");
  const auto fine = enqueue("tenant-b", "fine");
  consumer.start();
  ASSERT_TRUE(eventually([&] { return !queued(again) && !queued(fine); }, 20s));
  std::this_thread::sleep_for(2500ms);
  consumer.stop();
  EXPECT_EQ(runs.of(again), 2);
  EXPECT_EQ(runs.of(fine), 1);
}

// A reason that is not valid UTF-8 (an exception's what() in another encoding) would make the
// database refuse the batch: it is stored with the bad byte replaced, and the failure counts.
TEST_F(AcknowledgmentTest, AReasonThatIsNotUtf8IsStoredWithTheBadBytesReplaced) {
  Consumer consumer(batching_config());
  Runs runs;
  std::mutex mutex;
  std::optional<std::string> seen_error;
  consumer.handle("latin1", [&](JobContext& job) {
    runs.add(job.item().id);
    if (job.item().error_count == 0) return JobResult::retry("caf\xe9 closed");
    std::lock_guard<std::mutex> lock(mutex);
    seen_error = job.item().last_error;
    return JobResult::done();
  });
  const auto id = enqueue("tenant-a", "latin1");
  consumer.start();
  ASSERT_TRUE(eventually([&] { return !queued(id); }, 20s));
  consumer.stop();
  EXPECT_EQ(runs.of(id), 2);
  std::lock_guard<std::mutex> lock(mutex);
  EXPECT_EQ(seen_error.value_or("<none>"), "caf\xEF\xBF\xBD closed");
}

// One handler ignores should_stop(); stop() leaves its Worker behind after the grace (2 s), but
// still writes the completion another handler made before: stop() returns only once it is
// written. The completion waits in its batch until the stop (ack_interval 10 s), and then for a
// row lock this test holds until 2.4 s into stop(), so a stop() that returned without waiting for
// the writer would find the item still queued.
TEST_F(AcknowledgmentTest, StopWritesFinishedItemsOutcomesEvenWhenAHandlerIsStuck) {
  ConsumerConfig config = batching_config();
  config.worker.ack_interval = 10s;
  config.stop_deadline = 100ms;
  Consumer consumer(config);
  // Shared with the stuck handler, which outlives this test's stop() and must not touch its
  // locals once released.
  struct Stuck {
    std::atomic<bool> started{false}, release{false};
  };
  auto stuck = std::make_shared<Stuck>();
  std::atomic<bool> finished{false};
  consumer.handle("stuck", [stuck](JobContext&) {
    stuck->started = true;
    while (!stuck->release) std::this_thread::sleep_for(5ms);  // ignores should_stop()
    return JobResult::done();
  });
  consumer.handle("fine", [&](JobContext&) {
    finished = true;
    return JobResult::done();
  });
  enqueue("tenant-a", "stuck");
  const auto fine = enqueue("tenant-b", "fine");
  consumer.start();
  ASSERT_TRUE(eventually([&] { return stuck->started.load() && finished.load(); }, 20s));

  const auto stop_began = std::chrono::steady_clock::now();
  std::atomic<bool> locked{false};
  std::thread lock_holder([&] {
    auto conn = connect();
    pqxx::work txn(*conn);
    txn.exec("SELECT 1 FROM quick.items WHERE id = " + std::to_string(fine) + " FOR UPDATE");
    locked = true;
    std::this_thread::sleep_until(stop_began + 2400ms);
    txn.commit();
  });
  while (!locked) std::this_thread::sleep_for(1ms);
  consumer.stop();
  const bool fine_still_queued = queued(fine);
  lock_holder.join();
  stuck->release = true;
  EXPECT_FALSE(fine_still_queued) << "stop() returned before writing the completion of a finished item";
}

// A handler that returns within its execution_bound, but whose completion then waits in its batch
// past the bound and past the item's lease (2 s): the lease is kept until the completion is
// written, so the item does not run again meanwhile. (Only a handler still running past its
// bound lets its lease run out.)
TEST_F(AcknowledgmentTest, AnItemWhoseCompletionWaitsPastItsExecutionBoundKeepsItsLease) {
  ConsumerConfig config = batching_config();
  config.worker.ack_interval = 10s;
  config.default_job_type.execution_bound = 300ms;
  Consumer consumer(config);
  Runs runs;
  consumer.handle("slowish", [&](JobContext& job) {
    runs.add(job.item().id);
    std::this_thread::sleep_for(200ms);
    return JobResult::done();
  });
  const auto id = enqueue("tenant-a", "slowish");
  consumer.start();
  ASSERT_TRUE(eventually([&] { return runs.of(id) == 1; }, 20s));
  std::this_thread::sleep_for(4s);  // the bound and two leases' worth; the completion still waits
  EXPECT_EQ(runs.of(id), 1) << "the lease ran out while the completion waited";
  consumer.stop();  // writes it
  EXPECT_FALSE(queued(id));
  EXPECT_EQ(consumer.stats().items_done, 1u);
}

// Another session holds one acknowledged item's row (a handler's own transaction elsewhere, a
// tenant move copying its zone): that acknowledgment waits for it, the others in its batch are
// written meanwhile instead of waiting with it.
TEST_F(AcknowledgmentTest, ARowAnotherSessionHoldsDoesNotHoldUpTheOtherAcknowledgments) {
  Consumer consumer(batching_config());
  std::atomic<bool> locked_started{false}, row_locked{false};
  consumer.handle("free", [&](JobContext&) { return JobResult::done(); });
  consumer.handle("locked", [&](JobContext&) {
    locked_started = true;
    while (!row_locked) std::this_thread::sleep_for(5ms);
    return JobResult::done();
  });
  const auto free_item = enqueue("tenant-a", "free");
  const auto locked_item = enqueue("tenant-b", "locked");
  auto holder_conn = connect();
  pqxx::work holder(*holder_conn);
  consumer.start();
  ASSERT_TRUE(eventually([&] { return locked_started.load(); }, 20s));
  holder.exec("SELECT 1 FROM quick.items WHERE id = " + std::to_string(locked_item) + " FOR UPDATE");
  row_locked = true;
  const bool free_written = eventually([&] { return !queued(free_item); }, 8s);
  const bool locked_waits = queued(locked_item);
  holder.commit();
  EXPECT_TRUE(free_written) << "the completion of a free row waited for another item's row lock";
  EXPECT_TRUE(locked_waits);
  EXPECT_TRUE(eventually([&] { return !queued(locked_item); }, 10s)) << "written once the row was free";
  consumer.stop();
  EXPECT_EQ(consumer.stats().items_done, 2u);
}

// A tenant move copying a zone holds all of its rows. While it does, the completions of that
// tenant's many held items wait, and the writer does not spend its flushes waiting on each of them
// in turn: another tenant's completion, which arrives meanwhile, is written within a second or
// two. (Before, every flush wrote each held row's acknowledgment alone and waited 50 ms on each:
// with 60 of them, the other tenant's completion waited behind 3 s of lock waits, twice.)
TEST_F(AcknowledgmentTest, AZoneAnotherSessionHoldsDoesNotSlowTheOtherAcknowledgmentsDown) {
  ConsumerConfig config = testing::fast_config(url(), "acks");
  config.worker.item_lease_duration = 60s;  // the held items' leases outlast the test
  constexpr int kHeld = 60;
  Consumer consumer(config);
  std::atomic<bool> zone_locked{false};
  consumer.handle("held", [&](JobContext&) {
    while (!zone_locked) std::this_thread::sleep_for(5ms);
    return JobResult::done();
  });
  consumer.handle("free", [&](JobContext&) { return JobResult::done(); });
  auto holder_conn = connect();
  pqxx::work holder(*holder_conn);
  lease_then_hold_the_zone(consumer, kHeld, holder);
  zone_locked = true;
  // The held completions are written as a batch first, which waits for the lock for a second.
  std::this_thread::sleep_for(1500ms);
  const auto free_item = enqueue("tenant-a", "free");
  const bool free_written = eventually([&] { return !queued(free_item); }, 2s);
  const int held_waiting = count("SELECT count(*) FROM quick.items WHERE tenant = 'tenant-b0'");
  holder.commit();
  EXPECT_TRUE(free_written) << "another tenant's completion waited behind the held zone's";
  EXPECT_EQ(held_waiting, kHeld);
  EXPECT_TRUE(eventually([&] { return count("SELECT count(*) FROM quick.items") == 0; }, 10s))
      << "the held zone's completions are written once its rows are free";
  consumer.stop();
  EXPECT_EQ(consumer.stats().items_done, static_cast<std::uint64_t>(kHeld + 1));
  EXPECT_EQ(consumer.stats().items_lease_lost, 0u);
}

// The same, while that tenant's handlers keep finishing: each of its new completions is set aside
// with the ones already waiting, instead of going into the next batch, which would wait a second
// for the held rows before writing the others. (Before, every batch that carried one did: the
// other tenant's completions took over a second each.)
TEST_F(AcknowledgmentTest, CompletionsThatKeepArrivingForAHeldZoneDoNotSlowTheOthersDown) {
  ConsumerConfig config = testing::fast_config(url(), "acks");
  config.worker.item_lease_duration = 60s;
  config.worker.threads = 20;  // every held item runs at once, finishing one at a time
  constexpr int kHeld = 12;
  Consumer consumer(config);
  std::atomic<bool> zone_locked{false};
  std::atomic<int> may_finish{0};
  consumer.handle("held", [&](JobContext&) {
    while (true) {
      int left = may_finish.load();
      if (zone_locked && left > 0 && may_finish.compare_exchange_weak(left, left - 1)) break;
      std::this_thread::sleep_for(2ms);
    }
    return JobResult::done();
  });
  consumer.handle("free", [&](JobContext&) { return JobResult::done(); });
  auto holder_conn = connect();
  pqxx::work holder(*holder_conn);
  lease_then_hold_the_zone(consumer, kHeld, holder);
  zone_locked = true;
  may_finish = 1;  // its batch waits a second for the lock; then it is set aside
  std::this_thread::sleep_for(1500ms);
  int written_soon = 0;
  constexpr int kRounds = 6;
  for (int i = 0; i < kRounds; ++i) {
    may_finish.fetch_add(1);  // another completion of the held zone
    std::this_thread::sleep_for(20ms);
    const auto item = enqueue("tenant-a", "free");
    if (eventually([&] { return !queued(item); }, 600ms)) ++written_soon;
  }
  holder.commit();
  may_finish = kHeld;
  EXPECT_EQ(written_soon, kRounds) << "another tenant's completions waited behind the held zone's new ones";
  EXPECT_TRUE(eventually([&] { return count("SELECT count(*) FROM quick.items") == 0; }, 10s));
  consumer.stop();
  EXPECT_EQ(consumer.stats().items_lease_lost, 0u);
}

// default_job_type.max_in_flight limits every job type not listed under job_types. A type at its
// limit is left out of the visits' dequeue, as a listed one is: while its one item runs, visits
// do not lease its other items only to release them (items_throttled stays where the first
// visit left it).
TEST_F(AcknowledgmentTest, ATypeAtTheDefaultLimitIsLeftOutOfTheDequeue) {
  ConsumerConfig config = testing::fast_config(url(), "throttle");
  config.default_job_type.max_in_flight = 1;
  config.manager.dequeue_max = 10;
  Consumer consumer(config);
  std::atomic<bool> started{false}, release{false};
  consumer.handle("unlisted", [&](JobContext& job) {
    started = true;
    while (!release && !job.should_stop()) std::this_thread::sleep_for(5ms);
    return JobResult::done();
  });
  {
    auto conn = connect();
    pqxx::work txn(*conn);
    for (int k = 0; k < 30; ++k) {
      NewItem item;
      item.tenant = "tenant";
      item.job_type = "unlisted";
      enqueue_in(txn, item);
    }
    txn.commit();
  }
  consumer.start();
  ASSERT_TRUE(eventually([&] { return started.load(); }, 20s));
  std::this_thread::sleep_for(300ms);  // the first visit's extra items are released by now
  const auto throttled_before = consumer.stats().items_throttled;
  std::this_thread::sleep_for(1s);
  const auto throttled_after = consumer.stats().items_throttled;
  release = true;
  consumer.stop();
  EXPECT_LE(throttled_before, 18u);  // one visit or two: at most dequeue_max - 1 each
  EXPECT_EQ(throttled_after, throttled_before) << "visits kept leasing and releasing a type at its limit";
}

}  // namespace
}  // namespace quick
