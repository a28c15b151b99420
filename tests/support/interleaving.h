// Runs 2 or 3 database sessions through lists of SQL steps in a chosen interleaving, to test the
// concurrency protocol (docs/protocol.md) against every order in which statements can meet.
//
// Each session is its own connection on its own thread, driven one step at a time by the thread
// that calls run(). A step that waits for a lock held by another session is recorded as BLOCKED
// and the driver moves on to the next step of another session; the blocked session's later steps
// are deferred until it unblocks. "Blocked" is read from the server (pg_blocking_pids on the
// session's backend), not guessed from a time threshold, so the run is deterministic and costs no
// sleeping: after every step the driver waits until each running step has either finished or is
// waiting on a lock before it sends the next one.
//
// A step that fails (any SQLSTATE, e.g. 40001) makes its session ROLLBACK and skip its remaining
// steps. No exception leaves a session thread. Nothing hangs: sessions run with lock_timeout and
// statement_timeout as a backstop, a step running past a hard limit is cancelled with
// pg_cancel_backend and the run is marked hung, and every thread is joined.
//
// Thread safety: an InterleavingHarness is used from one thread.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <pqxx/pqxx>

namespace quick::testing {

using Row = std::vector<std::optional<std::string>>;

// What happened to one step.
struct StepOutcome {
  enum class Status {
    kPending,  // not reached
    kOk,       // ran and succeeded
    kFailed,   // ran and raised an error; the session rolled back
    kNoOp,     // the step chose not to run (its SQL function returned nullopt)
    kSkipped,  // not run because an earlier step of its session failed
  };
  Status status = Status::kPending;
  std::string sql;       // what was sent
  bool blocked = false;  // waited on another session's lock before finishing
  std::vector<Row> rows;
  std::string sqlstate;  // of a failure; 40001/40P01 are derived from the exception type
  std::string error;     // message of a failure

  bool ok() const { return status == Status::kOk; }
  bool failed() const { return status == Status::kFailed; }
  std::size_t row_count() const { return rows.size(); }
  // The value at (row, column), or nullopt if there is no such row or it is NULL.
  std::optional<std::string> value(std::size_t row = 0, std::size_t column = 0) const;
  // "ok(1)", "blocked-then-ok(0)", "40001", "no-op", "skipped", ...
  std::string text() const;
};

// Runs `sql` on `txn` and reports the outcome instead of throwing. Does not roll back.
StepOutcome execute_step(pqxx::transaction_base& txn, const std::string& sql);

// The SQLSTATE of a libpqxx exception. libpqxx 6.4 raises 40001/40P01 as transaction_rollback
// subclasses that carry no SQLSTATE, so those are classified by type.
std::string sqlstate_of(const std::exception& error);

// Everything recorded so far in a run: given to steps whose SQL depends on earlier results.
class RunView {
 public:
  RunView(const std::vector<std::vector<StepOutcome>>& outcomes, int session, int step)
      : outcomes_(outcomes), session_(session), step_(step) {}
  // This session's step `back` steps before the current one (1 = the previous step).
  const StepOutcome& previous(int back = 1) const { return outcomes_[session_][step_ - back]; }
  const StepOutcome& of(int session, int step) const { return outcomes_[session][step]; }
  int session() const { return session_; }
  int step() const { return step_; }

 private:
  const std::vector<std::vector<StepOutcome>>& outcomes_;
  int session_;
  int step_;
};

struct Step {
  std::string label;  // short name for traces, e.g. "E1:KS"
  // The SQL to send, decided when the step is reached; nullopt makes the step a no-op.
  std::function<std::optional<std::string>(const RunView&)> sql;
};

// A step that always sends `sql`.
Step fixed_step(std::string label, std::string sql);
// A step whose SQL is decided from earlier outcomes.
Step dynamic_step(std::string label, std::function<std::optional<std::string>(const RunView&)> sql);

struct SessionScript {
  std::string name;  // "E", "G", "C"
  std::vector<Step> steps;
};

struct RunResult {
  std::vector<std::string> names;                // per session
  std::vector<std::vector<std::string>> labels;  // per session, per step
  std::vector<std::vector<StepOutcome>> outcomes;
  std::vector<std::pair<int, int>> order;  // (session, step) in the order the steps were sent
  std::vector<int> schedule;               // the interleaving asked for
  bool hung = false;                       // some step ran past the hard limit and was cancelled

