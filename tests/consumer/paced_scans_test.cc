// Pacing the scans (scanner.min_scan_interval, docs/consumer.md#pacing-the-scans): under a steady
// stream of single items into new zones, each announced by a notification, a Scanner scans a
// database at most once per interval and each visit takes what vested since the last scan; with
// the interval at 0 it scans for nearly every item. Visits that find a backlog (a deep zone) are
// not paced. Every item runs either way. Real consumer, real database; the assertions are counts
// and bounds with wide margins.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>

#include "quick/consumer.h"
#include "quick/producer.h"
#include "support/consumer_helpers.h"
#include "support/eventually.h"
#include "support/test_database.h"

namespace quick {
namespace {

using namespace testing;

constexpr int kItems = 200;
constexpr milliseconds kItemGap(10);  // a 2 s stream

class PacedScansTest : public testing::DatabaseTest {
 protected:
  struct StreamCounts {
    std::uint64_t scans = 0, visits = 0;
  };

  // Starts a consumer with `interval`, waits until it has scanned once, then enqueues kItems
  // items, each into a zone of its own and in a statement of its own (quick::enqueue: a new zone
  // notifies), kItemGap apart; waits until all ran. Returns the scans and visits the stream took.
  StreamCounts stream_into(milliseconds interval) {
    ConsumerConfig config = fast_config(url(), "pacing");
    config.scanner.min_scan_interval = interval;
    Consumer consumer(config);
    std::atomic<int> runs{0};
    consumer.handle("work", [&runs](JobContext&) {
      ++runs;
      return JobResult::done();
    });
    consumer.start();
    EXPECT_TRUE(eventually([&] { return consumer.stats().scans > 0; }, seconds(10)));
    const auto before = consumer.stats();
    auto conn = connect();
    for (int i = 0; i < kItems; ++i) {
      NewItem item;
      item.tenant = "zone-" + std::to_string(i);
      item.job_type = "work";
      enqueue(*conn, item);
      std::this_thread::sleep_for(kItemGap);
    }
    EXPECT_TRUE(eventually([&] { return runs.load() == kItems; }, seconds(30))) << runs.load() << " ran";
    const auto after = consumer.stats();
    consumer.stop();
    return StreamCounts{after.scans - before.scans, after.visits - before.visits};
  }
};

TEST_F(PacedScansTest, UnderAStreamOfNewZonesScansAreAtLeastTheIntervalApart) {
  // 2 s of stream plus the wait for the last items: at most about 12 scans 250 ms apart, where
  // scanning whenever there is room would scan for nearly every one of the 200 items.
  const StreamCounts paced = stream_into(milliseconds(250));
  EXPECT_LE(paced.scans, 20u);
  EXPECT_LE(paced.visits, paced.scans) << "one visit per scan at most: each scan's zones fit in one visit";
  EXPECT_GE(static_cast<double>(kItems) / static_cast<double>(std::max<std::uint64_t>(paced.visits, 1)), 5.0)
      << "each visit takes several zones' items";
}

TEST_F(PacedScansTest, AtZeroTheScannerScansWheneverThereIsRoom) {
  const StreamCounts unpaced = stream_into(milliseconds(0));
  EXPECT_GE(unpaced.scans, 50u) << "a notification for every item, and a scan for most";
}

TEST_F(PacedScansTest, AZoneWithABacklogIsNotPaced) {
  // 600 items in one zone, 20 per visit: 30 visits, so at least 30 scans, which 250 ms apart
  // would take 7.5 s. Each visit takes a full 20 (half of dequeue_max or more: a backlog), so the
  // Scanner does not pace them, and the zone drains in well under that.
  ConsumerConfig config = fast_config(url(), "backlog");
  config.scanner.min_scan_interval = milliseconds(250);
  config.manager.dequeue_max = 20;
  enqueue_items(url(), 600, 1, "work", "deep");
  Consumer consumer(config);
  std::atomic<int> runs{0};
  consumer.handle("work", [&runs](JobContext&) {
    ++runs;
    return JobResult::done();
  });
  const auto started = Clock::now();
  consumer.start();
  ASSERT_TRUE(eventually([&] { return runs.load() == 600; }, seconds(30))) << runs.load() << " ran";
  EXPECT_LT(Clock::now() - started, seconds(5)) << consumer.stats().to_string();
  EXPECT_GE(consumer.stats().visits, 30u);
}

TEST_F(PacedScansTest, StopIsPromptWhileTheScannerWaitsForItsNextScan) {
  ConsumerConfig config = fast_config(url(), "stopping");
  config.scanner.min_scan_interval = milliseconds(1000);
  Consumer consumer(config);
  consumer.handle("work", [](JobContext&) { return JobResult::done(); });
  consumer.start();
  ASSERT_TRUE(eventually([&] { return consumer.stats().scans > 0; }, seconds(10)));
  auto conn = connect();
  NewItem item;
  item.tenant = "woken";
  item.job_type = "work";
  enqueue(*conn, item);  // a notification: the Scanner's next scan waits for the rest of the second
  std::this_thread::sleep_for(milliseconds(100));
  const auto stopping = Clock::now();
  consumer.stop();
  EXPECT_LT(Clock::now() - stopping, milliseconds(700));
}

}  // namespace
}  // namespace quick
