// An idle consumer learns about new work from notifications, not by polling
// (docs/consumer.md#waking-up): it sleeps for long stretches, wakes for a new item at once,
// wakes for a delayed item when it vests, falls back to polling while its listener connection
// is lost and listens again afterwards, and stops promptly while asleep.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "quick/consumer.h"
#include "quick/producer.h"
#include "support/consumer_helpers.h"
#include "support/eventually.h"
#include "support/test_database.h"

namespace quick {
namespace {

using testing::Clock;
using testing::eventually;
using testing::milliseconds;
using testing::seconds;

class WakeUpTest : public testing::DatabaseTest {
 protected:
  ConsumerConfig sleepy_config(const std::string& id) { return testing::slow_polling_config(url(), id); }

  void enqueue(const std::string& tenant, milliseconds delay = milliseconds(0)) {
    testing::enqueue_one(url(), tenant, "job", delay);
  }

  int listener_backends(const std::string& consumer_id) {
    return query_value<int>("SELECT count(*) FROM pg_stat_activity WHERE application_name = " +
                            connect()->quote("quick/" + consumer_id + "/listener"));
  }

  // Registers a handler that counts its runs, and starts the consumer.
  static void start_counting(Consumer& consumer, std::atomic<int>& runs) {
    consumer.handle("job", [&runs](JobContext&) {
      ++runs;
      return JobResult::done();
    });
    consumer.start();
  }

