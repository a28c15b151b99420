// Experiment: steady state. Producers and consumers at once, with the paper's uniform load:
// 10,000 tenants, each enqueue puts 1-4 no-op items into one tenant chosen at random (enqueues
// due in the same 5 ms tick share a transaction, see kProducers). For each system:
//   1. drain a pre-filled queue (10,000 tenants x 1-4 items) with the consumer setup under test:
//      its drain rate D;
//   2. with the same consumers still running, producers enqueue at 0.8 x D items/s for 20 s
//      (open loop: a fixed schedule, not waiting for the consumers);
//   3. then wait until every item enqueued has run, so that the slowest ones are counted too.
// Reported: throughput, end-to-end latency (vesting = enqueue -> handler start, waited())
// p50/p99/p99.9/max, and the backlog (items enqueued but not yet done) over time.
//
// quick-pg: one consumer with 4 connections (Scanner, 2 Managers, writer), 4 Workers: the setup
// of the drain experiments. Baseline: 4 worker connections, batch 1 and batch 10, each at 80% of
// its own drain rate (same utilization, same load shape).
//
// Targets (quick-pg): end-to-end p99 <= 50 ms; no growing backlog: the backlog when the producers
// stop is at most 0.5 s worth of arrivals (a system that keeps up holds about latency x rate; one
// that falls 2.5% short for 20 s already holds more).
//
// The machine's CPU use is measured in both phases (client and server share the cores): how busy
// the drain kept it, what an item cost in processor time while draining and while producing and
// consuming at once, and so what share of the machine 80% of the drain rate needs at that cost.
// A system whose drain already fills the cores has only the rest for its producers.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <random>
#include <thread>

#include "quick/producer.h"
#include "support/baseline_queue.h"
#include "support/bench_database.h"
#include "support/experiment.h"
#include "support/latency_recorder.h"
#include "support/load.h"
#include "support/machine_cpu.h"
#include "support/quick_pool.h"

namespace quick::bench {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr const char* kJobType = "noop";
constexpr double kLoadFraction = 0.8;   // of the measured drain rate
constexpr double kItemsPerEnqueue = 2.5;  // mean of uniform 1..4
// Producer threads, one connection each. The cores are shared by producers, consumers and the
// server, so enqueues due in the same tick share one transaction: one commit per enqueue would
// cap the load at the machine's commit rate, well below the consumers' drain rates.
constexpr int kProducers = 2;
constexpr milliseconds kTick{5};
constexpr double kBacklogBoundSeconds = 0.5;


struct BacklogSample {
  double t_s;
  long long enqueued, done;
};

struct SteadyRun {
  std::string system;  // no spaces: used in CSVs
  int connections = 0;
  long long drain_items = 0;
  double drain_s = 0;
  double target_rate = 0;   // items/s asked of the producers
  double seconds = 0;       // producers' run
  long long enqueued = 0;   // items committed by the producers
  long long done_in_run = 0;  // items done while the producers ran
  double finish_s = 0;      // after the producers stopped, until the last item ran
  Percentiles e2e;
  std::vector<double> e2e_sorted_ms;
  std::vector<BacklogSample> backlog;
  std::string consumer_note;  // quick-pg: what its Scanners and Managers did during the run
  CpuUse drain_cpu;           // the whole machine, while draining
  CpuUse steady_cpu;          // the whole machine, while the producers ran
  double drain_rate() const { return drain_s > 0 ? static_cast<double>(drain_items) / drain_s : 0; }
  double offered_rate() const { return seconds > 0 ? static_cast<double>(enqueued) / seconds : 0; }
  double throughput() const { return seconds > 0 ? static_cast<double>(done_in_run) / seconds : 0; }
  long long backlog_start() const { return backlog.empty() ? 0 : backlog.front().enqueued - backlog.front().done; }
  long long backlog_end() const { return backlog.empty() ? 0 : backlog.back().enqueued - backlog.back().done; }
  double backlog_bound() const { return kBacklogBoundSeconds * offered_rate(); }
  // Processor time (all processes on this machine) per item drained, and per item enqueued
  // while the producers ran (enqueueing it and running it, when the system keeps up).
  double drain_cpu_us_per_item() const {
    return drain_items > 0 ? drain_cpu.busy_core_seconds * 1e6 / static_cast<double>(drain_items) : 0;
  }
  double steady_cpu_us_per_item() const {
    return enqueued > 0 ? steady_cpu.busy_core_seconds * 1e6 / static_cast<double>(enqueued) : 0;
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
      const auto b = static_cast<double>(s.enqueued - s.done);
      n += 1, st += s.t_s, sb += b, stt += s.t_s * s.t_s, stb += s.t_s * b;
    }
    const double denominator = n * stt - st * st;
    return n >= 2 && denominator > 0 ? (n * stb - st * sb) / denominator : 0;
  }
};

