// Tenants moved back and forth between two databases while producers enqueue to them through the
// Router and one consumer serves both databases: afterwards every committed job ran, none ran twice
// at once, no zone is without its pointer, and no move is left prepared (docs/scaling.md).
#include <atomic>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "quick/consumer.h"
#include "quick/placement.h"
#include "support/consumer_helpers.h"
#include "support/eventually.h"
#include "support/items.h"
#include "support/placement_fixture.h"

namespace quick::testing {
namespace {

class MoveUnderLoadTest : public TwoDatabaseTest {};

// Which jobs ran, and whether one ever ran at two places at once.
class Runs {
 public:
  void start(const std::string& key) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!running_.insert(key).second) ++concurrent_;
    ++runs_[key];
  }
  void finish(const std::string& key) {
    std::lock_guard<std::mutex> lock(mutex_);
    running_.erase(key);
  }
  bool ran(const std::string& key) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return runs_.count(key) > 0;
  }
  int concurrent() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return concurrent_;
  }

 private:
  mutable std::mutex mutex_;
  std::set<std::string> running_;
  std::map<std::string, int> runs_;
  int concurrent_ = 0;
};

TEST_F(MoveUnderLoadTest, EveryCommittedJobRunsNoneTwiceAtOnceAndNoZoneIsOrphaned) {
  constexpr int kTenants = 12;
  const auto run_for = std::chrono::seconds(8);

  Runs runs;
  auto consumer_config = fast_config(url(), "move-under-load");
  consumer_config.databases = config_.databases;
  Consumer consumer(consumer_config);
  consumer.handle("job", [&](JobContext& job) {
    const std::string key = job.item().payload;
    runs.start(key);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    runs.finish(key);
    return JobResult::done();
  });
  // Local work in each database, served by the same consumer and never moved.
  for (const auto& database : config_.databases) {
    pqxx::connection conn(database.url);
    enqueue(conn, make_item(local_tenant("maintenance"), "job", "{\"local\": \"" + database.name + "\"}"));
  }
  consumer.start();

  std::atomic<bool> stop{false};
  std::mutex committed_mutex;
  std::vector<std::string> committed;
  std::atomic<int> refused{0};
  std::vector<std::thread> producers;
  for (int p = 0; p < 2; ++p) {
    producers.emplace_back([&, p] {
      Router router(config_);
      for (int seq = 0; !stop; ++seq) {
        const std::string tenant = "tenant" + std::to_string(seq % kTenants);
        const std::string payload = "{\"p\": " + std::to_string(p) + ", \"seq\": " + std::to_string(seq) + "}";
        try {
          router.enqueue(make_item(tenant, "job", payload));
          std::lock_guard<std::mutex> lock(committed_mutex);
          committed.push_back(payload);
        } catch (const std::exception& error) {
          ++refused;  // not committed (a move held the tenant past the router's retries): not expected to run
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    });
  }
  int moves = 0;
  int failed_moves = 0;
  std::mt19937 random(7);
  const auto until = std::chrono::steady_clock::now() + run_for;
  Router where(config_);
  while (std::chrono::steady_clock::now() < until) {
    const std::string tenant = "tenant" + std::to_string(random() % kTenants);
    where.forget(tenant);
    const std::string to = where.database_for(tenant) == "one" ? "two" : "one";
    MoveOptions options;
    options.lock_timeout = std::chrono::seconds(2);
    try {
      move_tenant(config_, tenant, to, options);
      ++moves;
    } catch (const std::exception& error) {
      ++failed_moves;  // a lock not granted in time: the move changed nothing
    }
  }
  stop = true;
  for (auto& producer : producers) producer.join();

  ASSERT_TRUE(eventually(
      [&] {
        std::lock_guard<std::mutex> lock(committed_mutex);
        for (const auto& payload : committed) {
          if (!runs.ran(payload)) return false;
        }
        return runs.ran("{\"local\": \"one\"}") && runs.ran("{\"local\": \"two\"}");
      },
      std::chrono::seconds(60)))
      << "some committed jobs never ran";
  consumer.stop();

  EXPECT_GT(moves, 10) << failed_moves << " moves failed";
  EXPECT_GT(committed.size(), 500u);
  EXPECT_EQ(runs.concurrent(), 0) << "a job ran twice at once";
  EXPECT_EQ(orphaned_zones("one") + orphaned_zones("two"), 0);
  EXPECT_EQ(prepared_moves("one") + prepared_moves("two"), 0);
  RecordProperty("moves", moves);
  RecordProperty("failed_moves", failed_moves);
  RecordProperty("committed", static_cast<int>(committed.size()));
  RecordProperty("refused", refused.load());
  std::cout << moves << " moves (" << failed_moves << " gave up), " << committed.size() << " jobs committed, "
            << refused.load() << " refused\n";
}

}  // namespace
}  // namespace quick::testing