  // Waits until the consumer has scanned and gone to sleep with its listener connected.
  void wait_until_asleep(Consumer& consumer, const std::string& id) {
    ASSERT_TRUE(eventually([&] { return consumer.stats().scans > 0 && listener_backends(id) == 1; }, seconds(10)));
    std::this_thread::sleep_for(milliseconds(300));
  }
};

TEST_F(WakeUpTest, AnIdleConsumerSleepsAndANewItemWakesItAtOnce) {
  Consumer consumer(sleepy_config("sleepy"));
  std::atomic<int> runs{0};
  start_counting(consumer, runs);
  wait_until_asleep(consumer, "sleepy");

  const auto scans_before = consumer.stats().scans;
  std::this_thread::sleep_for(seconds(2));
  EXPECT_LE(consumer.stats().scans - scans_before, 1u) << "an idle, listening Scanner does not poll";

  const auto enqueued = Clock::now();
  enqueue("tenant");
  ASSERT_TRUE(eventually([&] { return runs.load() == 1; }, seconds(5))) << "woken by the notification";
  EXPECT_LT(testing::seconds_since(enqueued), 5.0);
  EXPECT_GE(consumer.stats().wakeups, 1u);
  consumer.stop();
}

// The one-call enqueue skips its wake-up while every listening Scanner is awake
// (docs/consumer.md#skipping-the-wake-up-while-every-scanner-is-awake): a sleeping consumer is
// woken by one at once, a busy one receives few of them while a stream of one-call enqueues
// runs, and once idle again it is woken at once again. Polling alone would take 10 s here.
TEST_F(WakeUpTest, OneCallEnqueuesWakeASleepingConsumerButNotABusyOne) {
  Consumer consumer(sleepy_config("handshake"));
  std::atomic<int> runs{0};
  // The stream's jobs take 10 ms each (4 Workers: 400 a second), so that the consumer stays busy
  // while one connection enqueues them even on a loaded machine; with no-op jobs a starved
  // producer let it drain and sleep between enqueues (160-277 wake-ups of 500 under two
  // busy-looping processes), which is the behaviour asked for, not the case tested here.
  consumer.handle("job", [&runs](JobContext& job) {
    if (job.item().tenant.rfind("stream-", 0) == 0) std::this_thread::sleep_for(milliseconds(10));
    ++runs;
    return JobResult::done();
  });
  consumer.start();
  wait_until_asleep(consumer, "handshake");
  auto conn = connect();
  const auto one_call = [&](const std::string& tenant) {
    NewItem item;
    item.tenant = tenant;
    item.job_type = "job";
    quick::enqueue(*conn, item);
  };

  one_call("first");
  ASSERT_TRUE(eventually([&] { return runs.load() == 1; }, seconds(5))) << "woken by the first";

  const auto wakeups_before = consumer.stats().wakeups;
  constexpr int kStream = 500;  // as fast as one connection enqueues: the Scanner finds work at every scan
  for (int i = 0; i < kStream; ++i) one_call("stream-" + std::to_string(i % 50));
  ASSERT_TRUE(eventually([&] { return runs.load() == 1 + kStream; }, seconds(10))) << runs.load() << " ran";
  EXPECT_LT(consumer.stats().wakeups - wakeups_before, static_cast<std::uint64_t>(kStream / 4))
      << "a busy consumer is sent few wake-ups";

  wait_until_asleep(consumer, "handshake");
  one_call("after");
  ASSERT_TRUE(eventually([&] { return runs.load() == 2 + kStream; }, seconds(5))) << "woken again once idle";
  consumer.stop();
}

TEST_F(WakeUpTest, ADelayedItemRunsWhenItVestsWithoutPolling) {
  Consumer consumer(sleepy_config("delayed"));
  std::atomic<bool> ran{false};
  Clock::time_point ran_at;
  consumer.handle("job", [&](JobContext&) {
    ran_at = Clock::now();
    ran = true;
    return JobResult::done();
  });
  consumer.start();
  wait_until_asleep(consumer, "delayed");

  const auto enqueued = Clock::now();
  enqueue("later", milliseconds(1500));  // notifies (a new zone); its scan learns when it vests
  ASSERT_TRUE(eventually([&] { return ran.load(); }, seconds(8)));
  const double after = std::chrono::duration<double>(ran_at - enqueued).count();
  EXPECT_GE(after, 1.4) << "not before it vests";
  EXPECT_LT(after, 8.0) << "the Scanner slept until the pointer vested, not a poll interval";
  consumer.stop();
}

// An application's transaction that enqueues into a new zone and commits more than 5 s later:
// its pointer vests at its enqueue statement's start, which by then lies below the Scanner's
// wide floor (the last refresh less 5 s; refreshes every 250 ms, as the Scanner looks every
// 100 ms here). Its notification, delivered at the commit, carries that start, and the next wide
// scan reaches back to it: the item runs at once, not at the next full scan (10 s after the
// consumer started, 3.5 s after this commit).
TEST_F(WakeUpTest, AnItemEnqueuedEarlyInALongTransactionRunsWhenItCommits) {
  ConsumerConfig config = sleepy_config("long_transaction");
  config.scanner.idle_poll_interval = milliseconds(20);  // refreshes go on meanwhile
  config.scanner.listening_poll_interval = milliseconds(100);
  Consumer consumer(config);
  std::atomic<int> runs{0};
  start_counting(consumer, runs);
  wait_until_asleep(consumer, "long_transaction");

  auto conn = connect();
  pqxx::work txn(*conn);
  NewItem item;
  item.tenant = "late_committer";
  item.job_type = "job";
  enqueue_in(txn, item);
  std::this_thread::sleep_for(seconds(6));
  EXPECT_EQ(runs.load(), 0) << "not visible before the commit";
  txn.commit();
  const auto committed = Clock::now();
  ASSERT_TRUE(eventually([&] { return runs.load() == 1; }, seconds(10)));
  EXPECT_LT(testing::seconds_since(committed), 2.0) << "found by a wide scan reaching back, not the next full scan";
  consumer.stop();
}

TEST_F(WakeUpTest, ALostListenerFallsBackToPollingAndListensAgain) {
  ConsumerConfig config = sleepy_config("relisten");
  config.scanner.idle_poll_interval = milliseconds(50);  // the fallback while not listening
  Consumer consumer(config);
  std::atomic<int> runs{0};
  start_counting(consumer, runs);
  wait_until_asleep(consumer, "relisten");

  query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'quick/relisten/listener'");
  enqueue("during_outage");  // its notification may reach nobody
  ASSERT_TRUE(eventually([&] { return runs.load() == 1; }, seconds(10))) << "found by the fallback poll";

  ASSERT_TRUE(eventually([&] { return listener_backends("relisten") == 1; }, seconds(10))) << "listening again";
  std::this_thread::sleep_for(milliseconds(300));
  const auto wakeups_before = consumer.stats().wakeups;
  enqueue("after_outage");
  ASSERT_TRUE(eventually([&] { return runs.load() == 2; }, seconds(10)));
  EXPECT_GT(consumer.stats().wakeups, wakeups_before) << "the new listener received the notification";
  consumer.stop();
}

TEST_F(WakeUpTest, WithListeningOffTheConsumerPollsAndOpensNoListenerConnection) {
  ConsumerConfig config = testing::fast_config(url(), "polling");
  config.scanner.listen_for_wakeups = false;
  Consumer consumer(config);
  std::atomic<int> runs{0};
  start_counting(consumer, runs);
  ASSERT_TRUE(eventually([&] { return consumer.stats().scans > 0; }, seconds(10)));
  enqueue("polled");
  ASSERT_TRUE(eventually([&] { return runs.load() == 1; }, seconds(10)));
  EXPECT_EQ(listener_backends("polling"), 0);
  EXPECT_EQ(consumer.stats().wakeups, 0u);
  consumer.stop();
}

TEST_F(WakeUpTest, StopIsPromptWhileTheConsumerSleeps) {
  Consumer consumer(sleepy_config("stopping"));
  consumer.handle("job", [](JobContext&) { return JobResult::done(); });
  consumer.start();
  wait_until_asleep(consumer, "stopping");
  const auto asked = Clock::now();
  consumer.stop();
  EXPECT_LT(testing::seconds_since(asked), 2.0);
  // The server ends a backend shortly after its client closed the connection, not at once.
  EXPECT_TRUE(eventually([&] { return listener_backends("stopping") == 0; }, seconds(2)))
      << "the listener's connection is closed";
}

}  // namespace
}  // namespace quick
