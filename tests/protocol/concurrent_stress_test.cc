// Enqueuers, consumers and garbage collection all at once, over a handful of tenants so that
// their races are frequent (docs/protocol.md). The interleaving tests prove the protocol step by
// step; this one checks that nothing is lost when real threads race at full speed:
//   * no snapshot ever shows a zone with items and no pointer (checked while running),
//   * every committed item is completed exactly once, and rolled-back ones never appear,
//   * READ COMMITTED enqueuers never see a serialization failure; SERIALIZABLE ones retry.
// Consumers settle with min_inactive 0, so empty zones are collected as soon as they are seen,
// and now and then one abandons its pointer leases (a crash) so that leases also run out.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "quick/producer.h"
#include "store/pointer_store.h"
#include "support/test_database.h"

namespace quick {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

const std::vector<std::string> kTenants = {"s-0", "s-1", "s-2", "s-3"};
constexpr auto kEnqueuePhase = 5s;
constexpr auto kDrainLimit = 20s;

// kReadCommittedSqlFunctions calls quick.enqueue and quick.enqueue_batch as any SQL client does;
// the others go through the C++ producer (its fast paths, falling back to those functions for new
// zones): both implementations of the protocol race each other here.
enum class EnqueuerKind { kReadCommittedSingle, kReadCommittedBatch, kSerializableMixed, kReadCommittedSqlFunctions };

// The SQL function path for `items` inside `txn`; returns the ids.
std::vector<std::int64_t> enqueue_with_sql_functions(pqxx::transaction_base& txn, const std::vector<NewItem>& items,
                                                     bool batch) {
  std::vector<std::int64_t> ids;
  if (batch) {
    nlohmann::json array = nlohmann::json::array();
    for (const auto& item : items) array.push_back({{"tenant", item.tenant}, {"job_type", item.job_type}});
    for (const auto& row :
         txn.exec_params("SELECT item_id FROM quick.enqueue_batch($1::jsonb) ORDER BY ordinal", array.dump())) {
      ids.push_back(row[0].as<std::int64_t>());
    }
  } else {
    for (const auto& item : items) {
      ids.push_back(txn.exec_params1("SELECT item_id FROM quick.enqueue($1, $2)", item.tenant, item.job_type)[0]
                        .as<std::int64_t>());
    }
  }
  return ids;
}

struct EnqueuerReport {
  std::vector<std::int64_t> committed;
  std::vector<std::int64_t> rolled_back;  // enqueued, then the transaction was rolled back
  int transactions = 0;
  int serialization_failures = 0;  // each one retried
  int deadlocks = 0;               // each one retried
  std::string error;               // anything else ends the thread and fails the test
};

struct ConsumerReport {
  std::vector<std::pair<std::int64_t, std::string>> completed;  // (item, item lease)
  int pointer_leases = 0;
  int abandoned_leases = 0;
  int pulls_applied = 0;
  std::map<std::string, int> settle_actions;
  std::string error;
};

// Commits stop waiting for the WAL flush: visibility and locking are unchanged, and on a small
// machine the test then spends its time racing rather than in fsync.
void relax_durability(pqxx::connection& conn) {
  pqxx::nontransaction txn(conn);
  txn.exec("SET synchronous_commit = off");
}

// One enqueuing application thread: small transactions of 1-6 items over sorted tenants (so
// that transactions creating several new pointers cannot deadlock on the unique index).
void run_enqueuer(const std::string& url, EnqueuerKind kind, unsigned seed, const std::atomic<bool>& stop,
                  EnqueuerReport& report) {
  try {
    pqxx::connection conn(url);
    relax_durability(conn);
    std::mt19937 rng(seed);
    while (!stop.load()) {
      std::vector<NewItem> items;
      const int count = 1 + static_cast<int>(rng() % (kind == EnqueuerKind::kReadCommittedSingle ? 3 : 6));
      for (int i = 0; i < count; ++i) {
        NewItem item;
        item.tenant = kTenants[rng() % kTenants.size()];
        item.job_type = "stress";
        items.push_back(std::move(item));
      }
      std::sort(items.begin(), items.end(), [](const NewItem& a, const NewItem& b) { return a.tenant < b.tenant; });
      const bool batch = kind == EnqueuerKind::kReadCommittedBatch ||
                         (kind == EnqueuerKind::kSerializableMixed && rng() % 2 == 0);
      const bool roll_back = rng() % 25 == 0;

      auto body = [&](pqxx::transaction_base& txn) {
        if (kind == EnqueuerKind::kReadCommittedSqlFunctions) return enqueue_with_sql_functions(txn, items, rng() % 2);
        std::vector<std::int64_t> ids;
        if (batch) {
          for (const auto& result : enqueue_batch_in(txn, items)) ids.push_back(result.item_id);
        } else {
          for (const auto& item : items) ids.push_back(enqueue_in(txn, item).item_id);
        }
        return ids;
      };
      // An application that also does other work: keeps the queue from growing without bound.
      std::this_thread::sleep_for(std::chrono::milliseconds(5 + rng() % 20));
      for (;;) {
        try {
          std::vector<std::int64_t> ids;
          if (kind == EnqueuerKind::kSerializableMixed) {
            pqxx::transaction<pqxx::isolation_level::serializable> txn(conn);
            ids = body(txn);
            if (roll_back) txn.abort();
            else txn.commit();
          } else {
            pqxx::work txn(conn);
            ids = body(txn);
            if (roll_back) txn.abort();
            else txn.commit();
          }
          ++report.transactions;
          auto& into = roll_back ? report.rolled_back : report.committed;
          into.insert(into.end(), ids.begin(), ids.end());
          break;
        } catch (const pqxx::serialization_failure&) {
          ++report.serialization_failures;  // retry the whole transaction, as an application would
        } catch (const pqxx::deadlock_detected&) {
          ++report.deadlocks;
        }
      }
    }
  } catch (const std::exception& error) {
    report.error = error.what();
  } catch (...) {
    report.error = "unknown exception";
  }
}

// One consumer: lease pointers, dequeue and complete their items, settle the pointers.
void run_consumer(const std::string& url, unsigned seed, const std::atomic<bool>& stop, ConsumerReport& report) {
  try {
    pqxx::connection conn(url);
    relax_durability(conn);
    std::mt19937 rng(seed);
    for (int round = 0; !stop.load(); ++round) {
      std::vector<store::PointerLease> leases;
      {
        pqxx::work txn(conn);
        if (round % 2 == 0) {
          leases = store::lease_next_pointers(txn, 2, 1000ms);
        } else {
          std::vector<std::string> wanted;
          for (const auto& tenant : kTenants) {
            if (rng() % 2 == 0) wanted.push_back(tenant);
          }
          leases = store::lease_pointers(txn, wanted, 1000ms);
        }
        txn.commit();
      }
      report.pointer_leases += static_cast<int>(leases.size());
      if (round % 7 == 0) {
        pqxx::work txn(conn);
        report.pulls_applied += store::apply_pointer_pulls(txn, 100);
        txn.commit();
      }
      if (leases.empty()) {
        std::this_thread::sleep_for(1ms);
        continue;
      }
      if (rng() % 40 == 0) {  // crash: never settle; the leases run out after a second
        report.abandoned_leases += static_cast<int>(leases.size());
        continue;
      }
      std::vector<store::PointerVisit> visits;
      for (const auto& lease : leases) {
        pqxx::result items;
        {
          pqxx::work txn(conn);
          items = txn.exec_params("SELECT id, lease_id FROM quick.dequeue($1, 10, interval '30 seconds')",
                                  lease.tenant);
          txn.commit();
        }
        // The handlers' work, acknowledged in one statement per zone, each item with its lease.
        std::string ids = "{", item_leases = "{";
        for (const auto& row : items) {
          ids += (ids.size() > 1 ? "," : "") + std::string(row[0].c_str());
          item_leases += (item_leases.size() > 1 ? "," : "") + std::string(row[1].c_str());
        }
        ids += "}";
        item_leases += "}";
        std::vector<std::pair<std::int64_t, std::string>> done;
        {
          pqxx::work txn(conn);
          const auto outcomes = txn.exec_params(
              "SELECT u.id, u.lease::text, quick.complete(u.id, u.lease)::text "
              "  FROM unnest($1::bigint[], $2::uuid[]) u(id, lease)",
              ids, item_leases);
          for (const auto& row : outcomes) {
            if (std::string(row[2].c_str()) == "done") {
              done.emplace_back(row[0].as<std::int64_t>(), row[1].as<std::string>());
            }
          }
          txn.commit();
        }
        report.completed.insert(report.completed.end(), done.begin(), done.end());
        visits.push_back(store::PointerVisit{lease.tenant, lease.lease_id, !items.empty()});
      }
      pqxx::work txn(conn);
      for (const auto& settled : store::settle_pointers(txn, visits, 0ms)) {
        ++report.settle_actions[store::to_string(settled.action)];
      }
      txn.commit();
    }
  } catch (const std::exception& error) {
    report.error = error.what();
  } catch (...) {
    report.error = "unknown exception";
  }
}

class ConcurrentStressTest : public testing::DatabaseTest {};

TEST_F(ConcurrentStressTest, RacingEnqueuersConsumersAndGcLoseNoItemAndNeverOrphanAZone) {
  const std::vector<EnqueuerKind> kinds = {EnqueuerKind::kReadCommittedSingle, EnqueuerKind::kReadCommittedBatch,
                                           EnqueuerKind::kSerializableMixed, EnqueuerKind::kReadCommittedSqlFunctions};
  constexpr int kConsumers = 3;
  std::atomic<bool> stop_enqueuers{false};
  std::atomic<bool> stop_consumers{false};
  std::vector<EnqueuerReport> enqueuers(kinds.size());
  std::vector<ConsumerReport> consumers(kConsumers);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    threads.emplace_back(run_enqueuer, url(), kinds[i], 1000u + static_cast<unsigned>(i), std::cref(stop_enqueuers),
                         std::ref(enqueuers[i]));
  }
  for (int i = 0; i < kConsumers; ++i) {
    threads.emplace_back(run_consumer, url(), 2000u + static_cast<unsigned>(i), std::cref(stop_consumers),
                         std::ref(consumers[i]));
  }

