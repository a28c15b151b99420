#include "worker/acknowledger.h"

#include <algorithm>
#include <deque>
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

// `held`: the items the acks are for (an ack of an item not among them counts under
// kOtherJobTypes).
void count_outcomes(ConsumerCore& core, const std::vector<store::Ack>& acks, const std::vector<core::HeldItemPtr>& held,
                    const std::vector<store::AckOutcome>& outcomes, bool after_doubt) {
  std::map<std::int64_t, Outcome> by_id;
  for (const auto& outcome : outcomes) by_id[outcome.item_id] = outcome.outcome;
  std::map<std::int64_t, const std::string*> job_types;
  for (const auto& item : held) job_types[item->item.id] = &item->item.job_type;
  auto& counters = core.counters;
  for (const auto& ack : acks) {
    static const std::string other(kOtherJobTypes);
    const auto found = job_types.find(ack.item_id);
    const std::string& job_type = found == job_types.end() ? other : *found->second;
    const Outcome outcome = by_id.count(ack.item_id) ? by_id[ack.item_id] : Outcome::kItemGone;
    // After an in-doubt commit, "gone" for a deleting action most likely means our first attempt
    // committed.
    const bool deleting = ack.action == store::AckAction::kComplete || ack.action == store::AckAction::kDead ||
                          ack.action == store::AckAction::kDelete;
    const bool done = outcome == Outcome::kDone || (after_doubt && deleting && outcome == Outcome::kItemGone);
    if (!done) {
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

// The lease keeper stops extending these items' leases: their acknowledgments are written (or
// given up, and the items vest again when their leases run out).
void let_go(ConsumerCore& core, std::vector<core::HeldItemPtr>& held) {
  for (const auto& item : held) core.lease_keeper->let_go(item);
  held.clear();
}

struct PendingBatch {
  std::vector<store::Ack> acks;
  std::vector<core::HeldItemPtr> held;  // the items the acks are for, let go once written
  std::chrono::steady_clock::time_point oldest{};
  bool after_doubt = false;
  // Items whose acknowledgment last met a row another session holds: written one at a time
  // until they go through, so that the rest are not held up behind them.
  std::set<std::int64_t> row_locked;
};

// An acknowledgment written alone waits this long at most for a row another session holds (a
// handler's own transaction, a tenant move copying the zone), where a batch waits a second: it
// stays pending and is tried again at the next flush.
constexpr std::chrono::milliseconds kLockTimeoutAlone{50};
constexpr std::chrono::milliseconds kLockTimeoutBatch{1000};  // the session's, set as it connects

bool lock_not_available(const store::ErrorClassification& error) { return error.sqlstate == "55P03"; }

}  // namespace

void run_acknowledger(std::shared_ptr<ConsumerCore> core_owner) {
  ConsumerCore& core = *core_owner;
  auto log = util::component_logger("quick.acker");
  const auto& worker = core.config.worker;
  std::vector<core::DatabaseSession> sessions;
  std::vector<util::RetryDelay> retry_delays;
  std::vector<PendingBatch> pending(core.databases.size());
  for (const auto& runtime : core.databases) {
    // lock_timeout: a batch that meets a row another session holds fails after a second, and is
    // then written one acknowledgment at a time (write_one_at_a_time), instead of holding up
    // every acknowledgment behind it.
    sessions.emplace_back(runtime->config.url, "quick/" + core.config.consumer_id + "/writer", std::nullopt,
                          kLockTimeoutBatch);
    retry_delays.emplace_back(std::chrono::milliseconds(20), core.config.reconnect_delay_max);
  }

  // Writes `acks` in one statement and counts their outcomes. Throws what ack_items throws.
  auto write = [&](std::size_t db, const std::vector<store::Ack>& acks, const std::vector<core::HeldItemPtr>& held,
                   bool after_doubt) {
    pqxx::nontransaction statement(sessions[db].connection());  // autocommit: one round trip
    const auto outcomes = store::ack_items(statement, acks);
    count_outcomes(core, acks, held, outcomes, after_doubt);
  };
  // The acknowledgments and items of `batch` are done with: written, or given up.
  auto settle = [&](PendingBatch& batch, std::size_t count) {
    core.acks_outstanding.fetch_sub(static_cast<std::int64_t>(count));
    batch.acks.erase(batch.acks.begin(), batch.acks.begin() + static_cast<std::ptrdiff_t>(count));
  };

  // After the database refused a whole batch with an error that is one acknowledgment's fault,
  // each is written alone, so that it cannot cost the others theirs (completed items would run
  // again) nor hold them up:
  // - a data exception (SQLSTATE class 22: e.g. a retry delay over quick.limits.max_vesting_delay)
  //   is logged; a retry or release is then written once more to vest at once (so the failure
  //   still counts towards max_attempts, and the item does not come back after every lease to be
  //   refused again); anything refused after that is given up, and its item vests again when its
  //   lease runs out;
  // - a row another session holds (55P03 after kLockTimeoutAlone) leaves that acknowledgment
  //   pending, remembered in row_locked, and the others are written.
  // Any other error leaves this one and the rest pending for the next flush.
  auto write_one_at_a_time = [&](std::size_t db) {
    auto& batch = pending[db];
    std::map<std::int64_t, core::HeldItemPtr> held_by_id;
    for (auto& item : batch.held) held_by_id[item->item.id] = item;
    std::vector<store::Ack> left;  // still pending afterwards, in their order
    std::size_t done = 0;
    bool failed = false;
    auto set_lock_timeout = [&](std::chrono::milliseconds timeout) {
      pqxx::nontransaction(sessions[db].connection())
          .exec("SET lock_timeout = '" + std::to_string(timeout.count()) + "ms'");
    };
    try {
      set_lock_timeout(kLockTimeoutAlone);
    } catch (...) {
      core::handle_loop_error(core, *log, "acknowledgment", core.databases[db]->config.name, &sessions[db],
                              retry_delays[db], core.stop_background);
      return false;
    }
    for (std::size_t i = 0; i < batch.acks.size(); ++i) {
      store::Ack ack = batch.acks[i];
      if (failed) {
        left.push_back(ack);
        continue;
      }
      const auto held = held_by_id.find(ack.item_id);
      std::vector<core::HeldItemPtr> held_one;
      if (held != held_by_id.end()) held_one.push_back(held->second);
      bool written = false, keep = false;
      for (int attempt = 0; attempt < 2 && !written; ++attempt) {
        try {
          write(db, {ack}, held_one, batch.after_doubt);
          written = true;
        } catch (...) {
          const auto error = store::classify_current_exception();
          if (lock_not_available(error)) {
            keep = true;
            break;
          }
          if (error.kind != store::ErrorKind::kPermanent) {
            const auto handled = core::handle_loop_error(core, *log, "acknowledgment", core.databases[db]->config.name,
                                                         &sessions[db], retry_delays[db], core.stop_background);
            if (handled.kind == store::ErrorKind::kInDoubt) batch.after_doubt = true;
            failed = keep = true;
            break;
          }
          core::add(core.counters.database_errors);
          const bool vests_again = ack.action == store::AckAction::kRetry || ack.action == store::AckAction::kRelease;
          const bool may_retry = attempt == 0 && vests_again && ack.delay != std::chrono::milliseconds(0);
          log->error("database {} refused the acknowledgment of item {} ({}{}{}): {}; {}",
                     core.databases[db]->config.name, ack.item_id, error.sqlstate, error.sqlstate.empty() ? "" : " ",
                     store::to_string(error.kind), error.message,
                     may_retry ? "writing it again to vest at once"
                               : "giving it up: the item vests again when its lease runs out");
          if (!may_retry) break;
          ack.delay = std::chrono::milliseconds(0);
        }
      }
      if (keep) {
        if (!failed) batch.row_locked.insert(ack.item_id);
        left.push_back(batch.acks[i]);
        continue;
      }
      batch.row_locked.erase(ack.item_id);
      if (held != held_by_id.end()) {
        core.lease_keeper->let_go(held->second);
        held_by_id.erase(held);
      }
      ++done;
    }
    if (!failed) {
      try {
        set_lock_timeout(kLockTimeoutBatch);
      } catch (...) {
        sessions[db].reset();  // it reconnects with the batch's timeout
      }
    }
    core.acks_outstanding.fetch_sub(static_cast<std::int64_t>(done));
    batch.acks = std::move(left);
    batch.held.clear();
    for (auto& [id, item] : held_by_id) batch.held.push_back(item);
    if (batch.acks.empty()) {
      batch.after_doubt = false;
      retry_delays[db].reset();
    } else if (!failed && !batch.row_locked.empty()) {
      log->warn(
          "{} acknowledgment(s) on database {} wait for rows another session holds (items {}{}); the others "
          "are written",
          batch.row_locked.size(), core.databases[db]->config.name, *batch.row_locked.begin(),
          batch.row_locked.size() > 1 ? ", ..." : "");
    }
    return batch.acks.empty();
  };

  auto flush = [&](std::size_t db) {
    auto& batch = pending[db];
    if (batch.acks.empty()) return true;
    if (!batch.row_locked.empty()) return write_one_at_a_time(db);  // not behind a row lock again
    try {
      write(db, batch.acks, batch.held, batch.after_doubt);
      settle(batch, batch.acks.size());
      let_go(core, batch.held);
      batch.after_doubt = false;
      retry_delays[db].reset();
      return true;
    } catch (...) {
      // A data exception (class 22: an argument the database will not take) or a row another
      // session holds is one acknowledgment's fault, not the batch's: write them one at a time.
      const auto refused = store::classify_current_exception();
      const bool data_exception = refused.kind == store::ErrorKind::kPermanent && refused.sqlstate.rfind("22", 0) == 0;
      if (!data_exception && !lock_not_available(refused)) {
        const auto error = core::handle_loop_error(core, *log, "acknowledgment", core.databases[db]->config.name,
                                                   &sessions[db], retry_delays[db], core.stop_background);
        if (error.kind == store::ErrorKind::kInDoubt) batch.after_doubt = true;
        if (error.kind == store::ErrorKind::kPermanent) {
          // Repeating will not help (e.g. the schema is missing); the items vest again when their
          // leases run out.
          log->error("dropping {} acknowledgments on database {}", batch.acks.size(), core.databases[db]->config.name);
          settle(batch, batch.acks.size());
          let_go(core, batch.held);
        }
        return false;
      }
      log->warn("database {} did not take a batch of {} acknowledgment(s) ({} {}); writing them one at a time",
                core.databases[db]->config.name, batch.acks.size(), refused.sqlstate, refused.message);
    }
    return write_one_at_a_time(db);
  };

  bool final_round = false;
  while (true) {
    const bool stopping = core.stop_background.requested();
    // With nothing pending, wait longer than ack_interval: an idle consumer's writer then wakes
    // 10 times a second instead of 200 (at the 5 ms default), and a stop waits at most that long.
    const bool nothing_pending = std::all_of(pending.begin(), pending.end(),
                                             [](const auto& batch) { return batch.acks.empty(); });
    auto next = core.ack_queue.pop(nothing_pending ? std::max(worker.ack_interval, std::chrono::milliseconds(100))
                                                   : worker.ack_interval);
    const auto now = std::chrono::steady_clock::now();
    while (next) {
      auto& batch = pending[static_cast<std::size_t>(next->database)];
      if (batch.acks.empty()) batch.oldest = now;
      batch.acks.push_back(std::move(next->ack));
      if (next->held) batch.held.push_back(std::move(next->held));
      if (batch.acks.size() >= static_cast<std::size_t>(worker.ack_batch_max)) break;
      next = core.ack_queue.pop(std::chrono::milliseconds(0));
    }
    for (std::size_t db = 0; db < pending.size(); ++db) {
      auto& batch = pending[db];
      const bool due = !batch.acks.empty() && (stopping || now - batch.oldest >= worker.ack_interval ||
                                               batch.acks.size() >= static_cast<std::size_t>(worker.ack_batch_max));
      if (due) flush(db);
    }
    if (final_round) break;
    if (stopping && core.ack_queue.size() == 0) {
      // One more round to flush what arrived meanwhile; a batch still failing then is dropped,
      // and its items simply vest again when their leases run out.
      final_round = true;
    }
  }
  for (std::size_t db = 0; db < pending.size(); ++db) {
    if (!pending[db].acks.empty()) {
      log->warn(
          "{} acknowledgments on database {} not written at stop; those items vest again when their leases run out",
          pending[db].acks.size(), core.databases[db]->config.name);
      core.acks_outstanding.fetch_sub(static_cast<std::int64_t>(pending[db].acks.size()));
    }
    let_go(core, pending[db].held);
  }
}

}  // namespace quick::worker
