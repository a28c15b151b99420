// Experiment: steady state at 80% of the drain rate (support/steady_load.h runs it), for
// quick-pg (its producers with the default EnqueueOptions, and again pulling pointers in their
// transactions), baseline batch 1 and baseline batch 10, each at 80% of its own drain rate (same
// utilization, same load shape): 10,000 tenants, the paper's uniform load, 20 s. One more run,
// "baseline-b10+zone-writes", is the batch-10 baseline whose producers also make the writes
// QuiCK's design adds to an enqueue (add_zone_writes_schema): what those writes alone cost a
// queue that does nothing else of QuiCK's.
// Reported: throughput, end-to-end latency p50/p99/p99.9/max and its percentile curve, the
// backlog over time, and the machine's CPU use: how busy the drain kept it, what an item cost in
// processor time while draining and while producing and consuming at once, and so what share of
// the machine 80% of the drain rate needs at that cost. A system whose drain already fills the
// cores has only the rest for its producers.
//
// Targets (quick-pg): end-to-end p99 <= 50 ms; no growing backlog (kBacklogBoundSeconds).
// load_sweep.cc runs the same at other loads.
#include <string>
#include <thread>
#include <vector>

#include "support/experiment.h"
#include "support/load.h"
#include "support/results_folder.h"
#include "support/steady_load.h"

