#include "worker/worker.h"

#include <algorithm>
#include <random>

#include "core/database_session.h"
#include "core/lease_keeper.h"
#include "quick/zone.h"
#include "store/error_classification.h"
#include "util/duration.h"
#include "util/logging.h"
#include "util/printable.h"
#include "util/text.h"
#include "worker/job_context.h"
#include "worker/retry_decision.h"

namespace quick::worker {
namespace {

// The longest failure reason kept in last_error (and dead_items.reason): enough for a message
// and a stack trace, not a whole log in every retried item's row.
constexpr std::size_t kMaxReasonBytes = 16 * 1024;

// A delay beyond any quick.limits.max_vesting_delay, but one that converts to microseconds
// without overflow (milliseconds::max() would not): the database refuses it, by its own limit.
constexpr std::chrono::milliseconds kLongestDelay = std::chrono::hours(24 * 366 * 100);

using core::ConsumerCore;
using core::HeldItemPtr;
using Clock = std::chrono::steady_clock;

// How one attempt ended, from the Worker's point of view.
struct AttemptOutcome {
  enum class Kind {
    kCompleted,         // done, and completed in the handler's transaction
    kDone,              // done; completion still to acknowledge
    kFailed,            // transient failure (retry per policy)
    kPermanent,         // the handler said it can never succeed
    kLeaseLost,         // someone else holds the item now: leave it alone
    kInterruptedByStop  // the consumer is stopping: give the item back
  };
  Kind kind = Kind::kFailed;
  std::string reason;
  std::optional<std::chrono::milliseconds> retry_delay;
};

class WorkerLoop {
 public:
  WorkerLoop(std::shared_ptr<ConsumerCore> core, int index)
      : core_owner_(std::move(core)),
        core_(*core_owner_),
        index_(index),
        log_(util::component_logger("quick.worker")),
        random_(std::random_device{}()) {
    for (const auto& runtime : core_.databases) {
      sessions_.emplace_back(runtime->config.url, "quick/" + core_.config.consumer_id + "/worker");
    }
  }

  void run() {
    while (true) {
      HeldItemPtr held = core_.work_queue.pop(std::chrono::milliseconds(100));
      if (!held) {
        if (core_.work_queue.closed()) break;
        continue;
      }
      try {
        process(held);
      } catch (...) {
        // Defensive: process() handles its own errors; nothing may escape the thread.
        const auto error = store::classify_current_exception();
        log_->error("worker {}: unexpected error on item {}: {}", index_, held->item.id, error.message);
      }
      // An item whose outcome is queued stays held until the Acknowledger has written it.
      if (!held->acknowledging.load()) core_.lease_keeper->let_go(held);
      core_.work_queue.finished(held);
    }
  }

 private:
  void process(const HeldItemPtr& held) {
    const Item& item = held->item;
    if (held->lease_lost.load()) {  // Algorithm 3: double-check the lease before starting
      core_.counters.count(core::ItemEvent::kLeaseLost, item.job_type);
      return;
    }
    if (core_.stop_handlers.requested()) {
      acknowledge(held, store::AckAction::kRelease, std::chrono::milliseconds(0), "", 0);
      return;
    }
    const auto handler = core_.handlers.find(item.job_type);
    const JobTypeConfig& type = core_.config.job_type(item.job_type);
    if (handler == core_.handlers.end()) {
      put_aside_unhandled(held, type);
      return;
    }
    const auto started = Clock::now();
    const auto waited = held->ready_lag +
                        std::chrono::duration_cast<std::chrono::microseconds>(started - held->dequeued_at);
    core_.counters.record_pickup(item.job_type, waited);
    const auto deadline = started + type.execution_bound;
    held->deadline_ns.store(deadline.time_since_epoch().count());
    held->running.store(true);

    int inline_retries = 0;
    while (true) {
      AttemptOutcome outcome = attempt(handler->second, held, item.error_count + inline_retries + 1, deadline, waited);
      std::optional<FailureDecision> decision;
      if (outcome.kind == AttemptOutcome::Kind::kFailed) {
        FailureFacts facts{item.error_count, inline_retries, held->age_now(), false, outcome.retry_delay};
        decision = decide_after_failure(type.retry, facts, unit_random());
        const bool may_retry_now = Clock::now() < deadline && !held->lease_lost.load() &&
                                   !core_.stop_handlers.requested();
        if (decision->kind == FailureDecision::Kind::kRetryInline && may_retry_now) {
          ++inline_retries;
          core::add(core_.counters.items_inline_retries);
          log_->debug("item {} failed ({}); retrying in line", item.id, util::escape_unprintable(outcome.reason));
          continue;
        }
        if (decision->kind == FailureDecision::Kind::kRetryInline) {
          // No time left for an in-line retry: requeue after the backoff instead.
          decision->kind = FailureDecision::Kind::kRequeue;
          decision->delay = outcome.retry_delay
                                ? *outcome.retry_delay
                                : backoff_delay(type.retry, item.error_count + inline_retries, unit_random());
        }
      }
      core_.counters.record_handler_duration(
          item.job_type, std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - started));
      finish(held, type, outcome, decision, inline_retries + 1);
      return;
    }
  }

