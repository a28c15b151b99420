// A load run measured per window, for the experiments of issue 19 (held_snapshot, steady_load):
// producers enqueue for a fixed time into a running system (quick-pg or the baseline queue),
// optionally while another session holds a REPEATABLE READ snapshot; every window (10 s) records
// jobs enqueued and done per second, the end-to-end latency (the job's due time -> handler start,
// support/scheduled_load.h) of the jobs started in it, and the size, index size and dead tuples of the system's tables.
// Then the run waits until every job enqueued has run.
//
// The load is open or closed: at a fixed rate (enqueues due in the same 5 ms tick share one
// transaction; a job is due at its tick, so that a producer behind its ticks counts), or as fast
// as the producers can, one job per transaction (due when its enqueue starts).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <pqxx/pqxx>

#include "support/bench_database.h"
#include "support/experiment.h"
#include "support/latency_recorder.h"

namespace quick::bench {

struct TableSize {
  long long heap_bytes = 0, index_bytes = 0, dead_tuples = 0, live_tuples = 0;
};

// pg_relation_size, pg_indexes_size and pg_stat_user_tables' dead and live tuples of `table`
// (zeros for "").
TableSize table_size(pqxx::connection& conn, const std::string& table);

struct LoadWindow {
  double t_s = 0;  // the window's end, since the load started
  double enqueued_per_s = 0, done_per_s = 0;
  Percentiles e2e;                   // jobs whose handler started in the window
  TableSize main_table, side_table;  // quick.items and quick.pointers; the baseline's jobs and nothing
};

struct WindowedRun {
  std::string system;  // no spaces: used in CSVs
  int tenants = 0;
  bool held = false;
  double released_s = 0;  // when the held snapshot ended, since the load started
  double seconds = 0;
  long long enqueued = 0, done_in_run = 0;
  double finish_s = 0;  // after the producers stopped (and the snapshot ended), until the last job ran
  int producer_errors = 0;
  bool setup_timed_out = false;  // the system's setup (LoadedSystem::setup_timed_out) did not finish
  // The queue's database errors (quick-pg's consumers' database_errors, the baseline's failed
  // claim transactions): each retried, so they only cost throughput and latency.
  std::uint64_t errors = 0;
  Percentiles e2e;             // due time -> handler start
  Percentiles from_statement;  // the enqueue statement (vesting) -> handler start
  Percentiles producer_lag;    // open load: how late the producers' ticks went out
  std::vector<LoadWindow> windows;
  double throughput() const { return seconds > 0 ? static_cast<double>(done_in_run) / seconds : 0; }
  double offered() const { return seconds > 0 ? static_cast<double>(enqueued) / seconds : 0; }
  // Whether the run measured what it claims: the setup finished, no database or producer errors,
  // something was enqueued and every job enqueued ran (the percentiles leave out the jobs that
  // never ran). Otherwise its targets are not met; problems() says what went wrong ("" when
  // nothing did).
  bool complete() const {
    return !setup_timed_out && errors == 0 && producer_errors == 0 && enqueued > 0 && finish_s >= 0;
  }
  std::string problems() const {
    std::string text;
    if (setup_timed_out) text += "; the setup timed out";
    if (errors > 0) text += "; " + std::to_string(errors) + " database errors";
    if (producer_errors > 0) text += "; " + std::to_string(producer_errors) + " producer errors";
    if (enqueued <= 0) text += "; nothing enqueued";
    if (finish_s < 0) text += "; not all jobs ran";
    return text.empty() ? text : text.substr(2);
  }
  // The system's name for the tables, marked when the run is incomplete.
  std::string marked_system() const { return complete() ? system : system + " **(INCOMPLETE: " + problems() + ")**"; }
  std::string label() const { return system + (held ? "+held-snapshot" : "") + "/" + std::to_string(tenants) + "t"; }
};

// Latencies with the time they were recorded, so that each window gets its own percentiles.
// Handlers record from many threads.
class TimedLatencies {
 public:
  void record(std::chrono::steady_clock::time_point at, std::chrono::microseconds latency) {
    record(at, latency, latency);
  }
  // A job's latency from its due time, and from its enqueue statement (its vesting time).
  void record(std::chrono::steady_clock::time_point at, std::chrono::microseconds from_due,
              std::chrono::microseconds from_statement);
  // Percentiles of the samples recorded in [from, to): from the due time, or from the statement.
  Percentiles between(std::chrono::steady_clock::time_point from, std::chrono::steady_clock::time_point to) const;
  Percentiles statement_between(std::chrono::steady_clock::time_point from,
                                std::chrono::steady_clock::time_point to) const;

 private:
  struct Sample {
    std::chrono::steady_clock::time_point at;
    std::chrono::microseconds from_due, from_statement;
  };
  Percentiles window(std::chrono::steady_clock::time_point from, std::chrono::steady_clock::time_point to,
                     std::chrono::microseconds Sample::*latency) const;
  mutable std::mutex mutex_;
  std::vector<Sample> samples_;  // guarded by mutex_
};

// A job of a windowed load: its tenant, and a payload naming its due time (due_payload), which
// the handlers read back (since_due).
struct LoadJob {
  std::string tenant;
  std::string payload;
};

// The system under load: what differs between quick-pg and the baseline.
struct LoadedSystem {
  std::string name;
  std::string main_table, side_table;
  std::function<void()> start, stop;
  std::function<std::uint64_t()> done;  // jobs run since start
  // The system's database errors so far (read after stop); none when unset.
  std::function<std::uint64_t()> errors;
  // Its setup (before the load) did not finish: the run is incomplete.
  bool setup_timed_out = false;
  // Enqueues the jobs, in one transaction.
  std::function<void(pqxx::connection&, const std::vector<LoadJob>&)> enqueue;
  // After stop: what the system did for the run's jobs, for the log (quick-pg: visits, scans,
  // wake-ups); none when unset.
  std::function<std::string()> describe_work;
};

struct LoadShape {
  int tenants = 1;
  int producers = 2;  // threads, one connection each
  double rate = 0;    // jobs/s in all; 0: as fast as they can, one job per transaction
  bool held_snapshot = false;
  // With held_snapshot: how long the snapshot is held from the start (at a window's end, the
  // first at or past it), the load going on afterwards so that the last windows show the
  // recovery. 0: until the load ends.
  std::chrono::milliseconds hold_for{0};
  std::chrono::milliseconds duration{60000};
  std::chrono::milliseconds window{10000};
  // Called after each window with its index (1-based) and the number of windows, load still on.
  std::function<void(int, int, const LoadWindow&)> after_window;
  // Called once the held snapshot has ended (with the load still on when hold_for ends it).
  std::function<void()> after_snapshot;
};

// Runs `shape` against `system` (started by this call, stopped at the end). `e2e` is what the
// system's handlers record while `measuring` is set.
WindowedRun run_windowed(ExperimentContext& ctx, const ScratchDatabase& db, LoadedSystem& system, TimedLatencies& e2e,
                         std::atomic<bool>& measuring, const LoadShape& shape);

// The runs' windows as CSV rows, with the header windowed_csv_header() names.
std::vector<std::string> windowed_csv_header();
std::vector<std::vector<std::string>> windowed_csv_rows(const std::vector<WindowedRun>& runs);
// One row per run: offered and done per second, e2e p50/p99/max over the run, finish time.
std::string windowed_summary_markdown(const std::vector<WindowedRun>& runs);
// The runs' windows as a markdown table: throughput, latency, table sizes (kB) and dead tuples.
std::string windowed_markdown(const std::vector<WindowedRun>& runs);

}  // namespace quick::bench
