// Fairness across queue zones (paper section 6, "Concurrency between consumers, fairness and
// leases"): pointer leases plus the dequeue_max bound keep one tenant's backlog from starving
// the other tenants' items.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "quick/consumer.h"
#include "quick/quick.h"
#include "store/consumer_store.h"
#include "support/eventually.h"
#include "support/test_database.h"

namespace quick {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using testing::eventually;

double millis(Clock::duration duration) { return std::chrono::duration<double, std::milli>(duration).count(); }

class FairnessTest : public testing::DatabaseTest {
 protected:
  ConsumerConfig base_config() const {
    ConsumerConfig config;
    config.databases.push_back(DatabaseConfig{"main", url()});
    config.scanner.idle_poll_interval = 5ms;
    config.manager.p_duration = 500ms;
    config.worker.item_lease_duration = 2s;
    config.stop_deadline = 2s;
    return config;
  }

  void enqueue_many(const std::string& tenant, int count, const std::string& job_type) {
    auto conn = connect();
    enqueue_many(*conn, tenant, count, job_type);
  }
  // The same on a connection the caller keeps (connecting is slow on a loaded machine).
  static void enqueue_many(pqxx::connection& conn, const std::string& tenant, int count, const std::string& job_type) {
    pqxx::work txn(conn);
    std::vector<NewItem> items;
    for (int i = 0; i < count; ++i) {
      NewItem item;
      item.tenant = tenant;
      item.job_type = job_type;
      item.payload = "{\"n\":" + std::to_string(i) + "}";
      items.push_back(item);
    }
    enqueue_batch_in(txn, items);
    txn.commit();
  }
};

// A tenant with a backlog of thousands shares the consumer with quiet tenants that enqueue a few
// items while the backlog drains: the quiet items are picked up within a small fraction of the
// backlog's drain time, and are all finished long before the backlog is.
TEST_F(FairnessTest, QuietTenantsAreServedPromptlyWhileANoisyTenantsBacklogDrains) {
  constexpr int kNoisyItems = 3000;
  constexpr int kQuietTenants = 10;
  constexpr int kItemsPerQuietTenant = 3;
  constexpr int kQuietItems = kQuietTenants * kItemsPerQuietTenant;
  enqueue_many("noisy", kNoisyItems, "work");

  ConsumerConfig config = base_config();
  config.worker.threads = 4;
  config.manager.dequeue_max = 10;
  Consumer consumer(config);

  std::atomic<int> noisy_done{0};
  std::atomic<int> quiet_done{0};
  std::atomic<int> noisy_done_when_quiet_finished{-1};
  int noisy_done_when_quiet_enqueued = -1;  // once the last quiet tenant's enqueue committed
  std::mutex mutex;
  std::array<Clock::time_point, kQuietTenants> enqueue_started{};  // set before the enqueue transaction
  std::vector<double> quiet_pickup_ms;  // handler start - enqueue start (wall clock, conservative)
  std::vector<double> quiet_waited_ms;  // JobContext::waited()
  Clock::time_point last_noisy_done{};

  consumer.handle("work", [&](JobContext& job) {
    const auto started = Clock::now();
    const std::string& tenant = job.item().tenant;
    if (tenant != "noisy") {
      const int index = std::stoi(tenant.substr(std::string("quiet-").size()));
      std::lock_guard<std::mutex> lock(mutex);
      quiet_pickup_ms.push_back(millis(started - enqueue_started[static_cast<std::size_t>(index)]));
      quiet_waited_ms.push_back(std::chrono::duration<double, std::milli>(job.waited()).count());
    }
    std::this_thread::sleep_for(2ms);
    if (tenant == "noisy") {
      ++noisy_done;
      std::lock_guard<std::mutex> lock(mutex);
      last_noisy_done = Clock::now();
    } else if (++quiet_done == kQuietItems) {
      noisy_done_when_quiet_finished = noisy_done.load();
    }
    return JobResult::done();
  });

  const auto start = Clock::now();
  consumer.start();
  // The quiet tenants arrive once the backlog is being drained.
  ASSERT_TRUE(eventually([&] { return noisy_done.load() >= 300; }, 60s));
  auto quiet_conn = connect();
  for (int t = 0; t < kQuietTenants; ++t) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      enqueue_started[static_cast<std::size_t>(t)] = Clock::now();
    }
    enqueue_many(*quiet_conn, "quiet-" + std::to_string(t), kItemsPerQuietTenant, "work");
    if (t + 1 < kQuietTenants) std::this_thread::sleep_for(20ms);
  }
  noisy_done_when_quiet_enqueued = noisy_done.load();
  ASSERT_TRUE(eventually([&] { return quiet_done.load() == kQuietItems; }, 60s))
      << "quiet items done: " << quiet_done.load();
  ASSERT_TRUE(eventually([&] { return noisy_done.load() == kNoisyItems; }, 120s))
      << "noisy items done: " << noisy_done.load();
  consumer.stop();

  double noisy_drain_ms;
  double quiet_max_pickup_ms, quiet_max_waited_ms;
  {
    std::lock_guard<std::mutex> lock(mutex);
    noisy_drain_ms = millis(last_noisy_done - start);
    ASSERT_EQ(quiet_pickup_ms.size(), static_cast<std::size_t>(kQuietItems));
    quiet_max_pickup_ms = *std::max_element(quiet_pickup_ms.begin(), quiet_pickup_ms.end());
    quiet_max_waited_ms = *std::max_element(quiet_waited_ms.begin(), quiet_waited_ms.end());
  }
  std::cout << "noisy drain " << noisy_drain_ms << " ms; quiet max pickup " << quiet_max_pickup_ms
            << " ms (max waited() " << quiet_max_waited_ms
            << " ms); noisy items done when the last quiet item was enqueued: " << noisy_done_when_quiet_enqueued
            << ", when it finished: " << noisy_done_when_quiet_finished.load() << "/" << kNoisyItems << "\n"
            << consumer.stats().to_string() << std::endl;

  EXPECT_LT(quiet_max_pickup_ms, noisy_drain_ms / 5);
  EXPECT_LT(quiet_max_waited_ms, noisy_drain_ms / 5);
  // The quiet items did not queue behind the backlog: once the last of them was enqueued, they
  // were all done before another quarter of the backlog was (queued behind it, they would have
  // waited for all of what was left). Counted from the last enqueue, not from the start, so that a
  // loaded machine's slow enqueues do not count against the consumer.
  ASSERT_LE(noisy_done_when_quiet_enqueued, kNoisyItems / 2) << "the quiet tenants came too late to tell";
  EXPECT_LE(noisy_done_when_quiet_finished.load() - noisy_done_when_quiet_enqueued, kNoisyItems / 4);
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.items"), 0);
}

