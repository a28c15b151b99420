#include "worker/acknowledger.h"

#include <algorithm>
#include <map>
#include <set>

#include "core/database_session.h"
#include "core/lease_keeper.h"
#include "core/loop_errors.h"
#include "store/consumer_store.h"
#include "util/logging.h"

namespace quick::worker {
namespace {

using core::ConsumerCore;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// One acknowledgment in the writer's batch of its database.
struct WaitingAck {
  store::Ack ack;
  core::HeldItemPtr held;  // the item it is for (null for none): let go once written or given up
  Clock::time_point arrived{};
  bool after_doubt = false;  // an earlier write of it was in doubt: it may have committed
  // It last met a row another session holds (a tenant move copying the zone, a handler's own
  // transaction): written alone, and tried again less and less often, so that the rest are
  // neither held up behind it nor slowed down by its lock waits.
  bool row_locked = false;
};

// A batch that meets a row another session holds fails after a second (the writer sessions'
// lock_timeout, set as they connect: brief locks, such as another consumer's lease extension, are
// simply waited for); an acknowledgment written alone waits 50 ms.
constexpr milliseconds kLockTimeoutBatch{1000};
constexpr milliseconds kLockTimeoutAlone{50};
// Row-locked acknowledgments are tried again after this long, doubling up to kLockedRetryMax
// while their rows stay held.
constexpr milliseconds kLockedRetryFirst{100};
constexpr milliseconds kLockedRetryMax{1000};

struct DatabaseBatch {
  std::vector<WaitingAck> acks;
  std::size_t row_locked = 0;  // of acks
  // After an error that is not one acknowledgment's fault, this database is written to again no
  // sooner than this: the writer serves every database, so it notes the delay instead of sleeping
  // it, and the other databases' acknowledgments are not held up.
  Clock::time_point retry_at{};
  Clock::time_point locked_retry_at{};
  milliseconds locked_retry_interval = kLockedRetryFirst;