// One enqueue of the paper's uniform load: `count` (1-4) items for one tenant.
struct Enqueue {
  std::string tenant;
  int count;
};

// What differs between quick-pg and the baseline; the rest of a run is shared.
struct System {
  std::string name;
  int connections = 0;
  std::function<long long()> fill;  // pre-fills the drain backlog; returns its items
  std::function<void()> start;      // starts the consumers
  std::function<void()> stop;
  std::function<std::uint64_t()> done;
  std::function<ConsumerStats()> stats;  // quick-pg only: counters summed over the consumers
  // Commits `batch` in one transaction on `conn`.
  std::function<void(pqxx::connection& conn, const std::vector<Enqueue>& batch)> enqueue;
};

// The Scanners' and Managers' work during the run, from the difference of two snapshots: how
// many vested pointers each peek saw and how many it selected explain the pickup latency.
std::string describe_consumers(const ConsumerStats& before, const ConsumerStats& after, double seconds) {
  const auto scans = static_cast<double>(after.scans - before.scans);
  const auto peeked = static_cast<double>(after.pointers_peeked - before.pointers_peeked);
  const auto selected = static_cast<double>(after.pointers_selected - before.pointers_selected);
  const auto attempts = static_cast<double>(after.pointer_lease_attempts - before.pointer_lease_attempts);
  const auto won = static_cast<double>(after.pointer_leases_won - before.pointer_leases_won);
  const auto dequeued = static_cast<double>(after.items_dequeued - before.items_dequeued);
  if (scans <= 0 || attempts <= 0 || won <= 0) return "no scans";
  return fixed(scans / seconds, 0) + " scans/s (all consumers), " + fixed(peeked / scans, 1) +
         " vested pointers per peek, " + fixed(selected / scans, 2) + " selected per scan, " +
         fixed(100.0 * (attempts - won) / attempts, 1) + "% of lease attempts lost, " + fixed(dequeued / won, 2) +
         " items per zone visit";
}

