// Experiment: load sweep. The steady state (support/steady_load.h) at several loads, from 50% to
// 90% of each system's own drain rate, for quick-pg (with the default EnqueueOptions, and with
// producers that pull pointers in their transactions), the batch-10 baseline, and the batch-10
// baseline whose producers also make the writes QuiCK's design adds to an enqueue
// (add_zone_writes_schema), in alternating runs so that the machine's drift touches all alike.
// 10,000 tenants, the paper's uniform load, 10 s per run.
//
// The steady_state experiment answers one question: does p99 stay under 50 ms at 80%? This one
// answers the capacity question behind it: up to what load, as a share of the drain rate and in
// items/s, does each system keep p99 under 50 ms and its backlog flat on this machine? With the
// processor time per item and how busy the machine was at each load, it shows where each
// system's steady state saturates. No targets: the target is judged by steady_state.
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

constexpr double kLatencyGoalMs = 50;  // the steady state's p99 target

// The highest load (as a share of the drain rate) at which `system` kept p99 within the goal and
// its backlog flat, as text ("none of the loads measured" if it never did).
std::string highest_load_within_goal(const std::vector<SteadyRun>& runs, const std::string& system) {
  double best = -1, rate = 0;
  for (const auto& run : runs) {
    const bool kept_up = static_cast<double>(run.backlog_end()) <= run.backlog_bound();
    if (run.system == system && run.complete() && run.e2e.p99_ms <= kLatencyGoalMs && kept_up &&
        run.load_fraction > best) {
      best = run.load_fraction;
      rate = run.offered_rate();
    }
  }
  if (best < 0) return "none of the loads measured";
  return fixed(100 * best, 0) + "% of its drain rate (" + fixed(rate, 0) + " items/s offered)";
}

void run_load_sweep(ExperimentContext& ctx) {
  const int tenants = ctx.size(10000, 2000);
  const auto counts = uniform_item_counts(tenants, 1, 4, 42);
  const milliseconds duration = ctx.duration(milliseconds(10000), milliseconds(2000));
  const std::vector<double> fractions = ctx.quick ? std::vector<double>{0.5, 0.8}
                                                  : std::vector<double>{0.5, 0.6, 0.7, 0.8, 0.9};
  constexpr int kBatch = 10;

  std::vector<SteadyRun> runs;
  for (double fraction : fractions) {
    runs.push_back(run_steady_quick(ctx, counts, duration, fraction));
    runs.push_back(run_steady_quick(ctx, counts, duration, fraction, /*pull_in_transaction=*/true));
    runs.push_back(run_steady_baseline(ctx, counts, duration, fraction, kBatch));
    runs.push_back(run_steady_baseline(ctx, counts, duration, fraction, kBatch, /*zone_writes=*/true));
  }

  const unsigned cores = std::thread::hardware_concurrency();
  std::vector<std::vector<std::string>> csv, table;
  for (const auto& run : runs) {
    csv.push_back({run.system, fixed(run.load_fraction, 2), fixed(run.drain_rate(), 1), fixed(run.offered_rate(), 1),
                   fixed(run.throughput(), 1), fixed(run.e2e.p50_ms, 2), fixed(run.e2e.p99_ms, 2),
                   fixed(run.e2e.p999_ms, 2), fixed(run.e2e.max_ms, 2), fixed(run.from_statement.p99_ms, 2),
                   fixed(run.producer_lag.max_ms, 2), std::to_string(run.backlog_end()), fixed(run.backlog_bound(), 0),
                   fixed(run.backlog_growth(), 1), fixed(run.steady_cpu.busy_fraction, 3),
                   fixed(run.steady_cpu_us_per_item(), 2), fixed(run.cpu_needed_fraction(cores), 3)});
    table.push_back({run.system + (run.complete() ? "" : " **(INCOMPLETE: " + run.problems() + ")**"),
                     fixed(100 * run.load_fraction, 0) + "%", fixed(run.drain_rate(), 0), fixed(run.offered_rate(), 0),
                     fixed(run.e2e.p50_ms, 1), fixed(run.e2e.p99_ms, 1), fixed(run.producer_lag.max_ms, 1),
                     std::to_string(run.backlog_end()) + " / " + fixed(run.backlog_bound(), 0),
                     fixed(100 * run.steady_cpu.busy_fraction, 0) + "%", fixed(run.steady_cpu_us_per_item(), 1),
                     fixed(100 * run.cpu_needed_fraction(cores), 0) + "%"});
  }
  ctx.results->write_csv(
      "load_sweep.csv",
      {"system", "load_fraction", "drain_items_per_s", "offered_items_per_s", "throughput_items_per_s", "e2e_p50_ms",
       "e2e_p99_ms", "e2e_p999_ms", "e2e_max_ms", "from_statement_p99_ms", "producer_lag_max_ms", "backlog_end",
       "backlog_bound", "backlog_growth_per_s", "steady_cpu_busy", "steady_cpu_us_per_item",
       "cpu_needed_at_offered_load"},
      csv);
  const std::string baseline = "baseline-b" + std::to_string(kBatch);
  ctx.results->add_section(
      "## Load sweep\n\nThe steady state at several loads: " + std::to_string(tenants) +
      " tenants, the paper's uniform load, " + fixed(duration.count() / 1000.0, 0) +
      " s per run, each system at a share of its own drain rate (measured again before each run), quick-pg, "
      "quick-pg-pull-in-tx, " +
      baseline + " and " + baseline +
      "+zone-writes in turn. Same setup as the steady state above: e2e from each item's due time (its producer's "
      "tick), the producers' largest lag behind their ticks beside it. Backlog: items due and not yet done when "
      "the producers stopped, against the bound for a system that keeps up (0.5 s of arrivals).\n\n" +
      markdown_table(
          {"system", "load", "drain items/s", "offered items/s", "e2e p50 ms", "e2e p99 ms", "producer lag max ms",
           "backlog end / bound", "CPU busy", "CPU us per item", "CPU the load needs"},
          table) +
      "\nHighest load measured with p99 <= " + fixed(kLatencyGoalMs, 0) + " ms and a flat backlog: quick-pg " +
      highest_load_within_goal(runs, "quick-pg") + "; quick-pg-pull-in-tx " +
      highest_load_within_goal(runs, "quick-pg-pull-in-tx") + "; " + baseline + " " +
      highest_load_within_goal(runs, baseline) + "; " + baseline + "+zone-writes " +
      highest_load_within_goal(runs, baseline + "+zone-writes") + ".\n\n![load sweep](load_sweep.png)\n");
}

}  // namespace

QUICK_BENCH_EXPERIMENT(65, "load_sweep",
                       "steady state at 50-90% of the drain rate, quick-pg (two producer options) vs baseline b10 (and "
                       "with zone writes): p99 and CPU",
                       run_load_sweep);

}  // namespace quick::bench
