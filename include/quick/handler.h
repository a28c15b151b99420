// Job handlers: the application code a consumer runs for each item.
//
// Register one handler per job type. A handler gets a JobContext and returns a JobResult:
//   done                the item is completed (deleted);
//   retry / retry_after the item is requeued (error count + 1) after the retry policy's
//                       exponential backoff, or after the given delay;
//   permanent_failure   the item is moved to quick.dead_items (or deleted, per policy).
// A handler that throws has failed transiently: it is retried per policy, and never takes the
// consumer down.
//
// Exactly once: JobContext::transaction() opens a transaction on the Worker's connection to the
// item's database. When a handler that used it returns done, the item is completed in that same
// transaction, which then commits: the handler's writes and the completion commit together or
// not at all (if the lease was lost meanwhile, the transaction is rolled back). A handler that
// returns anything else, or throws, has its transaction rolled back. Leave committing and
// rolling back to the Worker. See docs/consumer.md#the-handler-api.
//
// A handler must return promptly once should_stop() is true: its lease was lost, its
// execution_bound passed, or the consumer is stopping (stop() waited config.stop_deadline).
//
// Thread safety: a handler may run on many Worker threads at once; each JobContext belongs to
// the one thread running that item.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <pqxx/pqxx>

#include "quick/item.h"

namespace quick {

class JobResult {
 public:
  enum class Kind { kDone, kRetry, kPermanentFailure };

  // The item is completed. Accepted even after the execution bound; ignored if the lease was lost.
  static JobResult done() { return JobResult(Kind::kDone, std::nullopt, ""); }
  // Retry after the policy's backoff (or at once, in the same Worker, while inline_retries are
  // left). `reason` is recorded as the item's last_error.
  static JobResult retry(std::string reason) { return JobResult(Kind::kRetry, std::nullopt, std::move(reason)); }
  // Retry after exactly `delay`, in milliseconds, with no in-line retry. Still counts as a failed
  // attempt, for max_attempts and give_up_after too. `delay` is not checked here: a negative
  // delay makes the item vest at once, and one over the database's
  // quick.limits.max_vesting_delay (1 year by default) is refused there, logged as an error, and
  // the item vests at once instead. `reason` is recorded as the item's last_error (as valid
  // UTF-8, at most 16 KiB; so is every failure reason).
  static JobResult retry_after(std::chrono::milliseconds delay, std::string reason = "retry requested") {
    return JobResult(Kind::kRetry, delay, std::move(reason));
  }
  // No retry: the item goes to quick.dead_items with `reason`, or is deleted, per the policy's
  // on_permanent_failure.
  static JobResult permanent_failure(std::string reason) {
    return JobResult(Kind::kPermanentFailure, std::nullopt, std::move(reason));
  }

  Kind kind() const { return kind_; }
  const std::optional<std::chrono::milliseconds>& retry_delay() const { return retry_delay_; }
  const std::string& reason() const { return reason_; }

 private:
  JobResult(Kind kind, std::optional<std::chrono::milliseconds> delay, std::string reason)
      : kind_(kind), retry_delay_(delay), reason_(std::move(reason)) {}
  Kind kind_;
  std::optional<std::chrono::milliseconds> retry_delay_;
  std::string reason_;
};

class JobContext {
 public:
  virtual ~JobContext() = default;

  // The leased item (payload, tenant, job type, error count, lease id, ...).
  virtual const Item& item() const = 0;
  // The configured name of the item's database.
  virtual const std::string& database_name() const = 0;
  // 1 for the first attempt, counting earlier failed attempts (error_count) and inline retries:
  // error_count + in-line retries so far + 1.
  virtual int attempt() const = 0;
  // How long the item waited between vesting (enqueue, or the end of its delay or backoff) and
  // the start of this handler run: the pickup latency, in microseconds. The same for every
  // in-line retry of the run.
  virtual std::chrono::microseconds waited() const = 0;

  // A READ COMMITTED transaction on the item's database, on this Worker's connection, opened on
  // first call (later calls return the same one); see the header comment.
  virtual pqxx::work& transaction() = 0;

  // True once the handler should give up: lease lost, execution bound passed, or stopping.
  virtual bool should_stop() const = 0;
  // When the execution bound runs out: the start of this run plus execution_bound (steady clock;
  // in-line retries share it).
  virtual std::chrono::steady_clock::time_point deadline() const = 0;
};

using Handler = std::function<JobResult(JobContext&)>;

}  // namespace quick