  std::size_t free() const { return acks.size() - row_locked; }
};

bool lock_not_available(const store::ErrorClassification& error) { return error.sqlstate == "55P03"; }

bool deletes(store::AckAction action) {
  return action == store::AckAction::kComplete || action == store::AckAction::kDead ||
         action == store::AckAction::kDelete;
}

void count_outcomes(ConsumerCore& core, const std::vector<WaitingAck>& acks,
                    const std::vector<store::AckOutcome>& outcomes) {
  std::map<std::int64_t, Outcome> by_id;
  for (const auto& outcome : outcomes) by_id[outcome.item_id] = outcome.outcome;
  auto& counters = core.counters;
  for (const auto& waiting : acks) {
    static const std::string other(kOtherJobTypes);
    const auto& ack = waiting.ack;
    // An acknowledgment of an item this consumer does not hold counts under kOtherJobTypes.
    const std::string& job_type = waiting.held ? waiting.held->item.job_type : other;
    const auto found = by_id.find(ack.item_id);
    const Outcome outcome = found == by_id.end() ? Outcome::kItemGone : found->second;
    // After an in-doubt commit, the first attempt most likely committed: then a deleting action
    // finds its item gone, and a retry or release finds it without our lease.
    const bool first_attempt_took = waiting.after_doubt && (deletes(ack.action) ? outcome == Outcome::kItemGone
                                                                                : outcome == Outcome::kLeaseLost);
    if (outcome != Outcome::kDone && !first_attempt_took) {
      counters.count(core::ItemEvent::kLeaseLost, job_type);
      continue;
    }
    switch (ack.action) {
      case store::AckAction::kComplete: counters.count(core::ItemEvent::kDone, job_type); break;
      case store::AckAction::kRetry: counters.count(core::ItemEvent::kRetried, job_type); break;
      case store::AckAction::kRelease: core::add(counters.items_released); break;
      case store::AckAction::kDead:
      case store::AckAction::kDelete: counters.count(core::ItemEvent::kDead, job_type); break;
    }
  }
}

}  // namespace

void run_acknowledger(std::shared_ptr<ConsumerCore> core_owner) {
  ConsumerCore& core = *core_owner;
  auto log = util::component_logger("quick.acker");
  const auto& worker = core.config.worker;
  const auto batch_max = static_cast<std::size_t>(worker.ack_batch_max);
  std::vector<core::DatabaseSession> sessions;
  std::vector<util::RetryDelay> retry_delays;
  std::vector<DatabaseBatch> batches(core.databases.size());
  for (const auto& runtime : core.databases) {
    sessions.emplace_back(runtime->config.url, "quick/" + core.config.consumer_id + "/writer", std::nullopt,
                          kLockTimeoutBatch, core::DatabaseSession::Connecting::kInBackground);
    retry_delays.emplace_back(milliseconds(20), core.config.reconnect_delay_max);
  }
  auto name = [&](std::size_t db) -> const std::string& { return core.databases[db]->config.name; };

  // Writes `acks` in one statement (autocommit: one round trip) and counts their outcomes.
  // Throws what ack_items throws.
  auto write = [&](std::size_t db, const std::vector<WaitingAck>& acks) {
    std::vector<store::Ack> statement_acks;
    statement_acks.reserve(acks.size());
    for (const auto& waiting : acks) statement_acks.push_back(waiting.ack);
    pqxx::connection& conn = sessions[db].connection();
    std::vector<store::AckOutcome> outcomes;
    try {
      pqxx::nontransaction statement(conn);
      outcomes = store::ack_items(statement, statement_acks);
    } catch (const pqxx::broken_connection& error) {
      // An autocommit statement whose connection broke may have committed: in doubt (so that a
      // second write that finds its work done counts it as done, not as a lost lease).
      throw pqxx::in_doubt_error(error.what());
    }
    count_outcomes(core, acks, outcomes);
    retry_delays[db].reset();
  };
  // Done with: written, or given up (its item vests again when its lease runs out).
  auto settle = [&](const WaitingAck& waiting) {
    if (waiting.held) core.lease_keeper->let_go(waiting.held);
    core.acks_outstanding.fetch_sub(1);
  };
  // An error that is not one acknowledgment's fault, met writing `unwritten`: counted, logged, the
  // connection dropped if unusable, and this database's next write put off. Call from a catch.
  auto note_error = [&](std::size_t db, std::vector<WaitingAck>& unwritten) {
    const auto noted = core::note_loop_error(core, *log, "acknowledgment", name(db), &sessions[db], retry_delays[db]);
    batches[db].retry_at = Clock::now() + noted.retry_in;
    if (noted.error.kind == store::ErrorKind::kInDoubt) {
      for (auto& waiting : unwritten) waiting.after_doubt = true;
    }
    return noted.error;
  };

  enum class Alone { kSettled, kRowLocked, kFailed };
  // Writes one acknowledgment alone (the session's lock_timeout is kLockTimeoutAlone). A data
  // exception (SQLSTATE class 22, e.g. a retry delay over quick.limits.max_vesting_delay) is
  // logged, and a retry or release is then written once more to vest at once, so that the failure
  // still counts towards max_attempts and the item does not come back after every lease to be
  // refused again; what is refused after that is given up.
  auto write_alone = [&](std::size_t db, WaitingAck& waiting) {
    for (int attempt = 0; attempt < 2; ++attempt) {
      try {
        std::vector<WaitingAck> one{waiting};
        write(db, one);
        return Alone::kSettled;
      } catch (...) {
        const auto error = store::classify_current_exception();
        if (lock_not_available(error)) return Alone::kRowLocked;
        if (error.kind != store::ErrorKind::kPermanent) {
          std::vector<WaitingAck> one{waiting};
          note_error(db, one);
          waiting.after_doubt = one.front().after_doubt;
          return Alone::kFailed;
        }
        core::add(core.counters.database_errors);
        const auto& ack = waiting.ack;
        const bool vests_again = ack.action == store::AckAction::kRetry || ack.action == store::AckAction::kRelease;
        const bool may_retry = attempt == 0 && vests_again && ack.delay != milliseconds(0);
        log->error("database {} refused the acknowledgment of item {} ({}{}{}): {}; {}", name(db), ack.item_id,
                   error.sqlstate, error.sqlstate.empty() ? "" : " ", store::to_string(error.kind), error.message,
                   may_retry ? "writing it again to vest at once"
                             : "giving it up: the item vests again when its lease runs out");
        if (!may_retry) break;
        waiting.ack.delay = milliseconds(0);
      }
    }
    return Alone::kSettled;
  };

  auto set_lock_timeout = [&](std::size_t db, milliseconds timeout) {
    pqxx::nontransaction(sessions[db].connection())
        .exec("SET lock_timeout = '" + std::to_string(timeout.count()) + "ms'");
  };

  // Writes `acks` one at a time, so that one acknowledgment's fault costs no other its write.
  // Returns those still pending: the ones whose rows another session holds (and, untried, the
  // rest of their tenants', whose zone is most likely held as a whole by a tenant move; those found
  // held go last, so that next time their tenant's others are tried first), and after an error
  // that is not one acknowledgment's fault, all not yet written. Sets `failed` on such an error.
  auto write_one_at_a_time = [&](std::size_t db, std::vector<WaitingAck> acks, bool& failed) {
    try {
      set_lock_timeout(db, kLockTimeoutAlone);
    } catch (...) {
      note_error(db, acks);
      failed = true;
      return acks;
    }
    std::set<std::string> held_tenants;
    std::vector<WaitingAck> left, found_held;
    for (auto& waiting : acks) {
      if (failed) {
        left.push_back(std::move(waiting));
        continue;
      }
      if (waiting.held && held_tenants.count(waiting.held->item.tenant)) {
        waiting.row_locked = true;
        left.push_back(std::move(waiting));
        continue;
      }
      switch (write_alone(db, waiting)) {
        case Alone::kSettled: settle(waiting); break;
        case Alone::kRowLocked:
          waiting.row_locked = true;
          if (waiting.held) held_tenants.insert(waiting.held->item.tenant);
          found_held.push_back(std::move(waiting));
          break;
        case Alone::kFailed:
          failed = true;
          left.push_back(std::move(waiting));
          break;
      }
    }
    // The session gets the batch's timeout back; after an error (whose retry delay is not over
    // yet) by being dropped: it reconnects with that timeout when next used.
    if (failed) {
      sessions[db].reset();
    } else {
      try {
        set_lock_timeout(db, kLockTimeoutBatch);
      } catch (...) {
        sessions[db].reset();
      }
    }
    for (auto& waiting : found_held) left.push_back(std::move(waiting));
    return left;
  };

  // Writes `acks`, none known to meet a held row, in one statement. A data exception (class 22)
  // or a row another session holds (55P03) is one acknowledgment's fault, not the batch's: they
  // are then written one at a time. Returns those still pending, as write_one_at_a_time does.
  auto write_batch = [&](std::size_t db, std::vector<WaitingAck> acks, bool& failed) {
    try {
      write(db, acks);
      for (const auto& waiting : acks) settle(waiting);
      return std::vector<WaitingAck>{};
    } catch (...) {
      const auto refused = store::classify_current_exception();
      const bool data_exception = refused.kind == store::ErrorKind::kPermanent && refused.sqlstate.rfind("22", 0) == 0;
      if (!data_exception && !lock_not_available(refused)) {
        failed = true;
        if (note_error(db, acks).kind == store::ErrorKind::kPermanent) {
          // Repeating will not help (e.g. the schema is missing); the items vest again when their
          // leases run out.
          log->error("dropping {} acknowledgments on database {}", acks.size(), name(db));
          for (const auto& waiting : acks) settle(waiting);
          return std::vector<WaitingAck>{};
        }
        return acks;
      }
      log->warn("database {} did not take a batch of {} acknowledgment(s) ({} {}); writing them one at a time",
                name(db), acks.size(), refused.sqlstate, refused.message);
    }
    return write_one_at_a_time(db, std::move(acks), failed);
  };

  auto count_row_locked = [](const std::vector<WaitingAck>& acks) {
    return static_cast<std::size_t>(
        std::count_if(acks.begin(), acks.end(), [](const WaitingAck& waiting) { return waiting.row_locked; }));
  };

  // The free acknowledgments as one batch; the row-locked ones alone, when their time has come.
  auto flush = [&](std::size_t db, bool stopping) {
    auto& batch = batches[db];
    // Set aside too: the new acknowledgments of tenants whose rows were found held (a move holds
    // the whole zone), so that a batch does not wait a second for their rows.
    std::set<std::string> held_tenants;
    for (const auto& waiting : batch.acks) {
      if (waiting.row_locked && waiting.held) held_tenants.insert(waiting.held->item.tenant);
    }
    std::vector<WaitingAck> free, held;
    for (auto& waiting : batch.acks) {
      if (!waiting.row_locked && waiting.held && held_tenants.count(waiting.held->item.tenant) > 0) {
        waiting.row_locked = true;
      }
      (waiting.row_locked ? held : free).push_back(std::move(waiting));
    }
    batch.acks.clear();
    bool failed = false;
    if (!free.empty()) {
      free = write_batch(db, std::move(free), failed);
      const std::size_t newly_held = count_row_locked(free);
      if (newly_held > 0) {
        // From after the writes (the batch itself waited a second for the lock).
        if (held.empty()) batch.locked_retry_at = Clock::now() + batch.locked_retry_interval;
        const auto first = std::find_if(free.begin(), free.end(),
                                        [](const auto& waiting) { return waiting.row_locked; });
        log->warn(
            "{} acknowledgment(s) on database {} wait for rows another session holds (item {}{}); the others are "
            "written meanwhile",
            newly_held, name(db), first->ack.item_id, newly_held > 1 ? " and more" : "");
      }
    }
    if (!held.empty() && !failed && (stopping || Clock::now() >= batch.locked_retry_at)) {
      held = write_one_at_a_time(db, std::move(held), failed);
      if (const std::size_t still_held = count_row_locked(held); still_held > 0) {
        batch.locked_retry_interval = std::min(batch.locked_retry_interval * 2, kLockedRetryMax);
        batch.locked_retry_at = Clock::now() + batch.locked_retry_interval;
        log->debug("{} acknowledgment(s) on database {} still wait for rows another session holds", still_held,
                   name(db));
      }
    }
    batch.acks = std::move(free);
    for (auto& waiting : held) batch.acks.push_back(std::move(waiting));
    batch.row_locked = count_row_locked(batch.acks);
    if (batch.row_locked == 0) batch.locked_retry_interval = kLockedRetryFirst;
  };

  // When `batch` is due: its oldest free acknowledgment has waited ack_interval, or ack_batch_max
  // are free, or the row-locked ones' time has come; never before retry_at unless stopping.
  auto due_at = [&](const DatabaseBatch& batch) {
    auto at = Clock::time_point::max();
    for (const auto& waiting : batch.acks) {
      if (!waiting.row_locked) at = std::min(at, waiting.arrived + worker.ack_interval);
    }
    if (batch.free() >= batch_max) at = Clock::time_point::min();
    if (batch.row_locked > 0) at = std::min(at, batch.locked_retry_at);
    return at == Clock::time_point::max() ? at : std::max(at, batch.retry_at);
  };

  bool final_round = false;
  while (true) {
    const bool stopping = core.stop_background.requested();
    // Wait for the next acknowledgment or the next batch that is due. With nothing pending, an
    // idle consumer's writer wakes 10 times a second (and a stop waits at most that long).
    auto wait = std::max(worker.ack_interval, milliseconds(100));
    const auto before = Clock::now();
    for (const auto& batch : batches) {
      const auto at = due_at(batch);
      if (at <= before) {
        wait = milliseconds(0);
      } else if (at != Clock::time_point::max()) {
        wait = std::min(wait, std::chrono::ceil<milliseconds>(at - before));
      }
    }
    auto next = core.ack_queue.pop(wait);
    const auto now = Clock::now();
    while (next) {
      auto& batch = batches[static_cast<std::size_t>(next->database)];
      batch.acks.push_back(WaitingAck{std::move(next->ack), std::move(next->held), now});
      if (batch.free() >= batch_max) break;
      next = core.ack_queue.pop(milliseconds(0));
    }
    for (std::size_t db = 0; db < batches.size(); ++db) {
      const auto& batch = batches[db];
      if (!batch.acks.empty() && (stopping || due_at(batch) <= now)) flush(db, stopping);
    }
    if (final_round) break;
    if (stopping && core.ack_queue.size() == 0) {
      // One more round to flush what arrived meanwhile; what still fails then is given up, and
      // its items simply vest again when their leases run out.
      final_round = true;
    }
  }
  for (std::size_t db = 0; db < batches.size(); ++db) {
    auto& batch = batches[db];
    if (batch.acks.empty()) continue;
    log->warn("{} acknowledgments on database {} not written at stop; those items vest again when their leases run out",
              batch.acks.size(), name(db));
    for (const auto& waiting : batch.acks) settle(waiting);
  }
}

}  // namespace quick::worker