  // The invariant must hold in every snapshot, not only at the end: watch it while running.
  auto monitor_conn = connect();
  int orphan_checks = 0;
  long max_orphans = 0;
  std::string orphan_example;
  auto check_orphans = [&] {
    pqxx::nontransaction txn(*monitor_conn);
    const auto rows = txn.exec("SELECT tenant, items FROM quick.orphaned_zones");
    ++orphan_checks;
    max_orphans = std::max<long>(max_orphans, static_cast<long>(rows.size()));
    if (!rows.empty() && orphan_example.empty()) {
      orphan_example = std::string(rows[0][0].c_str()) + " (" + rows[0][1].c_str() + " items)";
    }
  };
  auto remaining_items = [&] {
    pqxx::nontransaction txn(*monitor_conn);
    return txn.exec("SELECT count(*) FROM quick.items").at(0).at(0).as<long>();
  };

  const auto started = Clock::now();
  long left_at_drain = -1;
  double drain_seconds = 0;
  try {
    while (Clock::now() - started < kEnqueuePhase) {
      check_orphans();
      std::this_thread::sleep_for(50ms);
    }
    stop_enqueuers = true;
    for (std::size_t i = 0; i < kinds.size(); ++i) threads[i].join();
    // Drain: with no new work, consumers must reach every committed item.
    const auto drain_started = Clock::now();
    left_at_drain = remaining_items();
    while (remaining_items() > 0 && Clock::now() - drain_started < kDrainLimit) {
      check_orphans();
      std::this_thread::sleep_for(50ms);
    }
    drain_seconds = std::chrono::duration<double>(Clock::now() - drain_started).count();
  } catch (const std::exception& error) {
    ADD_FAILURE() << "monitor failed: " << error.what();
  }
  stop_enqueuers = true;
  stop_consumers = true;
  for (auto& thread : threads) {
    if (thread.joinable()) thread.join();
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - started).count();

