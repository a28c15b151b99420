// No starvation (paper section 6): most Scanners pick pointers at random, which at a small
// selection_frac can leave the oldest pointers waiting; one consumer per database, elected
// through a lease in quick.consumer_roles, scans in vesting order instead, so the oldest zones
// are served first. The role moves to another consumer when its holder stops or dies.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>
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

constexpr int kTenants = 2000;
constexpr int kBatch = 50;  // tenants per enqueue statement; each statement vests later than the last
constexpr int kOldest = kBatch;

// Tenant names sort in the opposite order from their enqueue order, so that "oldest first" can
// only come from the vesting times, never from the names.
std::string tenant_name(int enqueue_position) {
  std::ostringstream name;
  name << "tenant-" << std::setw(4) << std::setfill('0') << (kTenants - 1 - enqueue_position);
  return name.str();
}

class StarvationTest : public testing::DatabaseTest {
 protected:
  ConsumerConfig base_config() const {
    ConsumerConfig config;
    config.databases.push_back(DatabaseConfig{"main", url()});
    config.scanner.idle_poll_interval = 5ms;
    config.scanner.in_order_lease_duration = 1s;
    config.manager.p_duration = 500ms;
    config.worker.item_lease_duration = 2s;
    config.stop_deadline = 2s;
    return config;
  }

  // kTenants zones of one item each, in kTenants / kBatch statements.
  void enqueue_one_item_per_tenant() {
    auto conn = connect();
    for (int first = 0; first < kTenants; first += kBatch) {
      pqxx::work txn(*conn);
      std::vector<NewItem> items;
      for (int i = first; i < first + kBatch; ++i) {
        NewItem item;
        item.tenant = tenant_name(i);
        item.job_type = "work";
        items.push_back(item);
      }
      enqueue_batch_in(txn, items);
      txn.commit();
    }
  }

  struct Progress {
    std::atomic<int> done{0};
    std::atomic<int> oldest_done{0};
    std::atomic<int> done_when_oldest_finished{-1};
  };

  // Runs a consumer until `items` items are done; returns what it saw.
  void run_consumer(ConsumerConfig config, Progress& progress, int items) {
    Consumer consumer(config);
    consumer.handle("work", [&](JobContext& job) {
      const int number = std::stoi(job.item().tenant.substr(std::string("tenant-").size()));
      const int done = ++progress.done;
      if (number >= kTenants - kOldest && ++progress.oldest_done == kOldest) {
        progress.done_when_oldest_finished = done;
      }
      return JobResult::done();
    });
    consumer.start();
    ASSERT_TRUE(eventually([&] { return progress.done.load() >= items; }, 60s))
        << "done " << progress.done.load() << " of " << items;
    consumer.stop();
    const auto stats = consumer.stats();
    std::cout << stats.to_string() << std::endl;
  }
};

// With selection_frac 0.001 each random scan takes one of the 1000 peeked pointers. The in-order
// Scanner takes the oldest instead (a visit's worth, pointers_per_batch of them), so the
// earliest-enqueued zones are the first served. One Manager, so that visits finish in the order
// the Scanner dispatched them: with two, the second-oldest visit can hand its items to the
// Workers first, and completion order would measure that race rather than the selection.
TEST_F(StarvationTest, InOrderScannerServesTheOldestPointersFirstAtATinySelectionFraction) {
  enqueue_one_item_per_tenant();
  ConsumerConfig config = base_config();
  config.scanner.selection_frac = 0.001;
  config.scanner.peek_max = 1000;
  config.scanner.in_order_election = true;
  config.manager.threads = 1;
  config.manager.pointers_per_batch = kOldest;
  config.manager.pointers_per_batch_alone = 0;  // a visit's worth stays kOldest while it is alone
  config.worker.threads = 2;
  Progress progress;
  const auto start = Clock::now();
  Consumer consumer(config);
  consumer.handle("work", [&](JobContext& job) {
    const int number = std::stoi(job.item().tenant.substr(std::string("tenant-").size()));
    const int done = ++progress.done;
    if (number >= kTenants - kOldest && ++progress.oldest_done == kOldest) {
      progress.done_when_oldest_finished = done;
    }
    return JobResult::done();
  });
  consumer.start();
  EXPECT_TRUE(eventually([&] { return progress.oldest_done.load() == kOldest; }, 30s))
      << "oldest zones served: " << progress.oldest_done.load() << " of " << kOldest << " after "
      << progress.done.load() << " items";
  const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
  consumer.stop();
  const auto stats = consumer.stats();
  std::cout << "the " << kOldest << " oldest zones were served after " << progress.done_when_oldest_finished.load()
            << " items, in " << elapsed.count() << " ms\n"
            << stats.to_string() << std::endl;
  EXPECT_GT(stats.in_order_scans, 0u);
  // In order: the oldest kOldest zones come (nearly) first; random selection over 1000 peeked
  // pointers would have served about 5% of them by then.
  EXPECT_GT(progress.done_when_oldest_finished.load(), 0);
  EXPECT_LE(progress.done_when_oldest_finished.load(), 2 * kOldest);
}