SteadyRun run_steady(ExperimentContext& ctx, const ScratchDatabase& db, System& system, LatencyRecorder& e2e,
                     std::atomic<bool>& measuring, int tenants, milliseconds duration) {
  SteadyRun run;
  run.system = system.name;
  run.connections = system.connections;
  run.drain_items = system.fill();
  db.vacuum();
  const CpuMeter drain_meter;
  system.start();
  const auto drained = wait_until_count(system.done, static_cast<std::uint64_t>(run.drain_items), std::chrono::minutes(5));
  run.drain_cpu = drain_meter.finish();
  run.drain_s = drained ? drained->count() : 0;
  run.target_rate = kLoadFraction * run.drain_rate();
  ctx.progress(system.name + ": drain " + fixed(run.drain_rate(), 0) + " items/s; producing " +
               fixed(run.target_rate, 0) + " items/s for " + fixed(duration.count() / 1000.0, 0) + " s");

  // Producers: each thread owns an equal share of the enqueue rate. Every tick it commits, in
  // one transaction, the enqueues that have come due since its last commit (open loop: a slow
  // commit makes the next one bigger, never the rate lower).
  measuring.store(true);
  const std::uint64_t done_before = system.done();
  const ConsumerStats stats_before = system.stats ? system.stats() : ConsumerStats{};
  std::atomic<long long> enqueued{0};
  std::atomic<int> producer_errors{0};
  const double enqueues_per_thread = run.target_rate / kItemsPerEnqueue / kProducers;
  const CpuMeter steady_meter;
  const auto start = Clock::now();
  const auto end = start + duration;
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&, p] {
      auto conn = db.connect();
      std::mt19937 random(1000 + static_cast<unsigned>(p));
      std::uniform_int_distribution<int> tenant(0, tenants - 1), count(1, 4);
      long long sent = 0;
      for (auto tick = start + kTick; tick <= end; tick += kTick) {
        std::this_thread::sleep_until(tick);
        const double elapsed = std::chrono::duration<double>(std::min(Clock::now(), end) - start).count();
        const auto due = static_cast<long long>(enqueues_per_thread * elapsed);
        std::vector<Enqueue> batch;
        for (; sent < due; ++sent) batch.push_back({tenant_name(tenant(random)), count(random)});
        if (batch.empty()) continue;
        try {
          system.enqueue(*conn, batch);
          long long items = 0;
          for (const auto& e : batch) items += e.count;
          enqueued.fetch_add(items);
        } catch (const std::exception& error) {
          // Counted and reported; the first message tells why.
          if (producer_errors.fetch_add(1) == 0) ctx.progress(system.name + ": producer error: " + error.what());
        }
      }
    });
  }
  // The backlog every 250 ms: items committed by the producers minus items done.
  auto sample = [&] {
    run.backlog.push_back({std::chrono::duration<double>(Clock::now() - start).count(), enqueued.load(),
                           static_cast<long long>(system.done() - done_before)});
  };
  sample();
  for (auto next = start + milliseconds(250); next < end; next += milliseconds(250)) {
    std::this_thread::sleep_until(next);
    sample();
  }
  std::this_thread::sleep_until(end);
  for (auto& thread : producers) thread.join();
  run.steady_cpu = steady_meter.finish();
  sample();
  run.seconds = std::chrono::duration<double>(end - start).count();
  run.enqueued = enqueued.load();
  run.done_in_run = run.backlog.back().done;
  if (system.stats) run.consumer_note = describe_consumers(stats_before, system.stats(), run.seconds);
  const auto finished = wait_until_count([&] { return system.done() - done_before; },
                                         static_cast<std::uint64_t>(run.enqueued), std::chrono::minutes(2));
  run.finish_s = finished ? finished->count() : -1;
  system.stop();
  measuring.store(false);

  run.e2e = e2e.summary();
  run.e2e_sorted_ms = e2e.samples_ms();
  std::sort(run.e2e_sorted_ms.begin(), run.e2e_sorted_ms.end());
  ctx.progress(system.name + ": offered " + fixed(run.offered_rate(), 0) + " items/s, done " +
               fixed(run.throughput(), 0) + " items/s; e2e p50 " + fixed(run.e2e.p50_ms, 1) + " ms, p99 " +
               fixed(run.e2e.p99_ms, 1) + " ms, max " + fixed(run.e2e.max_ms, 1) + " ms; backlog " +
               std::to_string(run.backlog_start()) + " -> " + std::to_string(run.backlog_end()) +
               (producer_errors.load() ? "; producer errors: " + std::to_string(producer_errors.load()) : "") +
               (finished ? "" : "; NOT ALL ITEMS RAN"));
  if (!run.consumer_note.empty()) ctx.progress(system.name + " during the run: " + run.consumer_note);
  const unsigned cores = std::thread::hardware_concurrency();
  ctx.progress(system.name + ": machine CPU busy " + fixed(100 * run.drain_cpu.busy_fraction, 0) + "% draining (" +
               fixed(run.drain_cpu_us_per_item(), 1) + " us/item), " + fixed(100 * run.steady_cpu.busy_fraction, 0) +
               "% producing and consuming (" + fixed(run.steady_cpu_us_per_item(), 1) + " us/item); the offered load needs " +
               fixed(100 * run.cpu_needed_fraction(cores), 0) + "% of " + std::to_string(cores) + " cores");
  return run;
}

