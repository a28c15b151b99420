// One steady-state run: producers and consumers at once, with the paper's uniform load (each
// enqueue puts 1-4 no-op items into one tenant chosen at random; enqueues due in the same 5 ms
// tick share a transaction). For one system:
//   1. drain a pre-filled queue (one tenant per entry of `counts`, that many items each) with
//      the consumer setup under test: its drain rate D;
//   2. with the same consumers still running, producers enqueue at load_fraction x D items/s for
//      `duration` (open loop: a fixed schedule, not waiting for the consumers);
//   3. then wait until every item enqueued has run, so that the slowest ones are counted too.
// Measured: throughput, end-to-end latency (from the item's due time, the tick its producer was
// to commit it in, to its handler's start: support/scheduled_load.h, so that a producer behind
// its schedule counts; and, as before, from the enqueue statement, the vesting time), the backlog
// (items due but not yet done, committed or not) over time, and the machine's CPU use in both
// phases (client and server share the cores).
//
// quick-pg: one consumer with 4 connections (Scanner, 2 Managers, writer), 4 Workers: the setup
// of the drain experiments. Baseline: 4 worker connections claiming `batch` jobs at a time.
// Used by the steady_state experiment (at 80%) and the load_sweep experiment (several loads).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "support/experiment.h"
#include "support/latency_recorder.h"
#include "support/machine_cpu.h"

