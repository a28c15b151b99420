// One run of the two-tenant experiments (noisy_neighbour, long_jobs: bench/experiments/
// noisy_neighbour.cc): tenant A's backlog runs while tenant B sends one job every 100 ms for a
// window; measured, B's pickup latency and A's throughput during the window.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "support/latency_recorder.h"

namespace quick::bench {

struct TwoTenantRun {
  std::string system;  // no spaces: used in CSVs
  int connections = 0;
  Percentiles b;                    // B's pickup latency, from each job's due time, over B's jobs that started
  Percentiles b_from_statement;     // the same from each job's enqueue statement (vesting, waited())
  Percentiles b_lag;                // how late B's sender started each enqueue after its due time
  std::vector<double> b_by_seq_ms;  // B's latencies in enqueue order
  std::uint64_t a_in_window = 0;
  double window_s = 0;
  double b_last_start_s = 0;  // from B's first enqueue until its last job started
  int b_jobs = 0;             // B's jobs the run was to send (0: A alone)
  int b_sent = 0;             // B's enqueues that committed
  std::string b_send_error;   // the first of B's enqueues that failed
  bool a_ran_out = false;     // A's backlog was used up before B's window ended (A was not busy throughout)
  // The queue's database errors during the run: quick-pg's consumers' database_errors, the
  // baseline's failed claim transactions (each retried, costing throughput).
  std::uint64_t errors = 0;

  double a_per_second() const { return window_s > 0 ? static_cast<double>(a_in_window) / window_s : 0; }
  long b_unsent() const { return b_jobs - b_sent; }
  long b_never_started() const { return static_cast<long>(b_sent) - static_cast<long>(b.count); }
  // Whether the run measured what it claims: every B job sent and started (B's percentiles are
  // over those that started: a job that never ran would vanish from them), no database errors
  // (they only lower throughput), A busy throughout the window. Otherwise its targets are not met;
  // problems() says what went wrong ("" when nothing did).
  bool complete() const {
    return b_unsent() == 0 && b_never_started() == 0 && errors == 0 && !a_ran_out && a_in_window > 0;
  }
  std::string problems() const {
    std::string text;
    if (b_unsent() > 0) {
      text += "; " + std::to_string(b_unsent()) + " of B's " + std::to_string(b_jobs) + " jobs not sent" +
              (b_send_error.empty() ? "" : " (" + b_send_error + ")");
    }
    if (b_never_started() > 0) {
      text += "; " + std::to_string(b_never_started()) + " of B's " + std::to_string(b_jobs) + " jobs never started";
    }
    if (errors > 0) text += "; " + std::to_string(errors) + " database errors";
    if (a_ran_out) text += "; A's backlog ran out during B's window";
    if (a_in_window == 0) text += "; no A job finished during B's window";
    return text.empty() ? text : text.substr(2);
  }
  // The run's name for the tables, marked when incomplete.
  std::string label() const { return complete() ? system : system + " **(INCOMPLETE: " + problems() + ")**"; }
};

}  // namespace quick::bench