SteadyRun run_quick(ExperimentContext& ctx, const std::vector<int>& counts, milliseconds duration) {
  ScratchDatabase db(ctx.server_url, "quick_bench_steady");
  ConsumerConfig config = bench_consumer_config(db.url());  // library defaults, but 4 connections:
  config.manager.threads = 2;  // Scanner, 2 Managers, writer
  config.worker.threads = 4;
  constexpr int kConsumers = 1;
  LatencyRecorder e2e;
  std::atomic<bool> measuring{false};
  QuickPool pool(config, kConsumers, {kJobType}, [&](JobContext& job) {
    if (measuring.load()) e2e.record(job.waited());
    return JobResult::done();
  });
  System system;
  system.name = "quick-pg";
  system.connections = kConsumers * connections_per_consumer(config);
  system.fill = [&] {
    auto conn = db.connect();
    return fill_quick(*conn, counts, kJobType);
  };
  system.start = [&] { pool.start(); };
  system.stop = [&] { pool.stop(); };
  system.done = [&] { return pool.done(); };
  system.stats = [&] { return pool.total_stats(); };
  system.enqueue = [](pqxx::connection& conn, const std::vector<Enqueue>& batch) {
    std::vector<NewItem> items;
    for (const auto& e : batch) {
      for (int i = 0; i < e.count; ++i) {
        NewItem item;
        item.tenant = e.tenant;
        item.job_type = kJobType;
        items.push_back(std::move(item));
      }
    }
    pqxx::work txn(conn);
    enqueue_batch_in(txn, items);
    txn.commit();
  };
  return run_steady(ctx, db, system, e2e, measuring, static_cast<int>(counts.size()), duration);
}

SteadyRun run_baseline(ExperimentContext& ctx, const std::vector<int>& counts, milliseconds duration, int batch) {
  ScratchDatabase db(ctx.server_url, "quick_bench_steady");
  {
    auto conn = db.connect();
    create_baseline_schema(*conn);
  }
  constexpr int kConnections = 4;
  LatencyRecorder e2e;
  std::atomic<bool> measuring{false};
  BaselinePool pool(BaselinePool::Options{db.url(), kConnections, batch,
                                          [&](const ClaimedJob& job) {
                                            if (measuring.load()) e2e.record(job.waited);
                                          },
                                          milliseconds(5)});
  System system;
  system.name = "baseline-b" + std::to_string(batch);
  system.connections = kConnections;
  system.fill = [&] {
    auto conn = db.connect();
    const long long items = fill_baseline(*conn, counts);
    db.exec("VACUUM ANALYZE bench_baseline.jobs");
    return items;
  };
  system.start = [&] { pool.start(); };
  system.stop = [&] { pool.stop(); };
  system.done = [&] { return pool.done(); };
  system.enqueue = [](pqxx::connection& conn, const std::vector<Enqueue>& batch) {
    std::vector<BaselineJob> jobs;
    for (const auto& e : batch) jobs.insert(jobs.end(), static_cast<std::size_t>(e.count), BaselineJob{e.tenant, "{}", 0});
    pqxx::work txn(conn);
    enqueue_baseline(txn, jobs);
    txn.commit();
  };
  return run_steady(ctx, db, system, e2e, measuring, static_cast<int>(counts.size()), duration);
}

// The value at `percentile` (0..100] of sorted samples, as LatencyRecorder computes it.
double percentile_of(const std::vector<double>& sorted, double percentile) {
  if (sorted.empty()) return 0;
  const auto rank = static_cast<std::size_t>(std::ceil(percentile / 100.0 * static_cast<double>(sorted.size())));
  return sorted[std::min(sorted.size(), std::max<std::size_t>(rank, 1)) - 1];
}

