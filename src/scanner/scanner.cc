#include "scanner/scanner.h"

#include <algorithm>
#include <numeric>
#include <random>

#include "consumer/database_session.h"
#include "consumer/loop_errors.h"
#include "scanner/in_order_election.h"
#include "scanner/pointer_selection.h"
#include "store/error_classification.h"
#include "store/pointer_store.h"
#include "util/logging.h"
#include "util/retry_delay.h"

namespace quick::scanner {
namespace {

using consumer::ConsumerCore;

// Per database: its connection, election and error backoff.
struct ScannedDatabase {
  consumer::DatabaseRuntime* runtime;
  consumer::DatabaseSession session;
  InOrderElection election;
  util::RetryDelay retry_delay;
};

// Claims or renews the in-order role of every database when due, also while the Scanner waits
// for room, so that a busy consumer does not let its role lapse. Errors are logged, not thrown:
// the election simply counts as lost until the next attempt.
void tick_elections(std::vector<std::unique_ptr<ScannedDatabase>>& databases, spdlog::logger& log) {
  for (auto& db : databases) {
    try {
      db->election.tick(db->session.connection());
    } catch (...) {
      const auto error = store::classify_current_exception();
      if (error.connection_unusable()) db->session.reset();
      log.warn("in-order role on database {}: {}", db->runtime->config.name, error.message);
    }
  }
}

// Waits until the Workers can take more (Algorithm 1, line 5): fewer than `prefetch` (at least 1)
// items buffered or on their way from Managers. Returns false when stopping.
bool wait_for_room(ConsumerCore& core, std::vector<std::unique_ptr<ScannedDatabase>>& databases,
                   spdlog::logger& log) {
  const auto limit = static_cast<std::size_t>(std::max(1, core.config.effective_prefetch()));
  while (!core.stop_scanning.requested()) {
    const auto expected = static_cast<std::size_t>(std::max(0, core.items_expected.load()));
    if (core.work_queue.buffered() + expected < limit) return true;
    tick_elections(databases, log);
    core.work_queue.wait_for_room(limit, std::chrono::milliseconds(5));
  }
  return false;
}

// One peek-select-dispatch step in one database. Returns how many pointers it selected and
// whether the database's turn should go on (a full peek that selected something).
std::pair<int, bool> scan_once(ConsumerCore& core, ScannedDatabase& db, int database_index,
                               std::mt19937_64& random) {
  const auto& scanner = core.config.scanner;
  pqxx::connection& conn = db.session.connection();
  db.election.tick(conn);  // rate-limited inside

  std::vector<store::PeekedPointer> peeked;
  {
    pqxx::work txn(conn);
    const int pulled = store::apply_pointer_pulls(txn, scanner.pulls_per_scan);
    peeked = store::peek_pointers(txn, scanner.peek_max);
    txn.commit();
    consumer::add(core.counters.pulls_applied, static_cast<std::uint64_t>(pulled));
  }
  consumer::add(core.counters.scans);
  consumer::add(core.counters.pointers_peeked, peeked.size());

  std::vector<std::string> candidates;
  candidates.reserve(peeked.size());
  for (const auto& pointer : peeked) {
    if (!db.runtime->is_in_progress(pointer.tenant)) candidates.push_back(pointer.tenant);
  }
  const bool in_order = db.election.holds();
  if (in_order) consumer::add(core.counters.in_order_scans);
  auto selected = select_pointers(candidates, scanner.selection_frac, scanner.selection_max, in_order, random);
  consumer::add(core.counters.pointers_selected, selected.size());

  db.runtime->mark_in_progress(selected);
  core.items_expected.fetch_add(static_cast<int>(selected.size()));
  const auto batch_size = static_cast<std::size_t>(core.config.manager.pointers_per_batch);
  for (std::size_t start = 0; start < selected.size(); start += batch_size) {
    consumer::PointerBatch batch;
    batch.database = database_index;
    const auto end = std::min(selected.size(), start + batch_size);
    batch.tenants.assign(selected.begin() + static_cast<long>(start), selected.begin() + static_cast<long>(end));
    core.manager_queue.push(std::move(batch));
  }
  const bool short_peek = static_cast<int>(peeked.size()) < scanner.peek_max;
  return {static_cast<int>(selected.size()), !short_peek && !selected.empty()};
}

}  // namespace

void run_scanner(std::shared_ptr<ConsumerCore> core_owner) {
  ConsumerCore& core = *core_owner;
  auto log = util::component_logger("quick.scanner");
  const auto& scanner = core.config.scanner;

  std::vector<std::unique_ptr<ScannedDatabase>> databases;
  for (auto& runtime : core.databases) {
    databases.push_back(std::make_unique<ScannedDatabase>(ScannedDatabase{
        runtime.get(), consumer::DatabaseSession(runtime->config.url, "quick/" + core.config.consumer_id + "/scanner"),
        InOrderElection(*runtime, core.config.consumer_id, scanner.in_order_lease_duration,
                        scanner.in_order_election),
        util::RetryDelay(std::chrono::milliseconds(50), core.config.reconnect_delay_max)}));
  }
  std::mt19937_64 random(std::random_device{}());
  std::vector<int> order(databases.size());
  std::iota(order.begin(), order.end(), 0);

  log->info("started: {} database(s), peek_max={}, selection_frac={}, selection_max={}", databases.size(),
            scanner.peek_max, scanner.selection_frac, scanner.selection_max);
  while (!core.stop_scanning.requested()) {
    std::shuffle(order.begin(), order.end(), random);  // Algorithm 1, line 1
    int selected_this_round = 0;
    for (int index : order) {
      auto& db = *databases[static_cast<std::size_t>(index)];
      int processed = 0;
      while (processed < scanner.processing_bound && wait_for_room(core, databases, *log)) {
        try {
          const auto [selected, go_on] = scan_once(core, db, index, random);
          processed += selected;
          selected_this_round += selected;
          db.retry_delay.reset();
          if (!go_on) break;
        } catch (...) {
          consumer::handle_loop_error(core, *log, "scan", db.runtime->config.name, &db.session,
                                      db.retry_delay, core.stop_scanning);
          break;
        }
      }
      if (core.stop_scanning.requested()) break;
    }
    if (selected_this_round == 0) core.stop_scanning.wait_for(scanner.idle_poll_interval);
  }
  for (auto& db : databases) {
    if (!db->session.connected()) continue;
    try {
      db->election.release(db->session.connection());
    } catch (...) {
      // Best effort: an unreleased role simply expires.
    }
  }
  log->info("stopped");
}

}  // namespace quick::scanner