namespace quick::bench {
namespace {

using std::chrono::milliseconds;

constexpr double kLoadFraction = 0.8;  // of the measured drain rate

void run_steady_state(ExperimentContext& ctx) {
  const int tenants = ctx.size(10000, 2000);
  const auto counts = uniform_item_counts(tenants, 1, 4, 42);
  const milliseconds duration = ctx.duration(milliseconds(20000), milliseconds(3000));
  std::vector<SteadyRun> runs;
  runs.push_back(run_steady_quick(ctx, counts, duration, kLoadFraction));
  runs.push_back(run_steady_quick(ctx, counts, duration, kLoadFraction, /*pull_in_transaction=*/true));
  if (!ctx.quick) runs.push_back(run_steady_baseline(ctx, counts, duration, kLoadFraction, 1));
  runs.push_back(run_steady_baseline(ctx, counts, duration, kLoadFraction, 10));
  runs.push_back(run_steady_baseline(ctx, counts, duration, kLoadFraction, 10, /*zone_writes=*/true));
  const SteadyRun& quick = runs[0];
  const SteadyRun& quick_pulling = runs[1];
  const unsigned cores = std::thread::hardware_concurrency();

  std::vector<std::vector<std::string>> summary, latency, backlog, table, cpu_table;
  const std::vector<double> percentiles{1,  5,  10, 20, 30, 40,   50,   60,    70,    80,
                                        90, 95, 97, 98, 99, 99.5, 99.9, 99.95, 99.99, 100};
  for (const auto& run : runs) {
    summary.push_back({run.system,
                       std::to_string(run.connections),
                       std::to_string(run.drain_items),
                       fixed(run.drain_s, 3),
                       fixed(run.drain_rate(), 1),
                       fixed(run.target_rate, 1),
                       fixed(run.offered_rate(), 1),
                       fixed(run.throughput(), 1),
                       std::to_string(run.e2e.count),
                       fixed(run.e2e.p50_ms, 2),
                       fixed(run.e2e.p99_ms, 2),
                       fixed(run.e2e.p999_ms, 2),
                       fixed(run.e2e.max_ms, 2),
                       fixed(run.from_statement.p99_ms, 2),
                       fixed(run.producer_lag.p99_ms, 2),
                       fixed(run.producer_lag.max_ms, 2),
                       std::to_string(run.backlog_start()),
                       std::to_string(run.backlog_end()),
                       fixed(run.backlog_bound(), 0),
                       fixed(run.backlog_growth(), 1),
                       fixed(run.finish_s, 3),
                       fixed(run.drain_cpu.busy_fraction, 3),
                       fixed(run.drain_cpu_us_per_item(), 2),
                       fixed(run.steady_cpu.busy_fraction, 3),
                       fixed(run.steady_cpu_us_per_item(), 2),
                       fixed(run.cpu_needed_fraction(cores), 3),
                       fixed(run.drain_client_us_per_item(), 2),
                       fixed(run.steady_client_us_per_item(), 2)});
    for (double p : percentiles)
      latency.push_back({run.system, fixed(p, 2), fixed(percentile_of(run.e2e_sorted_ms, p), 3)});
    for (const auto& s : run.backlog) {
      backlog.push_back({run.system, fixed(s.t_s, 2), std::to_string(s.enqueued), std::to_string(s.done),
                         std::to_string(s.backlog()), std::to_string(s.due)});
    }
    table.push_back({run.system + (run.complete() ? "" : " **(INCOMPLETE: " + run.problems() + ")**"),
                     std::to_string(run.connections), fixed(run.drain_rate(), 0), fixed(run.offered_rate(), 0),
                     fixed(run.throughput(), 0), fixed(run.e2e.p50_ms, 1), fixed(run.e2e.p99_ms, 1),
                     fixed(run.e2e.p999_ms, 1), fixed(run.e2e.max_ms, 1), fixed(run.from_statement.p99_ms, 1),
                     fixed(run.producer_lag.p99_ms, 1) + " / " + fixed(run.producer_lag.max_ms, 1),
                     std::to_string(run.backlog_start()) + " -> " + std::to_string(run.backlog_end()),
                     fixed(run.backlog_growth(), 0)});
    cpu_table.push_back({run.system, fixed(100 * run.drain_cpu.busy_fraction, 0) + "%",
                         fixed(run.drain_cpu_us_per_item(), 1), fixed(run.drain_client_us_per_item(), 1),
                         fixed(100 * run.steady_cpu.busy_fraction, 0) + "%", fixed(run.steady_cpu_us_per_item(), 1),
                         fixed(run.steady_client_us_per_item(), 1),
                         fixed(100 * run.cpu_needed_fraction(cores), 0) + "%"});
  }
  ctx.results->write_csv("steady_state.csv",
                         {"system",
                          "connections",
                          "drain_items",
                          "drain_s",
                          "drain_items_per_s",
                          "target_items_per_s",
                          "offered_items_per_s",
                          "throughput_items_per_s",
                          "e2e_n",
                          "e2e_p50_ms",
                          "e2e_p99_ms",
                          "e2e_p999_ms",
                          "e2e_max_ms",
                          "from_statement_p99_ms",
                          "producer_lag_p99_ms",
                          "producer_lag_max_ms",
                          "backlog_start",
                          "backlog_end",
                          "backlog_bound",
                          "backlog_growth_per_s",
                          "finish_s",
                          "drain_cpu_busy",
                          "drain_cpu_us_per_item",
                          "steady_cpu_busy",
                          "steady_cpu_us_per_item",
                          "cpu_needed_at_offered_load",
                          "drain_client_cpu_us_per_item",
                          "steady_client_cpu_us_per_item"},
                         summary);
  ctx.results->write_csv("steady_state_latency.csv", {"system", "percentile", "ms"}, latency);
  ctx.results->write_csv("steady_state_backlog.csv", {"system", "t_s", "enqueued", "done", "backlog", "due"}, backlog);

  ctx.results->add_section(
      "## Steady state\n\n" + std::to_string(tenants) +
      " tenants; each enqueue puts 1-4 no-op items into a tenant chosen at random (the paper's uniform load). " +
      std::to_string(kSteadyProducers) +
      " producer threads follow a fixed schedule and commit every 5 ms the enqueues due by then in one "
      "transaction (one commit per enqueue would cap the load at this machine's commit rate). Each system first drains "
      "a pre-filled queue of the same shape "
      "(its drain rate), then runs at 80% of that rate for " +
      fixed(duration.count() / 1000.0, 0) +
      " s with the same consumers. quick-pg: one consumer, 4 connections (Scanner, 2 "
      "Managers, writer) and 4 Workers, otherwise library defaults; quick-pg-pull-in-tx: the same, with producers "
      "that set `EnqueueOptions::pull_in_transaction` (they commit within 5 ms, so holding a parked zone's "
      "pointer until then costs nothing; the default records a pull request that a consumer applies after the "
      "commit); baseline: 4 worker connections; baseline-b10+zone-writes: the batch-10 baseline whose producers "
      "also make the writes QuiCK's design adds to an enqueue (each job also enters an index in its tenant's "
      "order, and each tenant of a transaction has a pointer row that the enqueue locks FOR KEY SHARE and moves "
      "to vest now, as an enqueue into a parked zone does), its consumers unchanged. End-to-end (e2e) latency: "
      "an item's due time (the 5 ms tick its producer was to commit it in) to its handler's start, for every item "
      "enqueued during the run (after the producers stop, the run waits for the last one), so that a producer "
      "behind its schedule (a slow commit, after which the next takes every tick missed) delays the items due "
      "meanwhile in the figures as in fact; *from the statement*: p99 from the enqueue statement (the vesting "
      "time, `JobContext::waited()`), which leaves that delay out; *producer lag*: how late the producers' ticks "
      "went out (p99 / max). Backlog: items due by the schedule (committed or not) and not yet done, at the start "
      "and at the end of the run, and its growth over the second half (least squares).\n\n" +
      markdown_table({"system", "connections", "drain items/s", "offered items/s", "done items/s", "e2e p50 ms",
                      "e2e p99 ms", "e2e p99.9 ms", "e2e max ms", "from the statement p99 ms",
                      "producer lag p99 / max ms", "backlog start -> end", "backlog growth items/s"},
                     table) +
      "\nAt 80% of its own drain rate a system that keeps up shows a flat backlog, and its end-to-end latency is "
      "the time a new item takes to be found. For the baseline that is one claim query. For quick-pg it is "
      "mostly the time until a Scanner selects the zone's pointer. By Little's law a vested pointer waits about "
      "(vested pointers per peek) / (scans per second x selected per scan). A randomly selecting Scanner takes "
      "`selection_frac` (2%) of the vested pointers it peeks, so when zones become ready faster than the Scanners "
      "peek, the vested set, and with it the wait, grows until that fraction keeps up with the arrivals. "
      "quick-pg during the run: " +
      quick.consumer_note + "; quick-pg-pull-in-tx: " + quick_pulling.consumer_note +
      ".\n\nProcessor time, this whole machine (" + std::to_string(cores) +
      " cores; producers, consumers and, when local, the server): how busy the drain kept it and what a drained "
      "item cost; how busy the steady phase kept it and what an item cost there (enqueueing it and running it); "
      "and the share of the machine the offered load (80% of the drain rate) needs at that cost. A drain that "
      "fills the cores leaves 20% of them for the producers' work; where the need comes out near or above "
      "100%, no consumer setting can keep the backlog flat on this machine. \"Client\": the part of an item's "
      "cost spent in this benchmark's own process (producers, the consumer library, its Workers); the rest is "
      "the server's.\n\n" +
      markdown_table({"system", "CPU busy, draining", "CPU us per drained item", "of which client", "CPU busy, steady",
                      "CPU us per item, steady", "of which client", "CPU needed at the offered load"},
                     cpu_table) +
      "\n![steady state latency](steady_state_latency.png)\n"
      "![steady state backlog](steady_state_backlog.png)\n");
  // An incomplete run (SteadyRun::complete) meets no target: its figures leave out what went wrong.
  const auto unless_complete = [](const SteadyRun& run) {
    return run.complete() ? std::string() : " (INCOMPLETE: " + run.problems() + ")";
  };
  ctx.results->add_target({"steady_state", "quick-pg e2e p99 at 80% of drain rate (ms)" + unless_complete(quick),
                           quick.e2e.p99_ms, "<= 50 ms", quick.complete() && quick.e2e.p99_ms <= 50.0});
  ctx.results->add_target(
      {"steady_state",
       "quick-pg e2e p99 at 80%, producers pulling in their transactions (ms)" + unless_complete(quick_pulling),
       quick_pulling.e2e.p99_ms, "<= 50 ms", quick_pulling.complete() && quick_pulling.e2e.p99_ms <= 50.0});
  ctx.results->add_target({"steady_state", "quick-pg backlog at the end (items)" + unless_complete(quick),
                           static_cast<double>(quick.backlog_end()),
                           "<= 0.5 s of arrivals (" + fixed(quick.backlog_bound(), 0) + " items)",
                           quick.complete() && static_cast<double>(quick.backlog_end()) <= quick.backlog_bound()});
}

}  // namespace

QUICK_BENCH_EXPERIMENT(60, "steady_state",
                       "producers at 80% of the drain rate, 10,000 tenants x 1-4 items: e2e latency and backlog",
                       run_steady_state);

}  // namespace quick::bench