namespace quick::bench {

// Producer threads, one connection each. The cores are shared by producers, consumers and the
// server, so enqueues due in the same tick share one transaction: one commit per enqueue would
// cap the load at the machine's commit rate, well below the consumers' drain rates.
constexpr int kSteadyProducers = 2;
// "No growing backlog": the backlog when the producers stop is at most this many seconds' worth
// of arrivals (a system that keeps up holds about latency x rate; one that falls 2.5% short for
// 20 s already holds more).
constexpr double kBacklogBoundSeconds = 0.5;

struct BacklogSample {
  double t_s;
  long long enqueued, done;
  // Items due by the producers' schedule: those enqueued and those a producer behind its
  // schedule has not yet committed.
  long long due;
  long long backlog() const { return due - done; }
};

struct SteadyRun {
  std::string system;  // no spaces: used in CSVs
  int connections = 0;
  long long drain_items = 0;
  double drain_s = 0;
  double load_fraction = 0;      // of the drain rate, asked of the producers
  double target_rate = 0;        // items/s asked of the producers
  double seconds = 0;            // producers' run
  long long enqueued = 0;        // items committed by the producers
  long long done_in_run = 0;     // items done while the producers ran
  double finish_s = 0;           // after the producers stopped, until the last item ran (-1: not all ran)
  bool drain_timed_out = false;  // the drain did not end within 5 minutes (drain_s, so the load, is 0)
  int producer_errors = 0;       // enqueue transactions that failed (their items were not enqueued)
  // The queue's database errors during the drain and the run: quick-pg's consumers'
  // database_errors, the baseline's failed claim transactions (each retried, costing throughput).
  std::uint64_t queue_errors = 0;
  Percentiles e2e;             // each item's due time (its producer's tick) -> handler start
  Percentiles from_statement;  // the enqueue statement (vesting, waited()) -> handler start
  Percentiles producer_lag;    // how late the producers' ticks went out
  std::vector<double> e2e_sorted_ms;
  std::vector<BacklogSample> backlog;
  std::string consumer_note;  // quick-pg: what its Scanners and Managers did during the run
  CpuUse drain_cpu;           // the whole machine, while draining
  CpuUse steady_cpu;          // the whole machine, while the producers ran
  // Whether the run measured what it claims: the drain ended, every enqueue committed, the queue
  // had no database errors, something was enqueued and every item enqueued ran. Otherwise its latencies and backlog
  // leave out what went wrong (a drain that timed out offered no load at all: p99 0 ms, backlog 0), and its targets are
  // not met. problems() says what went wrong ("" when nothing did).
  bool complete() const {
    return !drain_timed_out && producer_errors == 0 && queue_errors == 0 && enqueued > 0 && finish_s >= 0;
  }
  std::string problems() const {
    std::string text;
    if (drain_timed_out) text += "; the drain timed out";
    if (producer_errors > 0) text += "; " + std::to_string(producer_errors) + " producer errors";
    if (queue_errors > 0) text += "; " + std::to_string(queue_errors) + " database errors";
    if (enqueued <= 0) text += "; nothing enqueued";
    if (finish_s < 0) text += "; not all items ran";
    return text.empty() ? text : text.substr(2);
  }
  double drain_rate() const { return drain_s > 0 ? static_cast<double>(drain_items) / drain_s : 0; }
  double offered_rate() const { return seconds > 0 ? static_cast<double>(enqueued) / seconds : 0; }
  double throughput() const { return seconds > 0 ? static_cast<double>(done_in_run) / seconds : 0; }
  long long backlog_start() const { return backlog.empty() ? 0 : backlog.front().backlog(); }
  long long backlog_end() const { return backlog.empty() ? 0 : backlog.back().backlog(); }
  double backlog_bound() const { return kBacklogBoundSeconds * offered_rate(); }
  // Processor time (all processes on this machine) per item drained, and per item enqueued
  // while the producers ran (enqueueing it and running it, when the system keeps up).
  double drain_cpu_us_per_item() const {
    return drain_items > 0 ? drain_cpu.busy_core_seconds * 1e6 / static_cast<double>(drain_items) : 0;
  }
  double steady_cpu_us_per_item() const {
    return enqueued > 0 ? steady_cpu.busy_core_seconds * 1e6 / static_cast<double>(enqueued) : 0;
  }
  // Of those, the benchmark process's own share: producers, consumers and workers (the client).
  double drain_client_us_per_item() const {
    return drain_items > 0 ? drain_cpu.own_core_seconds * 1e6 / static_cast<double>(drain_items) : 0;
  }
  double steady_client_us_per_item() const {
    return enqueued > 0 ? steady_cpu.own_core_seconds * 1e6 / static_cast<double>(enqueued) : 0;
  }
  // The share of the machine that the offered load needs at the steady phase's cost per item:
  // above about 0.85 queues build up, above 1 the backlog grows without bound.
  double cpu_needed_fraction(unsigned cores) const {
    return cores > 0 ? target_rate * steady_cpu_us_per_item() / 1e6 / cores : 0;
  }
  // How fast the backlog grew over the second half of the run (least squares), items/s.
  double backlog_growth() const {
    double n = 0, st = 0, sb = 0, stt = 0, stb = 0;
    for (const auto& s : backlog) {
      if (s.t_s < seconds / 2) continue;
      const auto b = static_cast<double>(s.backlog());
      n += 1, st += s.t_s, sb += b, stt += s.t_s * s.t_s, stb += s.t_s * b;
    }
    const double denominator = n * stt - st * st;
    return n >= 2 && denominator > 0 ? (n * stb - st * sb) / denominator : 0;
  }
};

// quick-pg with the library's defaults (one consumer, 4 connections, 4 Workers). With
// pull_in_transaction the producers set EnqueueOptions::pull_in_transaction (they commit within
// 5 ms), and the run is named "quick-pg-pull-in-tx".
SteadyRun run_steady_quick(ExperimentContext& ctx, const std::vector<int>& counts, std::chrono::milliseconds duration,
                           double load_fraction, bool pull_in_transaction = false);
// The baseline SKIP LOCKED queue with 4 worker connections claiming `batch` jobs at a time.
// With zone_writes its producers also make the writes QuiCK's design adds to an enqueue
// (add_zone_writes_schema), and the run is named "baseline-b<batch>+zone-writes".
SteadyRun run_steady_baseline(ExperimentContext& ctx, const std::vector<int>& counts,
                              std::chrono::milliseconds duration, double load_fraction, int batch,
                              bool zone_writes = false);

}  // namespace quick::bench