// The control for the test above: the same queue without an in-order Scanner serves the oldest
// zones no sooner than any others (Algorithm 1, line 8: uniformly at random).
TEST_F(StarvationTest, RandomSelectionAloneDoesNotFavourTheOldestPointers) {
  enqueue_one_item_per_tenant();
  ConsumerConfig config = base_config();
  config.scanner.selection_frac = 0.001;
  config.scanner.peek_max = 1000;
  config.scanner.in_order_election = false;
  config.worker.threads = 2;
  Progress progress;
  run_consumer(config, progress, 2 * kOldest);
  std::cout << "without the in-order Scanner, " << progress.oldest_done.load() << " of the " << kOldest
            << " oldest zones were served in the first " << progress.done.load() << " items" << std::endl;
  EXPECT_LT(progress.oldest_done.load(), kOldest / 2)
      << "after " << progress.done.load() << " items, " << progress.oldest_done.load() << " of the " << kOldest
      << " oldest zones were served";
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.consumer_roles"), 0);
}

// Who holds the role, as the consumers themselves report it.
std::vector<int> role_holders(const std::vector<std::unique_ptr<Consumer>>& consumers) {
  std::vector<int> holders;
  for (std::size_t i = 0; i < consumers.size(); ++i) {
    if (consumers[i] && consumers[i]->stats().in_order_role) holders.push_back(static_cast<int>(i));
  }
  return holders;
}

ConsumerConfig named(ConsumerConfig config, const std::string& id) {
  config.consumer_id = id;
  return config;
}

// Several consumers: exactly one holds the in-order role at a time, the role table names it, and
// when it is destroyed (a clean stop releases the role) another takes over within
// in_order_lease_duration.
TEST_F(StarvationTest, OneConsumerAtATimeHoldsTheInOrderRoleAndAnotherTakesItWhenTheHolderStops) {
  std::vector<std::unique_ptr<Consumer>> consumers;
  for (int i = 0; i < 3; ++i) {
    consumers.push_back(std::make_unique<Consumer>(named(base_config(), "consumer-" + std::to_string(i))));
    consumers.back()->handle("work", [](JobContext&) { return JobResult::done(); });
    consumers.back()->start();
  }
  ASSERT_TRUE(eventually([&] { return role_holders(consumers).size() == 1; }, 10s));

  // Sample for a while: never two holders, and the role table agrees.
  const auto sample_end = Clock::now() + 1500ms;
  int samples = 0;
  while (Clock::now() < sample_end) {
    const auto holders = role_holders(consumers);
    ASSERT_LE(holders.size(), 1u) << "two consumers act as the in-order Scanner";
    ASSERT_EQ(holders.size(), 1u) << "the role was dropped while its holder is alive";
    EXPECT_EQ(query_value<std::string>("SELECT holder FROM quick.consumer_roles WHERE role = 'in_order_scanner'"),
              "consumer-" + std::to_string(holders[0]));
    ++samples;
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_GT(samples, 5);

  const int first = role_holders(consumers).at(0);
  consumers[static_cast<std::size_t>(first)].reset();  // destructor: stop(), which releases the role
  const auto stopped = Clock::now();
  ASSERT_TRUE(eventually([&] { return role_holders(consumers).size() == 1; }, 5s));
  const auto handover = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - stopped);
  const int second = role_holders(consumers).at(0);
  std::cout << "role moved from consumer-" << first << " to consumer-" << second << " in " << handover.count() << " ms"
            << std::endl;
  EXPECT_NE(second, first);
  EXPECT_LE(handover, base_config().scanner.in_order_lease_duration);
  EXPECT_EQ(query_value<std::string>("SELECT holder FROM quick.consumer_roles WHERE role = 'in_order_scanner'"),
            "consumer-" + std::to_string(second));
  for (auto& consumer : consumers) consumer.reset();
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.consumer_roles"), 0)
      << "stopped consumers should release the role";
}

