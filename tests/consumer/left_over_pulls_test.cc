// After a scan that left pull requests over (their pointers locked: another Scanner applying them,
// or a visit), the Scanner looks again 1 ms later, then 2, 4, ... up to the wait it would have had
// (scanner/idle_wait.h, docs/consumer.md#waking-up). Here a second session holds a parked zone's
// pointer FOR NO KEY UPDATE, as a visit does, while an enqueue records a pull request for it: the
// request's notification wakes the Scanner, whose apply skips the locked pointer. Nothing else will
// wake it, and the wait it would otherwise have is 2.5 s (busy) or 10 s (idle), so scans within a
// fraction of that are the left-over rule's doing (scanner.cc: LastScan::note_left_over after each
// scan, round_busy_wait and idle_wait).
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

using testing::eventually;
using testing::milliseconds;
using testing::seconds;

class LeftOverPullsTest : public testing::DatabaseTest {
 protected:
  // Polling alone would look every 10 s, and a busy round every 2.5 s (a quarter of it).
  ConsumerConfig slow_polling_config(const std::string& id) { return testing::slow_polling_config(url(), id); }

  void enqueue(const std::string& tenant, const std::string& job_type, milliseconds delay = milliseconds(0)) {
    testing::enqueue_one(url(), tenant, job_type, delay);
  }

  // Locks the parked zone's pointer as a visit does, then enqueues an item into that zone, which
  // records a pull request (the pointer vests in an hour) and wakes the Scanner. Returns how many
  // scans the consumer made in the 200 ms after the enqueue's commit, the holder still holding.
  std::uint64_t scans_while_the_pull_is_held(Consumer& consumer, pqxx::work& holder) {
    holder.exec("SELECT 1 FROM quick.pointers WHERE tenant = 'parked' FOR NO KEY UPDATE");
    const auto before = consumer.stats().scans;
    enqueue("parked", "job");
    EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.pointer_pulls WHERE tenant = 'parked'"), 1);
    std::this_thread::sleep_for(milliseconds(200));
    return consumer.stats().scans - before;
  }
};

// 1 + 2 + 4 + ... + 64 ms: seven looks within 127 ms of the first, eight or more scans in all.
// Without the rule, one (the notification's) or two.
constexpr std::uint64_t kScansExpected = 4;

TEST_F(LeftOverPullsTest, AnIdleScannerLooksAgainSoonAndRunsThePulledItemOnceThePointerIsFree) {
  enqueue("parked", "job", std::chrono::hours(1));  // a parked zone: its pointer vests in an hour
  Consumer consumer(slow_polling_config("left_over_idle"));
  std::atomic<int> runs{0};
  consumer.handle("job", [&runs](JobContext&) {
    ++runs;
    return JobResult::done();
  });
  consumer.start();
  ASSERT_TRUE(eventually([&] { return consumer.stats().scans > 0; }, seconds(10)));
  std::this_thread::sleep_for(milliseconds(300));  // asleep: nothing vests within the hour

  auto holder_conn = connect();
  pqxx::work holder(*holder_conn);
  EXPECT_GE(scans_while_the_pull_is_held(consumer, holder), kScansExpected)
      << "the Scanner looks again soon while the request is left over";
  EXPECT_EQ(runs.load(), 0) << "the pointer is held: the pull waits";

  holder.abort();  // the pointer is free: a scan within a few hundred ms applies the pull
  ASSERT_TRUE(eventually([&] { return runs.load() == 1; }, seconds(5)))
      << "found by the Scanner's own next look, not its 10 s poll";
  consumer.stop();
}

// A busy round (every vested zone is one this consumer is busy with) waits a quarter of
// idle_poll_interval, 2.5 s here, unless a scan left requests over.
TEST_F(LeftOverPullsTest, ABusyScannerLooksAgainSoonWhileRequestsAreLeftOver) {
  enqueue("parked", "job", std::chrono::hours(1));
  ConsumerConfig config = slow_polling_config("left_over_busy");
  config.worker.threads = 1;
  config.manager.dequeue_max = 5;    // 5 of the busy zone's 50 items buffered: it stays vested
  config.worker.prefetch_zones = 4;  // room for more zones: the Scanner goes on scanning
  Consumer consumer(config);
  std::atomic<bool> release{false};
  std::atomic<int> slow_runs{0};
  consumer.handle("slow", [&](JobContext&) {
    ++slow_runs;
    while (!release.load()) std::this_thread::sleep_for(milliseconds(5));
    return JobResult::done();
  });
  consumer.handle("job", [](JobContext&) { return JobResult::done(); });
  testing::enqueue_items(url(), 50, 1, "slow", "busy");
  consumer.start();
  ASSERT_TRUE(eventually([&] { return slow_runs.load() == 1; }, seconds(10)));
  std::this_thread::sleep_for(milliseconds(300));  // past the first (full) scan: scans from a floor

  auto holder_conn = connect();
  pqxx::work holder(*holder_conn);
  const auto scans = scans_while_the_pull_is_held(consumer, holder);
  EXPECT_GE(scans, kScansExpected) << "the busy round's wait is shortened while the request is left over";
  holder.abort();
  release = true;
  consumer.stop();
}

}  // namespace
}  // namespace quick
