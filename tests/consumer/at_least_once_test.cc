// At-least-once delivery (paper section 6): every committed item's handler runs, whatever
// happens to the consumers. Several consumers share a queue without losing or doubling items
// while their leases hold; a consumer process killed with SIGKILL loses nothing either: its
// items run again on another consumer, but only once their leases have run out.
#include <gtest/gtest.h>

#include <atomic>
#include <iostream>
#include <memory>
#include <thread>

#include "quick/consumer.h"
#include "quick/quick.h"
#include "support/consumer_helpers.h"
#include "support/eventually.h"
#include "support/processes.h"
#include "support/test_database.h"

namespace quick {
namespace {

using namespace testing;

class AtLeastOnceTest : public testing::DatabaseTest {};

TEST_F(AtLeastOnceTest, SeveralConsumersRunEveryItemOfManyTenantsAndLoseNone) {
  constexpr int kItems = 400;
  RunLog runs;
  std::vector<std::unique_ptr<Consumer>> consumers;
  for (int c = 0; c < 3; ++c) {
    auto config = fast_config(url(), "at-least-once-" + std::to_string(c));
    config.worker.item_lease_duration = seconds(30);  // no lease may expire: runs must not double
    config.worker.threads = 3;
    // Small visits, so that the work is spread over many visits the consumers compete for (at the
    // defaults one visit could take all 57 zones and all 400 items).
    config.manager.pointers_per_batch = 4;
    config.manager.pointers_per_batch_alone = 0;  // also while one of them is briefly alone
    config.manager.dequeue_max = 4;
    auto consumer = std::make_unique<Consumer>(config);
    consumer->handle("record", [&runs](JobContext& job) {
      runs.record(job.item().id);
      return JobResult::done();
    });
    consumers.push_back(std::move(consumer));
  }
  for (auto& consumer : consumers) consumer->start();
  // The items come once every consumer scans and knows the others, so that the load is shared
  // whichever consumer happens to connect first (one alone drains 400 items in a quarter second).
  ASSERT_TRUE(eventually(
      [&] {
        for (auto& consumer : consumers) {
          const auto stats = consumer->stats();
          if (stats.scans == 0 || stats.live_consumers < consumers.size()) return false;
        }
        return true;
      },
      seconds(30)))
      << "the consumers never all saw each other";
  const auto started = Clock::now();
  const auto ids = enqueue_items(url(), kItems, 57, "record");
  ASSERT_EQ(ids.size(), static_cast<std::size_t>(kItems));
  const bool drained = eventually([&] { return query_value<int>("SELECT count(*) FROM quick.items") == 0; },
                                  seconds(60));
  const double drain_seconds = seconds_since(started);
  for (auto& consumer : consumers) consumer->stop();

  ASSERT_TRUE(drained) << query_value<int>("SELECT count(*) FROM quick.items") << " items still queued after 60 s";
  std::uint64_t done = 0;
  for (std::size_t c = 0; c < consumers.size(); ++c) {
    const auto stats = consumers[c]->stats();
    std::cout << "consumer " << c << ": items_done=" << stats.items_done << " conflicts=" << stats.pointer_leases_lost
              << "\n"
              << stats.to_string() << std::endl;
    done += stats.items_done;
    EXPECT_GT(stats.items_done, 0u) << "consumer " << c << " ran nothing: the load was not shared";
  }
  std::cout << "3 consumers drained " << kItems << " items of 57 tenants in " << drain_seconds << " s" << std::endl;
  for (const auto id : ids) EXPECT_GE(runs.runs(id), 1) << "item " << id << " never ran";
  EXPECT_EQ(runs.distinct(), static_cast<std::size_t>(kItems));
  EXPECT_EQ(runs.ran_more_than_once(), 0u) << "items ran twice although no lease expired";
  EXPECT_EQ(done, static_cast<std::uint64_t>(kItems)) << "each item is completed exactly once";
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.dead_items"), 0);
}

// A `quick worker` process runs the first items and is killed with SIGKILL mid-run; a fresh
// consumer then runs the rest. The items the dead process held (leased) stay invisible until
// their leases expire, then run again.
TEST_F(AtLeastOnceTest, ItemsOfAConsumerKilledWithSigkillRunAgainOnlyAfterTheirLeasesExpire) {
  const std::string quick = quick_binary();
  ASSERT_FALSE(quick.empty());
  constexpr int kItems = 200;
  const auto ids = enqueue_items(url(), kItems, 23, "record");
  TempDir dir;
  const auto record_file = dir / "ran-in-child.txt";
  const auto config_file = dir / "worker.yaml";
  write_text_file(config_file, R"(consumer_id: doomed-child
databases:
  - name: main
    url: ")" + url() + R"("
scanner:
  idle_poll_interval: 5ms
manager:
  min_inactive: 0s
  p_duration: 500ms
worker:
  threads: 4
  prefetch_zones: 8
  item_lease_duration: 2s
stop_deadline: 2s
reconnect_delay_max: 200ms
job_types:
  record:
    command: 'echo "$QUICK_ITEM_ID" >> "$RECORD_FILE"; sleep 0.05'
    environment: [RECORD_FILE]   # commands get the worker's environment only as listed
)");
  ChildProcess child({quick, "worker", "--config", config_file.string(), "--stats-interval", "1s"},
                     {"RECORD_FILE=" + record_file.string()}, dir / "child.out", dir / "child.err");

  // Kill it once it has run a good number of items, but long before it could finish.
  ASSERT_TRUE(eventually([&] { return read_lines(record_file).size() >= 30 || child.exited(); }, seconds(60)))
      << "the child worker ran only " << read_lines(record_file).size() << " items in 60 s\n"
      << child.err();
  ASSERT_FALSE(child.exited()) << "the child worker ended by itself (" << child.describe() << "):\n" << child.err();
  child.signal(SIGKILL);
  ASSERT_TRUE(child.wait_for(seconds(10)));
  ASSERT_EQ(child.term_signal(), std::optional<int>(SIGKILL)) << child.describe();
  // Its backends outlive it until they next read from its socket: one that was running a statement
  // (an acknowledgement, a lease extension) finishes it first, and may commit it. Read what the
  // dead process held only once they are gone (an acknowledgement that committed after the read
  // made an item look held that had in fact completed).
  ASSERT_TRUE(eventually(
      [&] {
        return query_value<int>(
                   "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE 'quick/doomed-child/%'") == 0;
      },
      seconds(10)))
      << "the dead worker's backends were still there 10 s after it";

  // What the dead process held: leased items whose lease is still running. Their expiry is
  // mapped onto the steady clock conservatively (the clock is read before the database's).
  std::map<std::int64_t, Clock::time_point> held_until;
  {
    pqxx::connection conn(url());
    pqxx::nontransaction session(conn);
    const auto before = Clock::now();
    for (const auto& row :
         session.exec("SELECT id, extract(epoch FROM vesting_time - clock_timestamp())::float8 FROM quick.items "
                      "WHERE lease_id IS NOT NULL AND vesting_time > clock_timestamp()")) {
      held_until[row[0].as<std::int64_t>()] = before + std::chrono::duration_cast<Clock::duration>(
                                                           std::chrono::duration<double>(row[1].as<double>()));
    }
  }
  const int remaining = query_value<int>("SELECT count(*) FROM quick.items");
  std::cout << "killed the child after it started " << read_lines(record_file).size() << " items; " << remaining
            << " items remain, " << held_until.size() << " of them leased by the dead process" << std::endl;
  ASSERT_GT(remaining, 0) << "the child finished everything: the kill was not mid-run";
  ASSERT_LT(remaining, kItems) << "the child completed nothing";
  ASSERT_FALSE(held_until.empty()) << "the dead process held no leases: nothing to check";

  // A fresh consumer finishes the job.
  RunLog runs;
  Consumer fresh(fast_config(url(), "fresh"));
  fresh.handle("record", [&runs](JobContext& job) {
    runs.record(job.item().id);
    return JobResult::done();
  });
  const auto fresh_started = Clock::now();
  fresh.start();
  const bool drained = eventually([&] { return query_value<int>("SELECT count(*) FROM quick.items") == 0; },
                                  seconds(60));
  fresh.stop();
  std::cout << "fresh consumer drained the rest in " << seconds_since(fresh_started) << " s\n"
            << fresh.stats().to_string() << std::endl;
  ASSERT_TRUE(drained) << query_value<int>("SELECT count(*) FROM quick.items") << " items still queued after 60 s";

  std::set<std::int64_t> ran;
  for (const auto& line : read_lines(record_file)) ran.insert(std::stoll(line));
  const auto ran_in_fresh = runs.ids();
  ran.insert(ran_in_fresh.begin(), ran_in_fresh.end());
  for (const auto id : ids) EXPECT_EQ(ran.count(id), 1u) << "item " << id << " never ran";
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.dead_items"), 0);

  int early = 0;
  for (const auto& [id, expiry] : held_until) {
    const auto starts = runs.starts(id);
    ASSERT_FALSE(starts.empty()) << "item " << id << ", held by the dead process, never ran again";
    const auto ms_before_expiry = std::chrono::duration_cast<milliseconds>(expiry - starts.front()).count();
    if (starts.front() < expiry) {
      ++early;
      ADD_FAILURE() << "item " << id << " ran again " << ms_before_expiry
                    << " ms before the dead process's lease on it expired";
    }
  }
  std::cout << held_until.size() << " items held by the killed process ran again after their leases expired (" << early
            << " early)" << std::endl;
}

}  // namespace
}  // namespace quick