// A holder that dies without releasing the role (simulated: the role row names a consumer that
// no longer exists): nobody takes the role before its lease runs out, and a live consumer takes
// it soon after.
TEST_F(StarvationTest, ARoleWhoseHolderDiedMovesToALiveConsumerOnceItsLeaseRunsOut) {
  std::vector<std::unique_ptr<Consumer>> consumers;
  for (int i = 0; i < 2; ++i) {
    consumers.push_back(std::make_unique<Consumer>(named(base_config(), "consumer-" + std::to_string(i))));
    consumers.back()->handle("work", [](JobContext&) { return JobResult::done(); });
    consumers.back()->start();
  }
  ASSERT_TRUE(eventually([&] { return role_holders(consumers).size() == 1; }, 10s));

  const std::string dead_lease_end = query_value<std::string>(
      "UPDATE quick.consumer_roles SET holder = 'crashed-consumer', "
      "expires_at = now() + interval '1 second' WHERE role = 'in_order_scanner' "
      "RETURNING expires_at::text");
  const auto crashed_at = Clock::now();
  // Until the dead holder's lease runs out, the role stays with it. The deadline is the dead
  // lease's own end, not the row's current expiry: once a live consumer has taken the role the
  // row's expiry keeps moving, and a loop on it would never end if this thread, slowed by a busy
  // machine, missed the last 50 ms of the dead lease.
  // Holder and time come from one statement, and the consumers' own view is sampled before it,
  // so a slow test thread never compares a later holder with an earlier clock.
  const std::string holder_before_dead_lease_end = "SELECT holder, now() < '" + dead_lease_end +
                                                   "'::timestamptz - interval '50 milliseconds' "
                                                   "FROM quick.consumer_roles WHERE role = 'in_order_scanner'";
  while (true) {
    // After 700 ms every live consumer has renewed (every 333 ms) and seen the other holder.
    const bool settled = Clock::now() - crashed_at > 700ms;
    const auto acting_in_order = role_holders(consumers);
    const pqxx::result role = query(holder_before_dead_lease_end);
    ASSERT_EQ(role.size(), 1u) << "the role row disappeared";
    if (!role[0][1].as<bool>()) break;
    EXPECT_EQ(role[0][0].as<std::string>(), "crashed-consumer");
    if (settled) {
      EXPECT_TRUE(acting_in_order.empty()) << "a consumer acts in order while another holds the role";
    }
    std::this_thread::sleep_for(20ms);
  }
  const auto expired = Clock::now();
  ASSERT_TRUE(eventually([&] { return role_holders(consumers).size() == 1; }, 5s));
  const auto takeover = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - expired);
  std::cout << "role taken " << takeover.count() << " ms after the dead holder's lease ran out" << std::endl;
  EXPECT_LE(takeover, base_config().scanner.in_order_lease_duration);
  const auto holder = query_value<std::string>(
      "SELECT holder FROM quick.consumer_roles WHERE role = 'in_order_scanner'");
  EXPECT_EQ(holder, "consumer-" + std::to_string(role_holders(consumers).at(0)));
}

}  // namespace
}  // namespace quick