void run_steady_state(ExperimentContext& ctx) {
  const int tenants = ctx.size(10000, 2000);
  const auto counts = uniform_item_counts(tenants, 1, 4, 42);
  const milliseconds duration = ctx.duration(milliseconds(20000), milliseconds(3000));
  std::vector<SteadyRun> runs;
  runs.push_back(run_quick(ctx, counts, duration));
  if (!ctx.quick) runs.push_back(run_baseline(ctx, counts, duration, 1));
  runs.push_back(run_baseline(ctx, counts, duration, 10));
  const SteadyRun& quick = runs[0];
  const unsigned cores = std::thread::hardware_concurrency();

  std::vector<std::vector<std::string>> summary, latency, backlog, table, cpu_table;
  const std::vector<double> percentiles{1,  5,  10, 20, 30, 40, 50, 60,   70,   80,    90,
                                        95, 97, 98, 99, 99.5, 99.9, 99.95, 99.99, 100};
  for (const auto& run : runs) {
    summary.push_back({run.system, std::to_string(run.connections), std::to_string(run.drain_items),
                       fixed(run.drain_s, 3), fixed(run.drain_rate(), 1), fixed(run.target_rate, 1),
                       fixed(run.offered_rate(), 1), fixed(run.throughput(), 1), std::to_string(run.e2e.count),
                       fixed(run.e2e.p50_ms, 2), fixed(run.e2e.p99_ms, 2), fixed(run.e2e.p999_ms, 2),
                       fixed(run.e2e.max_ms, 2), std::to_string(run.backlog_start()), std::to_string(run.backlog_end()),
                       fixed(run.backlog_bound(), 0), fixed(run.backlog_growth(), 1), fixed(run.finish_s, 3),
                       fixed(run.drain_cpu.busy_fraction, 3), fixed(run.drain_cpu_us_per_item(), 2),
                       fixed(run.steady_cpu.busy_fraction, 3), fixed(run.steady_cpu_us_per_item(), 2),
                       fixed(run.cpu_needed_fraction(cores), 3)});
    for (double p : percentiles) latency.push_back({run.system, fixed(p, 2), fixed(percentile_of(run.e2e_sorted_ms, p), 3)});
    for (const auto& s : run.backlog) {
      backlog.push_back({run.system, fixed(s.t_s, 2), std::to_string(s.enqueued), std::to_string(s.done),
                         std::to_string(s.enqueued - s.done)});
    }
    table.push_back({run.system, std::to_string(run.connections), fixed(run.drain_rate(), 0),
                     fixed(run.offered_rate(), 0), fixed(run.throughput(), 0), fixed(run.e2e.p50_ms, 1),
                     fixed(run.e2e.p99_ms, 1), fixed(run.e2e.p999_ms, 1), fixed(run.e2e.max_ms, 1),
                     std::to_string(run.backlog_start()) + " -> " + std::to_string(run.backlog_end()),
                     fixed(run.backlog_growth(), 0)});
    cpu_table.push_back({run.system, fixed(100 * run.drain_cpu.busy_fraction, 0) + "%", fixed(run.drain_cpu_us_per_item(), 1),
                         fixed(100 * run.steady_cpu.busy_fraction, 0) + "%", fixed(run.steady_cpu_us_per_item(), 1),
                         fixed(100 * run.cpu_needed_fraction(cores), 0) + "%"});
  }
  ctx.results->write_csv("steady_state.csv",
                         {"system", "connections", "drain_items", "drain_s", "drain_items_per_s", "target_items_per_s",
                          "offered_items_per_s", "throughput_items_per_s", "e2e_n", "e2e_p50_ms", "e2e_p99_ms",
                          "e2e_p999_ms", "e2e_max_ms", "backlog_start", "backlog_end", "backlog_bound", "backlog_growth_per_s", "finish_s",
                          "drain_cpu_busy", "drain_cpu_us_per_item", "steady_cpu_busy", "steady_cpu_us_per_item",
                          "cpu_needed_at_offered_load"},
                         summary);
  ctx.results->write_csv("steady_state_latency.csv", {"system", "percentile", "ms"}, latency);
  ctx.results->write_csv("steady_state_backlog.csv", {"system", "t_s", "enqueued", "done", "backlog"}, backlog);

  ctx.results->add_section(
      "## Steady state\n\n" + std::to_string(tenants) +
      " tenants; each enqueue puts 1-4 no-op items into a tenant chosen at random (the paper's uniform load). " +
      std::to_string(kProducers) +
      " producer threads follow a fixed schedule and commit every 5 ms the enqueues due by then in one "
      "transaction (one commit per enqueue would cap the load at this machine's commit rate). Each system first drains a pre-filled queue of the same shape "
      "(its drain rate), then runs at 80% of that rate for " + fixed(duration.count() / 1000.0, 0) +
      " s with the same consumers. quick-pg: one consumer, 4 connections (Scanner, 2 "
      "Managers, writer) and 4 Workers, otherwise library defaults; baseline: 4 worker connections. End-to-end latency: enqueue (vesting) to handler start, for every item enqueued during the "
      "run (after the producers stop, the run waits for the last one). Backlog: items committed by the producers "
      "and not yet done, at the start and at the end of the run, and its growth over the second half (least "
      "squares).\n\n" +
      markdown_table({"system", "connections", "drain items/s", "offered items/s", "done items/s", "e2e p50 ms",
                      "e2e p99 ms", "e2e p99.9 ms", "e2e max ms", "backlog start -> end", "backlog growth items/s"},
                     table) +
      "\nAt 80% of its own drain rate a system that keeps up shows a flat backlog, and its end-to-end latency is "
      "the time a new item takes to be found. For the baseline that is one claim query. For quick-pg it is "
      "mostly the time until a Scanner selects the zone's pointer. By Little's law a vested pointer waits about "
      "(vested pointers per peek) / (scans per second x selected per scan). A randomly selecting Scanner takes "
      "`selection_frac` (2%) of the vested pointers it peeks, so when zones become ready faster than the Scanners "
      "peek, the vested set, and with it the wait, grows until that fraction keeps up with the arrivals. "
      "quick-pg during the run: " + quick.consumer_note +
      ".\n\nProcessor time, this whole machine (" + std::to_string(cores) +
      " cores; producers, consumers and, when local, the server): how busy the drain kept it and what a drained "
      "item cost; how busy the steady phase kept it and what an item cost there (enqueueing it and running it); "
      "and the share of the machine the offered load (80% of the drain rate) needs at that cost. A drain that "
      "fills the cores leaves 20% of them for the producers' work; where the need comes out near or above "
      "100%, no consumer setting can keep the backlog flat on this machine.\n\n" +
      markdown_table({"system", "CPU busy, draining", "CPU us per drained item", "CPU busy, steady",
                      "CPU us per item, steady", "CPU needed at the offered load"},
                     cpu_table) +
      "\n![steady state latency](steady_state_latency.png)\n"
      "![steady state backlog](steady_state_backlog.png)\n");
  ctx.results->add_target({"steady_state", "quick-pg e2e p99 at 80% of drain rate (ms)", quick.e2e.p99_ms, "<= 50 ms",
                           quick.e2e.p99_ms <= 50.0});
  ctx.results->add_target({"steady_state", "quick-pg backlog at the end (items)", static_cast<double>(quick.backlog_end()),
                           "<= 0.5 s of arrivals (" + fixed(quick.backlog_bound(), 0) + " items)",
                           static_cast<double>(quick.backlog_end()) <= quick.backlog_bound()});
}

}  // namespace

QUICK_BENCH_EXPERIMENT(60, "steady_state",
                       "producers at 80% of the drain rate, 10,000 tenants x 1-4 items: e2e latency and backlog",
                       run_steady_state);

}  // namespace quick::bench