  for (const auto& report : enqueuers) EXPECT_EQ(report.error, "") << "an enqueuer failed";
  for (const auto& report : consumers) EXPECT_EQ(report.error, "") << "a consumer failed";
  check_orphans();
  EXPECT_EQ(max_orphans, 0) << "orphaned zone seen: " << orphan_example;

  std::set<std::int64_t> committed, rolled_back;
  for (const auto& report : enqueuers) {
    committed.insert(report.committed.begin(), report.committed.end());
    rolled_back.insert(report.rolled_back.begin(), report.rolled_back.end());
  }
  std::map<std::int64_t, int> completions;
  std::set<std::pair<std::int64_t, std::string>> completed_with_lease;
  std::map<std::string, int> settle_actions;
  int pointer_leases = 0, abandoned = 0, pulls = 0;
  for (const auto& report : consumers) {
    for (const auto& entry : report.completed) {
      ++completions[entry.first];
      EXPECT_TRUE(completed_with_lease.insert(entry).second)
          << "item " << entry.first << " completed twice under lease " << entry.second;
    }
    for (const auto& [action, n] : report.settle_actions) settle_actions[action] += n;
    pointer_leases += report.pointer_leases;
    abandoned += report.abandoned_leases;
    pulls += report.pulls_applied;
  }

