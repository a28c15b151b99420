// Experiment: steady load (issue 19). Two producers enqueue one job per transaction as fast as
// they can, each on its own connection, for 30 s, while one consumer runs the jobs (no-op
// handlers): quick-pg with the steady state's setup (Scanner, 2 Managers, writer, 4 Workers),
// its producers using the one-call enqueue (quick::enqueue: one autocommit statement), on 1
// tenant and on 1,000 (every zone created before the load); and the plain SKIP LOCKED queue
// (batch 1, 4 worker connections), its producers inserting one job per autocommit statement. So
// both systems' producers make one round trip per job, and producers, consumers and the server
// share the machine's cores: what each system does with them is what is measured.
//
// Reported per 10 s window (support/windowed_load.h): jobs enqueued and done per second,
// end-to-end latency (vesting -> handler start) p50/p99 of the jobs started in the window, table
// sizes and dead tuples; and over the run. Targets (issue 19): quick-pg's jobs done per second
// at least the baseline's, with an end-to-end p99 <= 10 ms.
#include <algorithm>
#include <string>
#include <vector>

#include <pqxx/pqxx>

#include "support/bench_database.h"
#include "support/experiment.h"
#include "support/load.h"
#include "support/load_targets.h"
#include "support/results_folder.h"
#include "support/windowed_load.h"

namespace quick::bench {
namespace {

using std::chrono::milliseconds;

constexpr int kProducers = 2;

LoadShape closed_loop(int tenants, milliseconds duration, milliseconds window) {
  LoadShape shape;
  shape.tenants = tenants;
  shape.producers = kProducers;
  shape.rate = 0;  // as fast as they can, one job per transaction
  shape.duration = duration;
  shape.window = window;
  return shape;
}

WindowedRun run_quick(ExperimentContext& ctx, int tenants, milliseconds duration, milliseconds window) {
  QuickLoadTarget target(ctx, "quick_bench_steady_load", tenants, quick_one_call());
  return target.run(ctx, closed_loop(tenants, duration, window));
}

WindowedRun run_baseline(ExperimentContext& ctx, milliseconds duration, milliseconds window) {
  BaselineLoadTarget target(ctx, "quick_bench_steady_load", baseline_autocommit());
  return target.run(ctx, closed_loop(1, duration, window));
}

void run_steady_load(ExperimentContext& ctx) {
  const milliseconds duration = ctx.duration(milliseconds(30000), milliseconds(3000));
  const milliseconds window = ctx.duration(milliseconds(10000), milliseconds(1000));
  const int many = ctx.size(1000, 100);
  std::vector<WindowedRun> runs;
  runs.push_back(run_baseline(ctx, duration, window));
  runs.push_back(run_quick(ctx, 1, duration, window));
  runs.push_back(run_quick(ctx, many, duration, window));

  ctx.results->write_csv("steady_load.csv", windowed_csv_header(), windowed_csv_rows(runs));
  ctx.results->add_section(
      "## Steady load\n\n" + std::to_string(kProducers) +
      " producers enqueue one job per transaction (one autocommit statement) as fast as they can for " +
      fixed(static_cast<double>(duration.count()) / 1000.0, 0) +
      " s, while one consumer runs the jobs (no-op handlers). quick-pg: Scanner, 2 Managers, writer, 4 Workers, "
      "every zone created before the load; baseline-b1: the SKIP LOCKED table, 4 connections claiming one job at "
      "a time. e2e: the start of the job's enqueue (a closed loop has no schedule to fall behind) to handler "
      "start; after the load, the run waits for the backlog (finish s).\n\n" +
      windowed_summary_markdown(runs) +
      "\nPer window (main: quick.items or bench_baseline.jobs; side: quick.pointers; sizes at the window's end, "
      "kB; dead: n_dead_tup):\n\n" +
      windowed_markdown(runs) + "\n![steady load](steady_load.png)\n");
  const WindowedRun& baseline = runs[0];
  for (std::size_t i = 1; i < runs.size(); ++i) {
    const auto& run = runs[i];
    const double ratio = run.throughput() / std::max(1.0, baseline.throughput());
    const std::string who = "quick-pg, " + std::to_string(run.tenants) + " tenant(s)";
    // A run that broke (WindowedRun::complete()) meets no target.
    const auto incomplete = [](const WindowedRun& r) {
      return r.complete() ? std::string() : " (" + r.label() + " INCOMPLETE: " + r.problems() + ")";
    };
    ctx.results->add_target({"steady_load",
                             who + ": jobs done/s / baseline b1" + incomplete(run) + incomplete(baseline), ratio,
                             ">= 1", run.complete() && baseline.complete() && ratio >= 1.0});
    ctx.results->add_target({"steady_load", who + ": e2e p99 (ms)" + incomplete(run), run.e2e.p99_ms, "<= 10 ms",
                             run.complete() && run.e2e.p99_ms <= 10.0});
  }
}

}  // namespace

QUICK_BENCH_EXPERIMENT(96, "steady_load",
                       "two producers, one job per transaction as fast as they can, into one consumer vs the "
                       "baseline b1: per-10-s windows, table sizes",
                       run_steady_load);

}  // namespace quick::bench