  AttemptOutcome attempt(const Handler& handler, const HeldItemPtr& held, int attempt_number,
                         Clock::time_point deadline, std::chrono::microseconds waited) {
    auto& session = sessions_[static_cast<std::size_t>(held->database)];
    WorkerJobContext context(core_, held, session, attempt_number, deadline, waited);
    std::optional<JobResult> result;
    std::string failure;
    try {
      result = handler(context);
    } catch (const std::exception& error) {
      failure = std::string("handler threw: ") + error.what();
    } catch (...) {
      failure = "handler threw a non-standard exception";
    }
    if (!result) {
      core::add(core_.counters.handler_exceptions);
      // A broken connection inside the handler's transaction must not poison the next item.
      if (context.open_transaction()) abandon_transaction(context, session);
    }

    AttemptOutcome outcome;
    if (held->lease_lost.load()) {
      outcome.kind = AttemptOutcome::Kind::kLeaseLost;
    } else if (result && result->kind() == JobResult::Kind::kDone) {
      outcome.kind = AttemptOutcome::Kind::kDone;  // even if late: completion checks the lease
    } else if (context.past_deadline()) {
      core::add(core_.counters.items_execution_bound);
      outcome.kind = AttemptOutcome::Kind::kFailed;
      outcome.reason = "execution bound exceeded";
    } else if (!result) {
      outcome.kind = AttemptOutcome::Kind::kFailed;
      outcome.reason = failure;
    } else if (result->kind() == JobResult::Kind::kPermanentFailure) {
      outcome.kind = AttemptOutcome::Kind::kPermanent;
      outcome.reason = result->reason();
    } else {
      outcome.kind = AttemptOutcome::Kind::kFailed;
      outcome.reason = result->reason();
      outcome.retry_delay = result->retry_delay();
    }
    if (core_.stop_handlers.requested() && outcome.kind == AttemptOutcome::Kind::kFailed) {
      outcome.kind = AttemptOutcome::Kind::kInterruptedByStop;
    }

    if (context.open_transaction()) {
      if (outcome.kind == AttemptOutcome::Kind::kDone) return complete_in_handler_transaction(context, session, held);
      abandon_transaction(context, session);
    }
    return outcome;
  }

  // Exactly once: the handler's writes and the completion commit together, or not at all.
  AttemptOutcome complete_in_handler_transaction(WorkerJobContext& context, core::DatabaseSession& session,
                                                 const HeldItemPtr& held) {
    AttemptOutcome outcome;
    auto& txn = *context.open_transaction();
    try {
      const Outcome completed = complete_in(txn, held->item.id, *held->item.lease_id);
      if (completed != Outcome::kDone) {
        txn.abort();
        context.open_transaction().reset();
        outcome.kind = AttemptOutcome::Kind::kLeaseLost;
        return outcome;
      }
      txn.commit();
      context.open_transaction().reset();
      outcome.kind = AttemptOutcome::Kind::kCompleted;
    } catch (const pqxx::in_doubt_error& error) {
      // Committed or not, the item cannot run twice: if the commit failed, the item is still
      // queued and vests again when its lease runs out.
      core::add(core_.counters.in_doubt_commits);
      log_->warn("commit of item {} is in doubt: {}", held->item.id, error.what());
      context.open_transaction().reset();
      session.reset();
      outcome.kind = AttemptOutcome::Kind::kLeaseLost;
    } catch (...) {
      const auto error = store::classify_current_exception();
      core::add(core_.counters.database_errors);
      context.open_transaction().reset();
      if (error.connection_unusable()) session.reset();
      outcome.kind = AttemptOutcome::Kind::kFailed;
      outcome.reason = std::string("could not commit the handler's transaction: ") + error.message;
    }
    return outcome;
  }

  void abandon_transaction(WorkerJobContext& context, core::DatabaseSession& session) {
    try {
      context.open_transaction()->abort();
    } catch (...) {
      session.reset();
    }
    context.open_transaction().reset();
  }

