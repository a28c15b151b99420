// The life of a top-level pointer under a running consumer (Algorithm 2, lines 7-12, and the
// paper's "Pointer garbage-collection"): a drained zone keeps its pointer for min_inactive, then
// loses it; a zone with items never loses it; a parked pointer is pulled earlier when an item
// that vests sooner is enqueued.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <iostream>
#include <mutex>
#include <optional>
#include <thread>

#include "quick/consumer.h"
#include "quick/quick.h"
#include "support/consumer_helpers.h"
#include "support/eventually.h"
#include "support/test_database.h"

namespace quick {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using testing::eventually;

class PointerLifecycleTest : public testing::DatabaseTest {
 protected:
  ConsumerConfig base_config() const {
    ConsumerConfig config;
    config.databases.push_back(DatabaseConfig{"main", url()});
    config.scanner.idle_poll_interval = 5ms;
    config.manager.p_duration = 500ms;
    config.worker.item_lease_duration = 1s;
    config.stop_deadline = 2s;
    return config;
  }

  std::int64_t enqueue(const std::string& tenant, const std::string& job_type, std::chrono::milliseconds delay = 0ms) {
    return testing::enqueue_one(url(), tenant, job_type, delay);
  }

  bool pointer_exists(const std::string& tenant) const {
    return query_value<bool>("SELECT EXISTS (SELECT 1 FROM quick.pointers WHERE tenant = '" + tenant + "')");
  }
  int items_of(const std::string& tenant) const {
    return query_value<int>("SELECT count(*) FROM quick.items WHERE tenant = '" + tenant + "'");
  }
  // Non-empty zones without a pointer: the invariant says there are none, in every snapshot.
  int orphaned_zones() const {
    return query_value<int>(
        "SELECT count(DISTINCT i.tenant) FROM quick.items i "
        "WHERE NOT EXISTS (SELECT 1 FROM quick.pointers p WHERE p.tenant = i.tenant)");
  }
};

// min_inactive = 1.5 s: after its only item is done the zone's pointer is still there, and it is
// deleted once the zone has been idle for min_inactive (measured on the database clock from the
// pointer's last_active_time), not before.
TEST_F(PointerLifecycleTest, ADrainedZonesPointerIsCollectedOnlyAfterMinInactive) {
  ConsumerConfig config = base_config();
  config.manager.min_inactive = 1500ms;
  Consumer consumer(config);
  std::atomic<int> runs{0};
  consumer.handle("work", [&](JobContext&) {
    ++runs;
    return JobResult::done();
  });
  enqueue("drained", "work");
  consumer.start();
  ASSERT_TRUE(eventually([&] { return runs.load() == 1 && items_of("drained") == 0; }, 30s));
  EXPECT_TRUE(pointer_exists("drained")) << "pointer deleted as soon as the zone drained";

  // Sample on the database clock: the pointer exists at every instant before
  // last_active_time + min_inactive.
  std::optional<double> idle_when_gone;  // seconds since last_active_time when first seen gone
  double last_idle = 0;
  std::string last_active;
  const auto deadline = Clock::now() + 15s;
  while (Clock::now() < deadline) {
    const auto row = query(
        "SELECT p.last_active_time::text, extract(epoch FROM now() - p.last_active_time)::float8 "
        "FROM quick.pointers p WHERE p.tenant = 'drained'");
    if (row.empty()) {
      idle_when_gone = query_value<double>("SELECT extract(epoch FROM now() - '" + last_active +
                                           "'::timestamptz)::float8");
      break;
    }
    last_active = row[0][0].as<std::string>();
    last_idle = row[0][1].as<double>();
    std::this_thread::sleep_for(20ms);
  }
  consumer.stop();
  ASSERT_TRUE(idle_when_gone.has_value()) << "pointer still there " << last_idle << " s after its last activity";
  std::cout << "pointer collected after " << *idle_when_gone << " s idle (min_inactive 1.5 s); last seen at "
            << last_idle << " s idle\n"
            << consumer.stats().to_string() << std::endl;
  EXPECT_GE(*idle_when_gone, 1.5);
  EXPECT_LT(*idle_when_gone, 1.5 + 4.0);
  EXPECT_GE(consumer.stats().pointers_collected, 1u);
}

// min_inactive = 0, the most eager collection: a zone whose remaining item is delayed, and a zone
// whose only item keeps failing, keep their pointers as long as they have items; the delayed item
// runs after its delay, and once it is done its zone's pointer goes.
TEST_F(PointerLifecycleTest, AZoneWithItemsKeepsItsPointerEvenWhenItsItemsAreDelayedOrFailing) {
  ConsumerConfig config = base_config();
  config.manager.min_inactive = 0ms;
  config.default_job_type.retry.max_attempts = 0;
  Consumer consumer(config);
  std::atomic<int> work_runs{0}, failing_runs{0};
  std::atomic<bool> delayed_done{false};
  std::mutex mutex;
  Clock::time_point delayed_enqueued{}, delayed_started{};
  consumer.handle("work", [&](JobContext&) {
    ++work_runs;
    return JobResult::done();
  });
  consumer.handle("delayed", [&](JobContext&) {
    std::lock_guard<std::mutex> lock(mutex);
    delayed_started = Clock::now();
    delayed_done = true;
    return JobResult::done();
  });
  consumer.handle("failing", [&](JobContext&) {
    ++failing_runs;
    return JobResult::retry_after(150ms, "still failing");
  });
  {
    std::lock_guard<std::mutex> lock(mutex);
    delayed_enqueued = Clock::now();
  }
  enqueue("zone-delayed", "delayed", 2500ms);
  enqueue("zone-delayed", "work");
  enqueue("zone-failing", "failing");
  consumer.start();

  int samples = 0;
  while (!delayed_done.load()) {
    ASSERT_LT(Clock::now() - delayed_enqueued, 30s) << "the delayed item never ran";
    ASSERT_EQ(orphaned_zones(), 0) << "a zone with items lost its pointer";
    ++samples;
    std::this_thread::sleep_for(15ms);
  }
  EXPECT_TRUE(pointer_exists("zone-failing"));
  EXPECT_EQ(work_runs.load(), 1);
  EXPECT_GE(failing_runs.load(), 3) << "the failing zone was not revisited";
  {
    std::lock_guard<std::mutex> lock(mutex);
    EXPECT_GE(delayed_started - delayed_enqueued, 2500ms - 50ms) << "the delayed item ran before its delay";
  }
  // Once the delayed zone is empty its pointer goes (min_inactive 0); the failing zone keeps its.
  EXPECT_TRUE(eventually([&] { return !pointer_exists("zone-delayed"); }, 10s));
  EXPECT_EQ(orphaned_zones(), 0);
  EXPECT_TRUE(pointer_exists("zone-failing"));
  consumer.stop();
  std::cout << samples << " snapshots without an orphaned zone; failing item ran " << failing_runs.load() << " times\n"
            << consumer.stats().to_string() << std::endl;
}

// A pointer parked for min_inactive (60 s) after its zone drained is pulled earlier by an enqueue
// of an item that vests sooner: an immediate item runs promptly, a delayed one at its vesting
// time, neither after the park time.
TEST_F(PointerLifecycleTest, AParkedPointerIsPulledEarlierWhenAnItemThatVestsSoonerIsEnqueued) {
  ConsumerConfig config = base_config();
  config.manager.min_inactive = 60s;
  Consumer consumer(config);
  std::atomic<int> runs{0};
  std::mutex mutex;
  Clock::time_point last_start{};
  consumer.handle("work", [&](JobContext&) {
    std::lock_guard<std::mutex> lock(mutex);
    last_start = Clock::now();
    ++runs;
    return JobResult::done();
  });
  const std::string parked_sql =
      "SELECT EXISTS (SELECT 1 FROM quick.pointers WHERE tenant = 'parked' AND lease_id IS NULL "
      "AND vesting_time > now() + interval '30 seconds')";
  enqueue("parked", "work");
  consumer.start();
  ASSERT_TRUE(eventually([&] { return runs.load() == 1; }, 30s));
  ASSERT_TRUE(eventually([&] { return query_value<bool>(parked_sql); }, 15s)) << "the drained zone was not parked";

  // An immediate item.
  auto enqueued = Clock::now();
  enqueue("parked", "work");
  ASSERT_TRUE(eventually([&] { return runs.load() == 2; }, 20s)) << "the new item waits for the parked pointer";
  Clock::duration immediate_pickup;
  {
    std::lock_guard<std::mutex> lock(mutex);
    immediate_pickup = last_start - enqueued;
  }
  EXPECT_LT(immediate_pickup, 5s);

  // A delayed item, once the pointer is parked again.
  ASSERT_TRUE(eventually([&] { return query_value<bool>(parked_sql); }, 15s));
  enqueued = Clock::now();
  enqueue("parked", "work", 1200ms);
  ASSERT_TRUE(eventually([&] { return runs.load() == 3; }, 20s)) << "the delayed item waits for the parked pointer";
  Clock::duration delayed_pickup;
  {
    std::lock_guard<std::mutex> lock(mutex);
    delayed_pickup = last_start - enqueued;
  }
  consumer.stop();
  const auto stats = consumer.stats();
  std::cout << "immediate item picked up after "
            << std::chrono::duration_cast<std::chrono::milliseconds>(immediate_pickup).count()
            << " ms, 1.2 s-delayed item after "
            << std::chrono::duration_cast<std::chrono::milliseconds>(delayed_pickup).count()
            << " ms, with the pointer parked for 60 s\n"
            << stats.to_string() << std::endl;
  EXPECT_GE(delayed_pickup, 1200ms - 50ms);
  EXPECT_LT(delayed_pickup, 1200ms + 5s);
  EXPECT_GE(stats.pulls_applied, 2u);
  EXPECT_GE(stats.pointers_parked, 2u);
}

}  // namespace
}  // namespace quick