  const StepOutcome& at(int session, int step) const { return outcomes[session][step]; }
  // The first failed step of a session, if any.
  const StepOutcome* failure(int session) const;
  bool committed_all(int session) const;  // no step failed, none was cancelled
  int blocked_steps() const;
  // One line: the steps in the order they were sent, with their outcomes.
  std::string trace() const;
};

struct HarnessOptions {
  // Run once on each session's connection. The timeouts are backstops, far above any wait a
  // correct interleaving needs (the driver never leaves a session waiting on purpose).
  std::vector<std::string> session_setup = {
      "SET client_min_messages = error",  // no WARNING for ROLLBACK outside a transaction
      "SET lock_timeout = '5s'",
      "SET statement_timeout = '20s'",
      "SET idle_in_transaction_session_timeout = '60s'",
  };
  // A step still running, and not waiting on a lock, after this long is cancelled.
  std::chrono::milliseconds hard_step_limit{25'000};
};

class InterleavingHarness {
 public:
  // Opens `sessions` connections to `url`, each on its own thread, plus one monitor connection
  // on the calling thread. Throws if a connection cannot be opened.
  InterleavingHarness(const std::string& url, int sessions, HarnessOptions options = {});
  ~InterleavingHarness();
  InterleavingHarness(const InterleavingHarness&) = delete;
  InterleavingHarness& operator=(const InterleavingHarness&) = delete;

  // Runs the scripts in the interleaving `schedule`: a list of session indices, one entry per
  // step, where the k-th occurrence of session s means "send s's k-th step now". Every session's
  // open transaction is rolled back at the end, so the harness can be reused for the next run.
  RunResult run(const std::vector<SessionScript>& scripts, const std::vector<int>& schedule);

  // Runs the scripts one after the other, in session order.
  RunResult run_serially(const std::vector<SessionScript>& scripts);

 private:
  class Session;
  enum class Settled { kDone, kBlocked };
  Settled wait_settled(int session);
  bool is_waiting_on_lock(int pid);
  void cancel(int pid);

  HarnessOptions options_;
  std::unique_ptr<pqxx::connection> monitor_;
  std::vector<std::unique_ptr<Session>> sessions_;
  bool hung_in_run_ = false;
};

// Every interleaving of sessions with the given numbers of steps, in lexicographic order: each
// is a list of session indices (for {4, 4}: 70 lists of eight entries).
std::vector<std::vector<int>> all_interleavings(const std::vector<int>& steps_per_session);

// Counts over an enumeration, printed as one line for the record.
struct EnumerationStats {
  int interleavings = 0;
  int orphans = 0;                    // runs that left a zone with items and no pointer
  int blocked_steps = 0;              // steps that waited on a lock
  int hung = 0;                       // runs with a cancelled step
  std::map<std::string, int> aborts;  // "E 40001" -> runs where session E failed with 40001
  std::map<std::string, int> notes;   // counters chosen by the test, e.g. "G collected"
  std::string first_orphan_trace;     // an interleaving that orphaned a zone, if any

  void add(const RunResult& run);  // counts interleavings, blocked steps, hangs, aborts
  void note(const std::string& what, int count = 1) { notes[what] += count; }
  int aborts_total() const;
  std::string summary(const std::string& title) const;
};

// `text` as an SQL string literal.
std::string sql_literal(const std::string& text);

}  // namespace quick::testing
