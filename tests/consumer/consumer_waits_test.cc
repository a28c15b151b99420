// Consumer::wait_until_ready and wait_until_idle: ready once every database has been scanned and
// is listened to; idle once the consumer holds nothing; both false before start, after stop and
// on timeout.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>

#include "quick/consumer.h"
#include "quick/producer.h"
#include "support/consumer_helpers.h"
#include "support/eventually.h"
#include "support/test_database.h"

namespace quick {
namespace {

using testing::milliseconds;
using testing::seconds;

class ConsumerWaitsTest : public testing::DatabaseTest {};

TEST_F(ConsumerWaitsTest, ReadyOnceEveryDatabaseIsScannedAndListenedTo) {
  testing::EmptyDatabase second;  // no schema: its scans fail, so the consumer never gets ready
  Consumer consumer(testing::fast_config(url(), "ready"));
  consumer.handle("job", [](JobContext&) { return JobResult::done(); });
  EXPECT_FALSE(consumer.wait_until_ready(milliseconds(50))) << "not started";
  consumer.start();
  ASSERT_TRUE(consumer.wait_until_ready(seconds(10)));
  EXPECT_GE(consumer.stats().scans, 1u);
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'quick/ready/listener'"),
            1);
  consumer.stop();
  EXPECT_FALSE(consumer.wait_until_ready(milliseconds(50))) << "stopped";

  ConsumerConfig two = testing::fast_config(url(), "not_ready");
  two.databases.push_back(DatabaseConfig{"broken", second.url()});
  Consumer partial(two);
  partial.handle("job", [](JobContext&) { return JobResult::done(); });
  partial.start();
  EXPECT_FALSE(partial.wait_until_ready(seconds(1))) << "one database cannot be scanned";
  partial.stop();
}

TEST_F(ConsumerWaitsTest, IdleOnlyOnceNothingIsBufferedRunningOrUnacknowledged) {
  testing::enqueue_items(url(), 40, 4, "job");
  Consumer consumer(testing::fast_config(url(), "idle"));
  std::atomic<bool> release{false};
  std::atomic<int> done{0};
  consumer.handle("job", [&](JobContext&) {
    while (!release.load()) std::this_thread::sleep_for(milliseconds(1));
    ++done;
    return JobResult::done();
  });
  consumer.start();
  ASSERT_TRUE(testing::eventually([&] { return consumer.stats().items_dequeued > 0; }, seconds(10)));
  EXPECT_FALSE(consumer.wait_until_idle(milliseconds(300))) << "handlers are blocked";
  release = true;
  ASSERT_TRUE(
      testing::eventually([&] { return query_value<int>("SELECT count(*) FROM quick.items") == 0; }, seconds(20)));
  ASSERT_TRUE(consumer.wait_until_idle(seconds(10)));
  EXPECT_EQ(done.load(), 40);
  EXPECT_EQ(consumer.stats().items_buffered, 0u);
  EXPECT_EQ(consumer.stats().items_running, 0u);
  consumer.stop();
  EXPECT_FALSE(consumer.wait_until_idle(milliseconds(50))) << "stopped";
}

// The last run's acknowledgment cannot be written while a session holds the item's row (the
// writer's lock_timeout makes it fail and retry): the consumer holds no item in its buffer and
// runs no handler, but it is not idle until the acknowledgment is written.
TEST_F(ConsumerWaitsTest, NotIdleWhileAnAcknowledgmentIsUnwritten) {
  const auto ids = testing::enqueue_items(url(), 1, 1, "job");
  Consumer consumer(testing::fast_config(url(), "acking"));
  std::atomic<bool> started{false}, finish{false};
  consumer.handle("job", [&](JobContext&) {
    started = true;
    while (!finish.load()) std::this_thread::sleep_for(milliseconds(1));
    return JobResult::done();
  });
  consumer.start();
  ASSERT_TRUE(testing::eventually([&] { return started.load(); }, seconds(10)));
  auto locker = connect();
  pqxx::work lock(*locker);
  lock.exec("SELECT 1 FROM quick.items WHERE id = " + std::to_string(ids.at(0)) + " FOR UPDATE");
  finish = true;
  ASSERT_TRUE(testing::eventually([&] { return consumer.stats().items_running == 0; }, seconds(10)));
  EXPECT_FALSE(consumer.wait_until_idle(milliseconds(1500))) << "the acknowledgment waits for the row";
  lock.commit();
  ASSERT_TRUE(consumer.wait_until_idle(seconds(10)));
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.items"), 0) << "idle means written";
  consumer.stop();
}

}  // namespace
}  // namespace quick