// Algorithm 2, line 5, through the SQL the Managers use: one visit dequeues at most dequeue_max
// items of each zone; the pointer of a zone that still has items vests again at once, while the
// pointer of a zone it emptied is requeued to the zone's earliest vesting time (here: the end of
// the items' leases).
TEST_F(FairnessTest, OneVisitDequeuesAtMostDequeueMaxItemsOfItsZone) {
  enqueue_many("big", 50, "work");
  enqueue_many("small", 3, "work");
  auto conn = connect();

  std::map<std::string, int> taken;
  std::set<std::int64_t> first_ids;
  {
    pqxx::work txn(*conn);
    const auto visit = store::visit_zones(txn, {"big", "small"}, 7, 5s, 0ms, {});
    txn.commit();
    for (const auto& dequeued : visit.items) {
      ++taken[dequeued.item.tenant];
      first_ids.insert(dequeued.item.id);
    }
    ASSERT_EQ(visit.zones.size(), 2u);
    for (const auto& zone : visit.zones) EXPECT_EQ(zone.action, store::SettleAction::kRequeued) << zone.tenant;
  }
  EXPECT_EQ(taken["big"], 7);
  EXPECT_EQ(taken["small"], 3);
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.items WHERE tenant = 'big' AND lease_id IS NOT NULL"), 7);
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.items WHERE tenant = 'big' AND vesting_time <= now()"), 43);
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.pointers WHERE tenant = 'big' AND vesting_time <= now()"), 1);
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.pointers WHERE tenant = 'small' AND vesting_time > now() + "
                             "interval '4 seconds'"),
            1);

  // Another visit right away: "big" is visited again and yields the next dequeue_max items;
  // "small" is not vested (a conflict of kind not_vested, not an error).
  {
    pqxx::work txn(*conn);
    const auto visit = store::visit_zones(txn, {"big", "small"}, 7, 5s, 0ms, {});
    txn.commit();
    int big = 0;
    for (const auto& dequeued : visit.items) {
      EXPECT_EQ(dequeued.item.tenant, "big");
      EXPECT_EQ(first_ids.count(dequeued.item.id), 0u) << "item " << dequeued.item.id << " dequeued twice";
      ++big;
    }
    EXPECT_EQ(big, 7);
    EXPECT_EQ(visit.zones.size(), 1u);
    EXPECT_EQ(visit.conflicts_not_vested, 1);
  }
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.items WHERE tenant = 'big' AND lease_id IS NOT NULL"), 14);
}