  // Every committed item was completed exactly once, or is still queued (only if draining
  // failed, which the last expectation reports).
  std::set<std::int64_t> present;
  for (const auto& row : query("SELECT id FROM quick.items")) present.insert(row[0].as<std::int64_t>());
  int lost = 0, twice = 0, phantom = 0;
  for (const auto id : committed) {
    const auto it = completions.find(id);
    if (it == completions.end() && present.count(id) == 0) ++lost;
  }
  for (const auto& [id, n] : completions) {
    if (n > 1) ++twice;
    if (committed.count(id) == 0) ++phantom;
  }
  EXPECT_EQ(lost, 0) << "committed items neither completed nor queued";
  EXPECT_EQ(twice, 0) << "items completed more than once";
  EXPECT_EQ(phantom, 0) << "completed items that no committed transaction enqueued";
  for (const auto id : rolled_back) {
    EXPECT_EQ(present.count(id) + completions.count(id), 0u) << "rolled-back item " << id << " appeared";
  }
  if (!present.empty()) {
    std::ostringstream state;
    for (const auto& row :
         query("SELECT p.tenant, p.vesting_time - now(), p.lease_id IS NOT NULL, p.last_active_time - now(), "
               "       (SELECT count(*) FROM quick.items i WHERE i.tenant = p.tenant), "
               "       (SELECT min(i.vesting_time) - now() FROM quick.items i WHERE i.tenant = p.tenant), "
               "       (SELECT count(*) FROM quick.items i WHERE i.tenant = p.tenant AND i.lease_id IS NOT NULL) "
               "  FROM quick.pointers p ORDER BY 1")) {
      state << "\n  pointer " << row[0].c_str() << ": vests in " << row[1].c_str() << ", leased " << row[2].c_str()
            << ", last active " << row[3].c_str() << ", items " << row[4].c_str() << " (first vests in "
            << row[5].c_str() << ", " << row[6].c_str() << " leased)";
    }
    ADD_FAILURE() << present.size() << " committed items were never reached after enqueueing stopped:" << state.str();
  }
  EXPECT_GT(committed.size(), 100u) << "too little work to be a stress test";

  // READ COMMITTED callers never see a queue-induced serialization failure or deadlock.
  EXPECT_EQ(enqueuers[0].serialization_failures + enqueuers[0].deadlocks, 0);
  EXPECT_EQ(enqueuers[1].serialization_failures + enqueuers[1].deadlocks, 0);
  EXPECT_EQ(enqueuers[3].serialization_failures + enqueuers[3].deadlocks, 0);
  EXPECT_GT(enqueuers[3].committed.size(), 0u) << "the SQL function path enqueued nothing";

  std::ostringstream actions;
  for (const auto& [action, n] : settle_actions) actions << " " << action << "=" << n;
  std::cout << "[protocol] stress " << seconds << "s: items committed=" << committed.size() << " (RC single "
            << enqueuers[0].committed.size() << ", RC batch " << enqueuers[1].committed.size() << ", SER "
            << enqueuers[2].committed.size() << ", RC SQL functions " << enqueuers[3].committed.size()
            << "), rolled back=" << rolled_back.size() << ", completed=" << completions.size()
            << ", queued when enqueueing stopped=" << left_at_drain << " (drained in " << drain_seconds
            << "s), left=" << present.size() << "; SER 40001 retries=" << enqueuers[2].serialization_failures
            << " 40P01=" << enqueuers[2].deadlocks
            << ", RC 40001/40P01=" << enqueuers[0].serialization_failures + enqueuers[1].serialization_failures << "/"
            << enqueuers[0].deadlocks + enqueuers[1].deadlocks << "; pointer leases=" << pointer_leases
            << " abandoned=" << abandoned << " pulls applied=" << pulls << "; settle:" << actions.str()
            << "; orphan checks=" << orphan_checks << " max orphans=" << max_orphans << std::endl;
}

}  // namespace
}  // namespace quick
