// Chaos, short enough for every test run: on a Postgres cluster of its own, three `quick worker`
// processes serve a queue while producers enqueue at READ COMMITTED, REPEATABLE READ and
// SERIALIZABLE (some rolling back on purpose), and meanwhile workers are killed with SIGKILL and
// restarted, every backend is terminated, and Postgres is restarted in immediate mode (a crash:
// SIGQUIT to the postmaster, then crash recovery). Afterwards every committed job has run at least
// once, no rolled-back job has run, and no zone is orphaned.
#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <pqxx/pqxx>

#include "local_postgres/local_cluster.h"
#include "quick/quick.h"
#include "support/eventually.h"
#include "support/items.h"
#include "support/own_cluster.h"
#include "support/processes.h"

namespace quick::testing {
namespace {

constexpr auto kChaosFor = std::chrono::seconds(40);
constexpr int kWorkers = 3;
constexpr int kTenants = 20;

enum class Isolation { kReadCommitted, kRepeatableRead, kSerializable };

// What the producers know about their transactions' fates, by item token: each item carries a
// token of its own in its payload ({"t": "<producer>-<n>"}). Not by item id: ids come from a
// sequence, and after a crash Postgres may hand out again the values it gave a transaction that
// never committed (their WAL record need not have reached disk), so a rolled-back item's id can
// name a later, committed one.
struct Ledger {
  std::mutex mutex;
  std::set<std::string> committed;    // commit() returned
  std::set<std::string> rolled_back;  // aborted on purpose, or failed before COMMIT was sent
  std::set<std::string> in_doubt;     // the connection broke during COMMIT: either
  int transactions = 0;
  int retries = 0;  // serialization failures and broken connections, retried
};

// One application thread: transactions of 1-3 items over kTenants tenants at `isolation`; one in
// eight rolled back on purpose. Reconnects after any connection failure, as an application would.
void run_producer(const std::string& url, Isolation isolation, unsigned seed, const std::atomic<bool>& stop,
                  Ledger& ledger) {
  std::mt19937 random(seed);
  std::unique_ptr<pqxx::connection> conn;
  long next_token = 0;
  while (!stop.load()) {
    std::vector<std::string> ids;  // the tokens of this transaction's items
    bool commit_sent = false;
    try {
      if (!conn || !conn->is_open()) conn = std::make_unique<pqxx::connection>(url);
      auto enqueue = [&](pqxx::transaction_base& txn) {
        std::vector<NewItem> items;
        const int count = 1 + static_cast<int>(random() % 3);
        for (int i = 0; i < count; ++i) {
          const std::string token = std::to_string(seed) + "-" + std::to_string(next_token++);
          items.push_back(
              make_item("tenant-" + std::to_string(random() % kTenants), "chaos", "{\"t\": \"" + token + "\"}"));
          ids.push_back(token);
        }
        std::sort(items.begin(), items.end(), [](const NewItem& a, const NewItem& b) { return a.tenant < b.tenant; });
        if (random() % 2 == 0) {
          enqueue_batch_in(txn, items);
        } else {
          for (const auto& item : items) enqueue_in(txn, item);
        }
      };
      const bool roll_back = random() % 8 == 0;
      auto finish = [&](pqxx::transaction_base& txn) {
        if (roll_back) {
          txn.abort();
          std::lock_guard<std::mutex> lock(ledger.mutex);
          ledger.rolled_back.insert(ids.begin(), ids.end());
        } else {
          commit_sent = true;
          txn.commit();
          std::lock_guard<std::mutex> lock(ledger.mutex);
          ledger.committed.insert(ids.begin(), ids.end());
        }
        ++ledger.transactions;
      };
      if (isolation == Isolation::kSerializable) {
        pqxx::transaction<pqxx::isolation_level::serializable> txn(*conn);
        enqueue(txn);
        finish(txn);
      } else if (isolation == Isolation::kRepeatableRead) {
        pqxx::transaction<pqxx::isolation_level::repeatable_read> txn(*conn);
        enqueue(txn);
        finish(txn);
      } else {
        pqxx::work txn(*conn);
        enqueue(txn);
        finish(txn);
      }
    } catch (const std::exception&) {
      // A serialization failure, a terminated backend, a server restarting: the transaction is
      // gone. Before COMMIT was sent it certainly rolled back; during COMMIT nobody can say.
      std::lock_guard<std::mutex> lock(ledger.mutex);
      (commit_sent ? ledger.in_doubt : ledger.rolled_back).insert(ids.begin(), ids.end());
      ++ledger.retries;
      conn.reset();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5 + random() % 15));
  }
}

void terminate_backends(const std::string& url) {
  pqxx::connection conn(url);
  pqxx::nontransaction session(conn);
  session.exec(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
      "WHERE datname = current_database() AND pid <> pg_backend_pid()");
}

TEST(ChaosTest, CommittedJobsRunAndRolledBackOnesNeverDoThroughKillsTerminationsAndCrashes) {
  const std::string quick = quick_binary();
  ASSERT_FALSE(quick.empty());
  TempDir dir;
  OwnCluster own(dir.cluster_state_dir("cluster"));
  const std::string url = own.url();
  const auto record_file = dir / "ran.txt";
  const auto config_file = dir / "worker.yaml";
  write_text_file(config_file, R"yaml(databases:
  - name: main
    url_env: CHAOS_DATABASE_URL
scanner:
  idle_poll_interval: 5ms
  in_order_lease_duration: 1s
manager:
  min_inactive: 0s
  p_duration: 500ms
worker:
  threads: 4
  item_lease_duration: 2s
stop_deadline: 2s
reconnect_delay_max: 200ms
job_types:
  chaos:
    command: 'printf "%s\\n" "$(cat)" >> "$RECORD_FILE"'
    environment: [RECORD_FILE]
)yaml");
  int started_workers = 0;
  auto start_worker = [&] {
    const std::string name = "worker-" + std::to_string(started_workers++);
    return std::make_unique<ChildProcess>(
        std::vector<std::string>{quick, "worker", "--config", config_file.string(), "--stats-interval", "10s"},
        std::vector<std::string>{"CHAOS_DATABASE_URL=" + url, "RECORD_FILE=" + record_file.string()},
        dir / (name + ".out"), dir / (name + ".err"));
  };
  std::vector<std::unique_ptr<ChildProcess>> workers;
  for (int i = 0; i < kWorkers; ++i) workers.push_back(start_worker());

  Ledger ledger;
  std::atomic<bool> stop_producers{false};
  std::vector<std::thread> producers;
  // However the test ends (an assertion returns early), the producers stop and are joined.
  struct JoinProducers {
    std::atomic<bool>& stop;
    std::vector<std::thread>& threads;
    ~JoinProducers() {
      stop = true;
      for (auto& thread : threads)
        if (thread.joinable()) thread.join();
    }
  } join_producers{stop_producers, producers};
  unsigned seed = 1;
  for (const auto isolation :
       {Isolation::kReadCommitted, Isolation::kReadCommitted, Isolation::kRepeatableRead, Isolation::kSerializable}) {
    producers.emplace_back(run_producer, url, isolation, seed++, std::cref(stop_producers), std::ref(ledger));
  }

  // The chaos: one event every four seconds, in turn.
  int kills = 0, terminations = 0, crashes = 0;
  const auto end = Clock::now() + kChaosFor;
  for (int round = 0; Clock::now() < end; ++round) {
    std::this_thread::sleep_for(std::chrono::seconds(4));
    switch (round % 4) {
      case 0:
      case 2: {
        auto& victim = workers[static_cast<std::size_t>(kills % kWorkers)];
        victim->signal(SIGKILL);
        ASSERT_TRUE(victim->wait_for(seconds(10)));
        victim = start_worker();
        ++kills;
        break;
      }
      case 1:
        terminate_backends(url);
        ++terminations;
        break;
      case 3:
        own.restart_immediately();
        if (HasFatalFailure()) return;
        ++crashes;
        break;
    }
  }
  stop_producers = true;
  for (auto& producer : producers) producer.join();
  producers.clear();

  // Every item the database holds is eventually run: the queue drains.
  pqxx::connection check(url);
  auto count = [&](const std::string& sql) {
    pqxx::nontransaction session(check);
    return session.exec(sql).at(0).at(0).as<long>();
  };
  const bool drained = eventually([&] { return count("SELECT count(*) FROM quick.items") == 0; }, seconds(90));
  for (auto& worker : workers) worker->signal(SIGTERM);
  for (auto& worker : workers) worker->wait_for(seconds(15));

  // Each line is a payload as the command read it from standard input: {"t": "<token>"}.
  std::set<std::string> ran;
  std::size_t runs = 0;
  for (const auto& line : read_lines(record_file)) {
    const auto end = line.rfind('"');
    const auto start = end == std::string::npos ? end : line.rfind('"', end - 1);
    ASSERT_NE(start, std::string::npos) << "unexpected record: " << line;
    ran.insert(line.substr(start + 1, end - start - 1));
    ++runs;
  }
  std::cout << "[chaos] " << kChaosFor.count() << " s: " << kills << " workers killed, " << terminations
            << " backend terminations, " << crashes << " immediate restarts; " << ledger.transactions
            << " transactions (" << ledger.retries << " failed and retried): " << ledger.committed.size()
            << " items committed, " << ledger.rolled_back.size() << " rolled back, " << ledger.in_doubt.size()
            << " in doubt; " << runs << " runs of " << ran.size() << " items" << std::endl;
  ASSERT_TRUE(drained) << count("SELECT count(*) FROM quick.items") << " items still queued 90 s after the chaos";
  EXPECT_GT(ledger.committed.size(), 200u) << "too little work to mean anything";
  EXPECT_GE(crashes, 2);
  std::size_t missing = 0, phantom = 0;
  for (const auto& id : ledger.committed) missing += ran.count(id) == 0;
  for (const auto& id : ledger.rolled_back) phantom += ran.count(id);
  EXPECT_EQ(missing, 0u) << "committed jobs that never ran";
  EXPECT_EQ(phantom, 0u) << "rolled-back jobs that ran";
  EXPECT_EQ(count("SELECT count(*) FROM quick.orphaned_zones"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM quick.dead_items"), 0);
}

}  // namespace
}  // namespace quick::testing
