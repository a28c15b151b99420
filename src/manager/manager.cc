#include "manager/manager.h"

#include <algorithm>
#include <string>

#include "core/database_session.h"
#include "core/lease_keeper.h"
#include "core/loop_errors.h"
#include "store/consumer_store.h"
#include "store/pointer_store.h"
#include "util/logging.h"

namespace quick::manager {
namespace {

using core::ConsumerCore;
using core::HeldItemPtr;

// Job types at their max_in_flight: left out of the dequeue. Only a type with items held can be
// at its limit, and its limit is its job_types entry's or, for a type not listed there,
// default_job_type's.
std::vector<std::string> saturated_job_types(const ConsumerCore& core) {
  std::vector<std::string> saturated;
  for (const auto& [job_type, held] : core.work_queue.held_by_type()) {
    const int limit = core.config.job_type(job_type).max_in_flight;
    if (limit > 0 && held >= limit) saturated.push_back(job_type);
  }
  return saturated;
}

// A throttled item vests again after this short delay rather than at once, so that a consumer at
// its limit does not dequeue and release the same items in a tight loop.
constexpr std::chrono::milliseconds kThrottledReleaseDelay{50};

// Hands the dequeued items to the Workers. A batch can bring more items of a job type than its
// max_in_flight allows; the WorkQueue refuses those atomically and they are released at once
// (paper section 6: "for throttled items, we may release the lease").
void hand_to_workers(ConsumerCore& core, int database, std::vector<store::DequeuedItem> dequeued) {
  std::vector<HeldItemPtr> items;
  const auto now = std::chrono::steady_clock::now();
  for (auto& entry : dequeued) {
    auto held_item = std::make_shared<core::HeldItem>();
    held_item->database = database;
    held_item->item = std::move(entry.item);
    held_item->dequeued_at = now;
    held_item->ready_lag = entry.ready_lag;
    held_item->age_at_dequeue = entry.age;
    items.push_back(std::move(held_item));
  }
  // Held before they are visible to Workers, so that a Worker's let_go always comes after.
  core.lease_keeper->hold(items);
  const auto refused = core.work_queue.push_within_limits(
      std::move(items), [&core](const std::string& job_type) { return core.config.job_type(job_type).max_in_flight; });
  for (const auto& item : refused) {
    core::add(core.counters.items_throttled);
    item->acknowledging.store(true);
    core.submit_ack(core::PendingAck{
        database,
        store::Ack{item->item.id, *item->item.lease_id, store::AckAction::kRelease, kThrottledReleaseDelay, "", 0},
        item});
  }
}

void count_visit(ConsumerCore& core, const core::PointerBatch& batch, const store::ZoneVisit& visit) {
  auto& counters = core.counters;
  core::add(counters.visits);
  core::add(counters.pointer_lease_attempts, batch.tenants.size());
  core::add(counters.pointer_leases_won, visit.zones.size());
  const auto conflicts = static_cast<std::uint64_t>(visit.conflicts_locked + visit.conflicts_not_vested +
                                                    visit.conflicts_gone);
  core::add(counters.pointer_leases_lost, conflicts);
  core::add(counters.pointer_conflicts_locked, static_cast<std::uint64_t>(visit.conflicts_locked));
  core::add(counters.pointer_conflicts_not_vested, static_cast<std::uint64_t>(visit.conflicts_not_vested));
  core::add(counters.pointer_conflicts_gone, static_cast<std::uint64_t>(visit.conflicts_gone));
  core::add(counters.items_dequeued, visit.items.size());
  for (const auto& zone : visit.zones) {
    counters.pointer_pickup_latency.record(zone.pointer_lag);
    switch (zone.action) {
      case store::SettleAction::kRequeued: core::add(counters.pointers_requeued); break;
      case store::SettleAction::kParked: core::add(counters.pointers_parked); break;
      case store::SettleAction::kCollected: core::add(counters.pointers_collected); break;
      case store::SettleAction::kReleasedBusy: core::add(counters.pointers_released_busy); break;
      case store::SettleAction::kSkipped:  // settle_pointers only (the SQL API), never in a visit
      case store::SettleAction::kLeaseLost: break;
    }
  }
}

// One visit (Algorithm 2) of a batch of zones: one transaction, one round trip.
void visit_zones(ConsumerCore& core, core::DatabaseSession& session, const core::PointerBatch& batch) {
  const auto& manager = core.config.manager;
  // One autocommit statement, one round trip: the visit's transaction commits on the server as the
  // statement ends, and the session's statement_timeout (p_duration) cancels a statement that runs
  // longer. The byte budget keeps the result small enough that the server is not left blocked
  // sending it to a client that stopped reading (docs/consumer.md#errors).
  pqxx::nontransaction statement(session.connection());
  const auto started = std::chrono::steady_clock::now();
  store::ZoneVisit visit = store::visit_zones(statement, batch.tenants, manager.dequeue_max,
                                              core.config.worker.item_lease_duration, manager.min_inactive,
                                              saturated_job_types(core), manager.visit_max_bytes);
  count_visit(core, batch, visit);
  auto& runtime = *core.databases[static_cast<std::size_t>(batch.database)];
  const auto ended = std::chrono::steady_clock::now();
  runtime.scan_pacing.visit_finished(visit.items.size(), manager.dequeue_max, ended);
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(ended - started);
  if (const auto limit = runtime.visit_size_limit.finished(static_cast<int>(batch.tenants.size()), took,
                                                           manager.p_duration)) {
    util::component_logger("quick.manager")
        ->info(
            "database {}: visits finish well within manager.p_duration ({} ms) again; they now take {}",
            runtime.config.name, manager.p_duration.count(),
            *limit == 0 ? std::string("the configured number of zones") : "up to " + std::to_string(*limit) + " zones");
  }
  auto& lost_in_a_row = runtime.visits_lost_in_a_row;
  if (!visit.zones.empty()) lost_in_a_row.store(0);
  else if (!batch.tenants.empty()) lost_in_a_row.fetch_add(1);
  hand_to_workers(core, batch.database, std::move(visit.items));
}

// SQLSTATE query_canceled: here the session's statement_timeout, p_duration (or an operator's
// pg_cancel_backend, for which a smaller visit is no worse).
constexpr const char* kStatementCancelled = "57014";

// A visit ran past p_duration and was cancelled, having changed nothing: the next ones take
// fewer zones, so that the consumer makes progress while the database is slow
// (core/visit_size_limit.h).
void shrink_visits(core::DatabaseRuntime& runtime, std::size_t zones, const ManagerConfig& manager,
                   spdlog::logger& log) {
  if (const auto limit = runtime.visit_size_limit.cancelled(static_cast<int>(zones))) {
    log.warn(
        "database {}: a visit of {} zones ran past manager.p_duration ({} ms) and was cancelled; visits now take up "
        "to {} zones until they finish well within it again",
        runtime.config.name, zones, manager.p_duration.count(), *limit);
  }
}

}  // namespace

void run_manager(std::shared_ptr<ConsumerCore> core_owner, int manager_index) {
  ConsumerCore& core = *core_owner;
  auto log = util::component_logger("quick.manager");
  std::vector<core::DatabaseSession> sessions;
  std::vector<util::RetryDelay> retry_delays;
  for (const auto& runtime : core.databases) {
    // p_duration bounds how long a visit holds its zones: past it, Postgres cancels the visit
    // and the zones are free again at once.
    sessions.emplace_back(runtime->config.url, "quick/" + core.config.consumer_id + "/manager",
                          core.config.manager.p_duration);
    retry_delays.emplace_back(std::chrono::milliseconds(50), core.config.reconnect_delay_max);
  }
  log->debug("manager {} started", manager_index);
  while (true) {
    auto batch = core.manager_queue.pop(std::chrono::milliseconds(50));
    if (!batch) {
      if (core.manager_queue.closed()) break;
      continue;
    }
    const auto index = static_cast<std::size_t>(batch->database);
    auto& runtime = *core.databases[index];
    try {
      visit_zones(core, sessions[index], *batch);
      retry_delays[index].reset();
    } catch (...) {
      // The visit rolled back (nothing changed) or its outcome is unknown (its items vest again
      // when their leases run out); either way the Scanner will select these zones again.
      const auto error = core::handle_loop_error(core, *log, "pointer visit", runtime.config.name, &sessions[index],
                                                 retry_delays[index], core.stop_scanning);
      if (error.sqlstate == kStatementCancelled) {
        shrink_visits(runtime, batch->tenants.size(), core.config.manager, *log);
      }
    }
    runtime.unmark_in_progress(batch->tenants);
    core.visits_in_flight.fetch_sub(1);
    core.notify_visit_finished();
  }
  log->debug("manager {} stopped", manager_index);
}

}  // namespace quick::manager
