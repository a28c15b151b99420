#include "core/loop_errors.h"

#include "core/consumer_core.h"
#include "core/lease_keeper.h"

namespace quick::core {

NotedLoopError note_loop_error(ConsumerCore& core, spdlog::logger& log, const char* activity,
                               const std::string& database, DatabaseSession* session, util::RetryDelay& delay) {
  const auto error = store::classify_current_exception();
  add(core.counters.database_errors);
  if (error.kind == store::ErrorKind::kInDoubt) add(core.counters.in_doubt_commits);
  if (session != nullptr && error.connection_unusable()) {
    const bool was_connected = session->connected();
    session->reset();
    add(core.counters.reconnects);
    // The server may have restarted and lost its last visits, whose commits do not wait for the
    // WAL flush: check the leases of the items held now, so that a lost one stops its handler.
    // Once per connection that broke, not per failed attempt to connect again (which would run a
    // round on every database at that database's retry pace).
    if (was_connected && core.lease_keeper) core.lease_keeper->check_soon();
  }
  auto wait = delay.next();
  if (error.kind == store::ErrorKind::kPermanent) {
    // Retrying at once will not help (e.g. the schema is missing); an operator must act.
    wait = std::max(wait, std::chrono::milliseconds(1000));
    log.error("{} on database {} failed ({}{}{}): {}; retrying in {} ms", activity, database,
              store::to_string(error.kind), error.sqlstate.empty() ? "" : " ", error.sqlstate, error.message,
              wait.count());
  } else {
    log.warn("{} on database {} failed ({}): {}; retrying in {} ms", activity, database, store::to_string(error.kind),
             error.message, wait.count());
  }
  return {error, wait};
}

store::ErrorClassification handle_loop_error(ConsumerCore& core, spdlog::logger& log, const char* activity,
                                             const std::string& database, DatabaseSession* session,
                                             util::RetryDelay& delay, const util::StopSignal& stop) {
  const auto noted = note_loop_error(core, log, activity, database, session, delay);
  stop.wait_for(noted.retry_in);
  return noted.error;
}

}  // namespace quick::core