// The same bound seen through a running consumer: with one Worker busy on the zone's first item
// and nothing more wanted (prefetch_zones 0), a single Manager visit leased exactly dequeue_max items
// of the big zone, not more.
TEST_F(FairnessTest, AConsumerVisitLeasesExactlyDequeueMaxItemsOfABigZone) {
  enqueue_many("big", 60, "work");
  ConsumerConfig config = base_config();
  config.worker.threads = 1;
  config.worker.prefetch_zones = 0;
  config.manager.dequeue_max = 7;
  Consumer consumer(config);
  std::atomic<bool> release{false};
  std::atomic<int> started{0};
  consumer.handle("work", [&](JobContext&) {
    ++started;
    while (!release.load()) std::this_thread::sleep_for(2ms);
    return JobResult::done();
  });
  consumer.start();
  const std::string leased_sql =
      "SELECT count(*) FROM quick.items WHERE tenant = 'big' AND lease_id IS NOT NULL AND vesting_time > now()";
  ASSERT_TRUE(eventually([&] { return query_value<int>(leased_sql) >= 7; }, 30s));
  std::this_thread::sleep_for(400ms);  // room for a wrong second visit to show up
  EXPECT_EQ(query_value<int>(leased_sql), 7);
  EXPECT_EQ(started.load(), 1);
  EXPECT_EQ(consumer.stats().items_dequeued, 7u);
  release = true;
  ASSERT_TRUE(eventually([&] { return query_value<int>("SELECT count(*) FROM quick.items") == 0; }, 60s));
  consumer.stop();
  EXPECT_EQ(started.load(), 60);
}

// Fairness by processing time (docs/consumer.md#how-items-flow, "Long jobs beside short ones"):
// tenant A's jobs take 40 ms, tenant B's almost nothing. Counts how many of A's jobs run at once,
// before B's first job starts and from then on.
struct LongBesideShort {
  std::atomic<int> a_running{0};
  std::atomic<int> a_most_alone{0};
  std::atomic<int> a_most_beside_b{0};
  std::atomic<bool> b_started{false};
  std::atomic<int> b_done{0};

  void handle_on(Consumer& consumer) {
    consumer.handle("long", [this](JobContext&) {
      const int now = ++a_running;
      auto& most = b_started ? a_most_beside_b : a_most_alone;
      for (int seen = most.load(); now > seen && !most.compare_exchange_weak(seen, now);) {
      }
      std::this_thread::sleep_for(40ms);
      --a_running;
      return JobResult::done();
    });
    consumer.handle("short", [this](JobContext&) {
      b_started = true;
      ++b_done;
      return JobResult::done();
    });
  }

  // B enqueues `count` short jobs, one every 60 ms, and waits until they are done.
  void run_b(pqxx::connection& conn, int count) {
    for (int i = 0; i < count; ++i) {
      NewItem item;
      item.tenant = "B";
      item.job_type = "short";
      enqueue(conn, item);
      std::this_thread::sleep_for(60ms);
    }
    ASSERT_TRUE(eventually([&] { return b_done.load() == count; }, 10s));
  }
};

// A alone uses all 4 Workers; once B is active beside it, A never holds all 4, so B's jobs find a
// Worker free.
TEST_F(FairnessTest, ALongJobTenantLeavesAWorkerToAShortJobTenantButUsesAllWhenAlone) {
  enqueue_many("A", 200, "long");
  auto config = base_config();
  config.worker.threads = 4;
  LongBesideShort run;
  Consumer consumer(config);
  run.handle_on(consumer);
  consumer.start();
  ASSERT_TRUE(eventually([&] { return run.a_most_alone.load() == 4; }, 10s)) << "A alone did not use all 4 Workers";
  auto conn = connect();
  run.run_b(*conn, 15);
  consumer.stop();
  // The first of B's jobs may find all 4 Workers busy with A (B was not active yet); from then on,
  // A's jobs start only while fewer than 4 run. a_most_beside_b counts from B's first start on, so
  // it includes A's 4 only if A took a 4th Worker afterwards.
  EXPECT_LE(run.a_most_beside_b.load(), 3) << "A held every Worker while B was active";
  EXPECT_GT(run.a_most_beside_b.load(), 1) << "A kept working beside B";
}

// The same across consumers: two consumers of 2 Workers each. A alone keeps all 4 busy; beside B,
// the consumer that runs B's jobs keeps one of its Workers from A, so A never holds both
// consumers whole.
TEST_F(FairnessTest, ALongJobTenantCannotHoldEveryWorkerOfTwoConsumersWhileAShortJobTenantWaits) {
  enqueue_many("A", 300, "long");
  auto config = base_config();
  config.worker.threads = 2;
  LongBesideShort run;
  Consumer first(config);
  Consumer second(config);
  run.handle_on(first);
  run.handle_on(second);
  first.start();
  second.start();
  ASSERT_TRUE(eventually([&] { return run.a_most_alone.load() == 4; }, 10s))
      << "A alone did not use the 4 Workers of both consumers";
  auto conn = connect();
  run.run_b(*conn, 15);
  first.stop();
  second.stop();
  EXPECT_LE(run.a_most_beside_b.load(), 3) << "A held every Worker of both consumers while B was active";
  EXPECT_GT(run.a_most_beside_b.load(), 1) << "A kept working on both consumers beside B";
}

}  // namespace
}  // namespace quick
