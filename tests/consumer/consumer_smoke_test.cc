#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "quick/consumer.h"
#include "quick/quick.h"
#include "support/test_database.h"

namespace quick {
namespace {

class ConsumerSmokeTest : public testing::DatabaseTest {};

TEST_F(ConsumerSmokeTest, ConsumerRunsEveryItemOnce) {
  {
    auto conn = connect();
    pqxx::work txn(*conn);
    std::vector<NewItem> items;
    for (int i = 0; i < 300; ++i) {
      NewItem item;
      item.tenant = "t" + std::to_string(i % 30);
      item.job_type = "noop";
      item.payload = "{\"i\":" + std::to_string(i) + "}";
      items.push_back(item);
    }
    enqueue_batch_in(txn, items);
    txn.commit();
  }
  ConsumerConfig config;
  config.databases.push_back(DatabaseConfig{"main", url()});
  config.manager.min_inactive = std::chrono::milliseconds(0);
  Consumer consumer(config);
  std::atomic<int> runs{0};
  consumer.handle("noop", [&](JobContext&) {
    ++runs;
    return JobResult::done();
  });
  consumer.start();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (query_value<int>("SELECT count(*) FROM quick.items") > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  consumer.stop();
  std::cout << consumer.stats().to_string() << std::endl;
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.items"), 0);
  EXPECT_EQ(runs.load(), 300);
  EXPECT_EQ(consumer.stats().items_done, 300u);
}

}  // namespace
}  // namespace quick