  // failed_attempts: the failures of this visit (the last attempt and the in-line retries before it).
  void finish(const HeldItemPtr& held, const JobTypeConfig& type, const AttemptOutcome& outcome,
              const std::optional<FailureDecision>& decision, int failed_attempts) {
    const Item& item = held->item;
    switch (outcome.kind) {
      case AttemptOutcome::Kind::kCompleted: core_.counters.count(core::ItemEvent::kDone, item.job_type); return;
      case AttemptOutcome::Kind::kDone:
        acknowledge(held, store::AckAction::kComplete, std::chrono::milliseconds(0), "", 0);
        return;
      case AttemptOutcome::Kind::kLeaseLost:
        core_.counters.count(core::ItemEvent::kLeaseLost, item.job_type);
        log_->warn("item {} of tenant {}: lease lost while running; not completing it", item.id,
                   util::escape_unprintable(item.tenant));
        return;
      case AttemptOutcome::Kind::kInterruptedByStop:
        acknowledge(held, store::AckAction::kRelease, std::chrono::milliseconds(0), "", 0);
        return;
      case AttemptOutcome::Kind::kPermanent: give_up(held, type, outcome.reason, failed_attempts); return;
      case AttemptOutcome::Kind::kFailed:
        if (decision->kind == FailureDecision::Kind::kGiveUp) {
          give_up(held, type, outcome.reason + "; " + decision->reason, failed_attempts);
        } else {
          log_->info("item {} of tenant {} failed (attempt {}): {}; retrying in {} ms", item.id,
                     util::escape_unprintable(item.tenant), item.error_count + failed_attempts,
                     util::escape_unprintable(outcome.reason), decision->delay.count());
          acknowledge(held, store::AckAction::kRetry, decision->delay, outcome.reason, failed_attempts);
        }
        return;
    }
  }

  // No handler here. Another consumer of the database, or the next deploy of this one, may have
  // one, so by default the item goes back to the queue for a while rather than to the dead items.
  void put_aside_unhandled(const HeldItemPtr& held, const JobTypeConfig& type) {
    const Item& item = held->item;
    const ConsumerConfig& config = core_.config;
    const bool dead_letter = config.unhandled_job_types == UnhandledJobTypeAction::kDeadLetter;
    core::add(core_.counters.items_unhandled);
    if (core_.unhandled_job_types_logged.first_time(item.job_type)) {
      log_->warn(
          "no handler for job type {} in this consumer: its items {} (unhandled_job_types: {}); "
          "not logged again for this job type",
          util::escape_unprintable(item.job_type),
          dead_letter ? "fail permanently"
                      : "are released for " + util::format_duration(config.unhandled_job_type_delay) + " each time",
          dead_letter ? "dead_letter" : "release");
    }
    if (dead_letter) {
      give_up(held, type, "no handler registered for job type " + item.job_type, 1);
      return;
    }
    acknowledge(held, store::AckAction::kRelease, config.unhandled_job_type_delay, "", 0);
  }

  void give_up(const HeldItemPtr& held, const JobTypeConfig& type, const std::string& reason, int failed_attempts) {
    const bool keep = type.retry.on_permanent_failure == PermanentFailureAction::kMoveToDeadItems;
    log_->error("item {} of tenant {} ({}) failed permanently: {}; {}", held->item.id,
                util::escape_unprintable(held->item.tenant), util::escape_unprintable(held->item.job_type),
                util::escape_unprintable(reason), keep ? "moved to quick.dead_items" : "deleted");
    acknowledge(held, keep ? store::AckAction::kDead : store::AckAction::kDelete, std::chrono::milliseconds(0), reason,
                failed_attempts);
  }

  // The acknowledgment is written in a batch with other Workers' (quick.ack_items), which the
  // database refuses whole if one of them carries an argument it will not take. So what came
  // from a handler is made acceptable here: a negative delay vests at once (as
  // JobResult::retry_after documents), one too long for any limit stays too long but cannot
  // overflow, and the reason becomes valid UTF-8 of bounded length.
  void acknowledge(const HeldItemPtr& held, store::AckAction action, std::chrono::milliseconds delay,
                   const std::string& error, int failed_attempts) {
    held->acknowledging.store(true);
    core_.submit_ack(core::PendingAck{held->database,
                                      store::Ack{held->item.id, *held->item.lease_id, action,
                                                 std::clamp(delay, std::chrono::milliseconds(0), kLongestDelay),
                                                 util::storable_text(error, kMaxReasonBytes), failed_attempts},
                                      held});
  }

  double unit_random() { return std::uniform_real_distribution<double>(0.0, 1.0)(random_); }

  std::shared_ptr<ConsumerCore> core_owner_;
  ConsumerCore& core_;
  int index_;
  std::shared_ptr<spdlog::logger> log_;
  std::vector<core::DatabaseSession> sessions_;
  std::mt19937_64 random_;
};

}  // namespace

void run_worker(std::shared_ptr<ConsumerCore> core, int worker_index) {
  WorkerLoop(std::move(core), worker_index).run();
}

}  // namespace quick::worker
