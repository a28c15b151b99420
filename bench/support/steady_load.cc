#include "support/steady_load.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <random>
#include <thread>

#include "quick/producer.h"
#include "support/baseline_queue.h"
#include "support/bench_database.h"
#include "support/load.h"
#include "support/quick_pool.h"
#include "support/scheduled_load.h"

namespace quick::bench {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr const char* kJobType = "noop";
constexpr double kItemsPerEnqueue = 2.5;  // mean of uniform 1..4
constexpr milliseconds kTick{5};

// One enqueue of the paper's uniform load: `count` (1-4) items for one tenant, due at `due` (the
// tick its producer was to commit it in), which each item's payload names (due_payload).
struct Enqueue {
  std::string tenant;
  int count;
  Clock::time_point due;
};

// What differs between quick-pg and the baseline; the rest of a run is shared.
struct System {
  std::string name;
  int connections = 0;
  std::function<long long()> fill;  // pre-fills the drain backlog; returns its items
  std::function<void()> start;      // starts the consumers
  std::function<void()> stop;
  std::function<std::uint64_t()> done;
  std::function<ConsumerStats()> stats;   // quick-pg only: counters summed over the consumers
  std::function<std::uint64_t()> errors;  // the queue's database errors since start
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
  const auto visits = static_cast<double>(after.visits - before.visits);
  const auto parked = static_cast<double>(after.pointers_parked - before.pointers_parked);
  const auto pulls = static_cast<double>(after.pulls_applied - before.pulls_applied);
  if (scans <= 0 || attempts <= 0 || won <= 0 || visits <= 0) return "no scans";
  return fixed(scans / seconds, 0) + " scans/s (all consumers), " + fixed(peeked / scans, 1) +
         " vested pointers per peek, " + fixed(selected / scans, 2) + " selected per scan, " +
         fixed(100.0 * (attempts - won) / attempts, 1) + "% of lease attempts lost, " + fixed(dequeued / won, 2) +
         " items per zone visit, " + fixed(attempts / visits, 1) + " zones per visit (" +
         std::to_string(after.pointers_per_visit) + " at most at the end), " + fixed(parked / seconds, 0) +
         " zones parked per s, " + fixed(pulls / seconds, 0) + " pull requests applied per s";
}

// What the handlers record while the run measures: each item's latency from its due time (its
// payload) and from its enqueue statement (the vesting time, `waited`).
struct Latencies {
  LatencyRecorder e2e, from_statement;
  std::atomic<bool> measuring{false};
  void record(const std::string& payload, std::chrono::microseconds waited) {
    if (!measuring.load()) return;
    e2e.record(since_due(payload, Clock::now()).value_or(waited));
    from_statement.record(waited);
  }
};

SteadyRun run_steady(ExperimentContext& ctx, const ScratchDatabase& db, System& system, Latencies& latencies,
                     int tenants, milliseconds duration, double load_fraction) {
  SteadyRun run;
  run.system = system.name;
  run.connections = system.connections;
  run.drain_items = system.fill();
  db.vacuum();
  const CpuMeter drain_meter;
  system.start();
  const auto drained = wait_until_count(system.done, static_cast<std::uint64_t>(run.drain_items),
                                        std::chrono::minutes(5));
  run.drain_cpu = drain_meter.finish();
  run.drain_s = drained ? drained->count() : 0;
  run.drain_timed_out = !drained;
  run.load_fraction = load_fraction;
  run.target_rate = load_fraction * run.drain_rate();
  ctx.progress(system.name + ": drain " + fixed(run.drain_rate(), 0) + " items/s; producing " +
               fixed(run.target_rate, 0) + " items/s (" + fixed(100 * load_fraction, 0) + "%) for " +
               fixed(duration.count() / 1000.0, 0) + " s");

  // Producers: each thread owns an equal share of the enqueue rate. Every tick it commits, in
  // one transaction, the enqueues that have come due since its last commit (open loop: a slow
  // commit makes the next one bigger, never the rate lower). Each thread's enqueues are drawn
  // before the run, so that the backlog can count those due but not yet committed.
  const double enqueues_per_thread = run.target_rate / kItemsPerEnqueue / kSteadyProducers;
  const long plan_size = due_by_tick(enqueues_per_thread, kTick, duration);
  std::vector<std::vector<Enqueue>> plans(kSteadyProducers);
  std::vector<std::vector<long long>> items_before(kSteadyProducers);  // items of the plan's first k enqueues
  for (int p = 0; p < kSteadyProducers; ++p) {
    std::mt19937 random(1000 + static_cast<unsigned>(p));
    std::uniform_int_distribution<int> tenant(0, tenants - 1), count(1, 4);
    auto& plan = plans[static_cast<std::size_t>(p)];
    auto& before = items_before[static_cast<std::size_t>(p)];
    before.push_back(0);
    for (long k = 0; k < plan_size; ++k) {
      const int tenant_index = tenant(random);
      plan.push_back({tenant_name(tenant_index), count(random), {}});
      before.push_back(before.back() + plan.back().count);
    }
  }
  latencies.measuring.store(true);
  const std::uint64_t done_before = system.done();
  const ConsumerStats stats_before = system.stats ? system.stats() : ConsumerStats{};
  std::atomic<long long> enqueued{0};
  std::atomic<int> producer_errors{0};
  LatencyRecorder lag;
  const CpuMeter steady_meter;
  const auto start = Clock::now();
  const auto end = start + duration;
  std::vector<std::thread> producers;
  for (int p = 0; p < kSteadyProducers; ++p) {
    producers.emplace_back([&, p] {
      std::unique_ptr<pqxx::connection> conn;
      try {  // nothing may escape a thread
        conn = db.connect();
      } catch (const std::exception& error) {
        if (producer_errors.fetch_add(1) == 0) ctx.progress(system.name + ": producer error: " + error.what());
        return;
      }
      auto& plan = plans[static_cast<std::size_t>(p)];
      long sent = 0;
      const auto send = [&](const std::vector<Clock::time_point>& ticks) {
        std::vector<Enqueue> batch;
        for (const auto tick : ticks) {
          for (const long due = due_by_tick(enqueues_per_thread, kTick, tick - start); sent < due; ++sent) {
            plan[static_cast<std::size_t>(sent)].due = tick;
            batch.push_back(plan[static_cast<std::size_t>(sent)]);
          }
        }
        if (batch.empty()) return;
        try {
          system.enqueue(*conn, batch);
          long long items = 0;
          for (const auto& e : batch) items += e.count;
          enqueued.fetch_add(items);
        } catch (const std::exception& error) {
          // Counted and reported; the first message tells why.
          if (producer_errors.fetch_add(1) == 0) ctx.progress(system.name + ": producer error: " + error.what());
        }
      };
      run_ticks(start, end, kTick, send, lag);
    });
  }
  // The backlog every 250 ms: items due by the producers' schedule (committed or not) minus items
  // done.
  auto sample = [&] {
    const auto now = Clock::now();
    long long due = 0;
    for (const auto& before : items_before) {
      const auto k = std::min<long>(due_by_tick(enqueues_per_thread, kTick, std::min(now, end) - start),
                                    static_cast<long>(before.size()) - 1);
      due += before[static_cast<std::size_t>(k)];
    }
    run.backlog.push_back({std::chrono::duration<double>(now - start).count(), enqueued.load(),
                           static_cast<long long>(system.done() - done_before), due});
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
  run.producer_lag = lag.summary();
  run.seconds = std::chrono::duration<double>(end - start).count();
  run.enqueued = enqueued.load();
  run.done_in_run = run.backlog.back().done;
  if (system.stats) run.consumer_note = describe_consumers(stats_before, system.stats(), run.seconds);
  const auto finished = wait_until_count([&] { return system.done() - done_before; },
                                         static_cast<std::uint64_t>(run.enqueued), std::chrono::minutes(2));
  run.finish_s = finished ? finished->count() : -1;
  run.producer_errors = producer_errors.load();
  system.stop();
  run.queue_errors = system.errors();
  latencies.measuring.store(false);

  run.e2e = latencies.e2e.summary();
  run.from_statement = latencies.from_statement.summary();
  run.e2e_sorted_ms = latencies.e2e.samples_ms();
  std::sort(run.e2e_sorted_ms.begin(), run.e2e_sorted_ms.end());
  ctx.progress(system.name + ": offered " + fixed(run.offered_rate(), 0) + " items/s, done " +
               fixed(run.throughput(), 0) + " items/s; e2e from the due time p50 " + fixed(run.e2e.p50_ms, 1) +
               " ms, p99 " + fixed(run.e2e.p99_ms, 1) + " ms, max " + fixed(run.e2e.max_ms, 1) +
               " ms (from the enqueue statement p99 " + fixed(run.from_statement.p99_ms, 1) +
               " ms; producers behind their ticks p99 " + fixed(run.producer_lag.p99_ms, 1) + " ms, max " +
               fixed(run.producer_lag.max_ms, 1) + " ms); backlog (due, not done) " +
               std::to_string(run.backlog_start()) + " -> " + std::to_string(run.backlog_end()) +
               (run.complete() ? "" : "; INCOMPLETE: " + run.problems()));
  if (!run.consumer_note.empty()) ctx.progress(system.name + " during the run: " + run.consumer_note);
  const unsigned cores = std::thread::hardware_concurrency();
  ctx.progress(system.name + ": machine CPU busy " + fixed(100 * run.drain_cpu.busy_fraction, 0) + "% draining (" +
               fixed(run.drain_cpu_us_per_item(), 1) + " us/item, client " + fixed(run.drain_client_us_per_item(), 1) +
               "), " + fixed(100 * run.steady_cpu.busy_fraction, 0) + "% producing and consuming (" +
               fixed(run.steady_cpu_us_per_item(), 1) + " us/item, client " +
               fixed(run.steady_client_us_per_item(), 1) + "); the offered load needs " +
               fixed(100 * run.cpu_needed_fraction(cores), 0) + "% of " + std::to_string(cores) + " cores");
  return run;
}

}  // namespace

SteadyRun run_steady_quick(ExperimentContext& ctx, const std::vector<int>& counts, milliseconds duration,
                           double load_fraction, bool pull_in_transaction) {
  ScratchDatabase db(ctx.server_url, "quick_bench_steady");
  ConsumerConfig config = bench_consumer_config(db.url());  // library defaults, but 4 connections:
  config.manager.threads = 2;                               // Scanner, 2 Managers, writer
  config.worker.threads = 4;
  constexpr int kConsumers = 1;
  Latencies latencies;
  QuickPool pool(config, kConsumers, {kJobType}, [&](JobContext& job) {
    latencies.record(job.item().payload, job.waited());
    return JobResult::done();
  });
  System system;
  system.name = pull_in_transaction ? "quick-pg-pull-in-tx" : "quick-pg";
  system.connections = kConsumers * connections_per_consumer(config);
  system.fill = [&] {
    auto conn = db.connect();
    return fill_quick(*conn, counts, kJobType);
  };
  system.start = [&] { pool.start(); };
  system.stop = [&] { pool.stop(); };
  system.done = [&] { return pool.done(); };
  system.stats = [&] { return pool.total_stats(); };
  system.errors = [&] { return pool.total_stats().database_errors; };
  EnqueueOptions options;
  options.pull_in_transaction = pull_in_transaction;
  system.enqueue = [options](pqxx::connection& conn, const std::vector<Enqueue>& batch) {
    std::vector<NewItem> items;
    for (const auto& e : batch) {
      const std::string payload = due_payload(e.due);
      for (int i = 0; i < e.count; ++i) {
        NewItem item;
        item.tenant = e.tenant;
        item.job_type = kJobType;
        item.payload = payload;
        items.push_back(std::move(item));
      }
    }
    pqxx::work txn(conn);
    enqueue_batch_in(txn, items, options);
    txn.commit();
  };
  return run_steady(ctx, db, system, latencies, static_cast<int>(counts.size()), duration, load_fraction);
}

SteadyRun run_steady_baseline(ExperimentContext& ctx, const std::vector<int>& counts, milliseconds duration,
                              double load_fraction, int batch, bool zone_writes) {
  ScratchDatabase db(ctx.server_url, "quick_bench_steady");
  {
    auto conn = db.connect();
    create_baseline_schema(*conn);
    if (zone_writes) add_zone_writes_schema(*conn, static_cast<int>(counts.size()));
  }
  constexpr int kConnections = 4;
  Latencies latencies;
  BaselinePool pool(BaselinePool::Options{db.url(), kConnections, batch,
                                          [&](const ClaimedJob& job) { latencies.record(job.payload, job.waited); },
                                          milliseconds(5), /*with_payload=*/true});
  System system;
  system.name = "baseline-b" + std::to_string(batch) + (zone_writes ? "+zone-writes" : "");
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
  system.errors = [&] { return pool.errors(); };
  system.enqueue = [zone_writes](pqxx::connection& conn, const std::vector<Enqueue>& batch) {
    std::vector<BaselineJob> jobs;
    for (const auto& e : batch)
      jobs.insert(jobs.end(), static_cast<std::size_t>(e.count), BaselineJob{e.tenant, due_payload(e.due), 0});
    pqxx::work txn(conn);
    if (zone_writes) enqueue_baseline_with_zone_writes(txn, jobs);
    else enqueue_baseline(txn, jobs);
    txn.commit();
  };
  return run_steady(ctx, db, system, latencies, static_cast<int>(counts.size()), duration, load_fraction);
}

}  // namespace quick::bench
