// A Scanner with no room (every Worker busy, the buffer full) keeps renewing its in-order role and
// membership while it waits, every few milliseconds. When its database goes away meanwhile, it
// must back off like every other loop: not a connection attempt and a warning every time.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>

#include "quick/consumer.h"
#include "quick/logging.h"
#include "quick/quick.h"
#include "support/consumer_helpers.h"
#include "support/eventually.h"
#include "support/test_database.h"

namespace quick {
namespace {

using namespace std::chrono_literals;
using testing::eventually;

class SaturatedScannerTest : public testing::DatabaseTest {
 protected:
  void TearDown() override {
    set_log_sink({});
    allow_connections(true);
    DatabaseTest::TearDown();
  }
  // On the cluster's admin database: this test's own refuses connections meanwhile.
  void admin(const std::string& sql) const {
    pqxx::connection conn(testing::admin_url());
    pqxx::nontransaction(conn).exec(sql);
  }
  void allow_connections(bool allow) const {
    pqxx::connection conn(testing::admin_url());
    pqxx::nontransaction(conn).exec("ALTER DATABASE " + conn.quote_name(database_name()) + " ALLOW_CONNECTIONS " +
                                    (allow ? "true" : "false"));
  }
};

TEST_F(SaturatedScannerTest, BacksOffWhileItsDatabaseRefusesConnections) {
  std::atomic<int> lease_warnings{0};
  set_log_sink([&](const LogRecord& record) {
    if (record.message.find("in-order role or membership") != std::string_view::npos) ++lease_warnings;
  });
  ConsumerConfig config = testing::fast_config(url(), "saturated");
  config.worker.threads = 1;
  config.worker.prefetch_zones = 1;
  config.reconnect_delay_max = 1s;
  Consumer consumer(config);
  std::atomic<bool> started{false};
  consumer.handle("block", [&](JobContext& job) {
    started = true;
    while (!job.should_stop()) std::this_thread::sleep_for(5ms);
    return JobResult::retry("stopped");
  });
  for (int k = 0; k < 2; ++k) testing::enqueue_one(url(), "tenant", "block");  // one runs, one waits
  consumer.start();
  ASSERT_TRUE(eventually([&] { return started.load(); }, 20s));

  // The database now refuses every new connection, and the Scanner's session is cut.
  allow_connections(false);
  admin("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = " +
        pqxx::connection(testing::admin_url()).quote(database_name()) + " AND application_name LIKE '%/scanner'");
  // Its next renewal (due a third of in_order_lease_duration, 1 s, after the last) finds out.
  ASSERT_TRUE(eventually([&] { return lease_warnings.load() > 0; }, 10s));
  const int before = lease_warnings.load();
  std::this_thread::sleep_for(2s);
  const int during = lease_warnings.load() - before;
  consumer.stop();
  // Backing off from 50 ms, doubling, up to 1 s: at most a handful in 2 s. Without it, one every
  // 2 ms: about a thousand.
  EXPECT_LE(during, 10) << "the Scanner retried without backing off";
}

}  // namespace
}  // namespace quick
