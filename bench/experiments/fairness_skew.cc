// Experiment: fairness under uniform and skewed load (the paper's Figures 5 and 6). One consumer
// with manager.dequeue_max = 1 (one item per zone visit; every other setting at its default);
// 1,000 tenants enqueue single no-op items, each tenant at its own rate:
//   uniform: every tenant the same rate;
//   skewed:  rates drawn from a Pareto distribution with alpha = log4(5) ~ 1.161 (the paper's),
// with the same total: 25% of what this consumer drains from a pre-filled queue, measured first.
// Not more: the drain rate has the cores to itself, while here the producer, the pull requests
// and the consumer share them, and a queue run past what it sustains measures its backlog, not
// its order of service (at 60% the backlog grew: docs/benchmarks-history.md#fairness-under-skew-the-scan-rate).
// Reported, per load: pointer pickup latency (a zone's pointer vesting -> its visit; the
// consumer's own histogram, 4% buckets) and item latency (due time -> handler start, exact)
// p50/p99/p99.9; per tenant, its rate and its items' latency. One more line runs the
// skewed load through the baseline FIFO queue (4 connections, batch 10: enough capacity
// for this load, so that it compares the order of service, not the capacity).
//
// Arrivals are a Poisson process per tenant. One producer thread commits every 10 ms the items
// that arrived in that tick, in one transaction (cheap enough to leave the cores to the queue).
// An item's latency counts from its tick, its due time (support/scheduled_load.h): when a commit
// is slow the next one takes the ticks missed, and their items' wait counts (from the enqueue
// statement, the vesting time, it would not; that p99 is reported beside it).
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <mutex>
#include <random>
#include <thread>
#include <unordered_map>

#include "quick/producer.h"
#include "support/baseline_queue.h"
#include "support/bench_database.h"
#include "support/experiment.h"
#include "support/latency_recorder.h"
#include "support/load.h"
#include "support/quick_pool.h"
#include "support/scheduled_load.h"

namespace quick::bench {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr const char* kJobType = "noop";
constexpr double kLoadFraction = 0.25;  // of the consumer's measured drain rate
constexpr milliseconds kTick{10};


// Per-tenant rates (items/s) summing to `total`.
std::vector<double> uniform_rates(int tenants, double total) {
  return std::vector<double>(static_cast<std::size_t>(tenants), total / tenants);
}
std::vector<double> pareto_rates(int tenants, double total, unsigned seed) {
  const double alpha = std::log(5.0) / std::log(4.0);
  std::mt19937 random(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<double> rates;
  double sum = 0;
  for (int t = 0; t < tenants; ++t) {
    rates.push_back(std::pow(1.0 - unit(random), -1.0 / alpha));  // Pareto(x_m = 1, alpha) by inversion
    sum += rates.back();
  }
  for (auto& rate : rates) rate *= total / sum;
  return rates;
}

// Item latencies, per tenant. Handlers run on many threads.
class TenantLatencies {
 public:
  explicit TenantLatencies(int tenants) : by_tenant_(static_cast<std::size_t>(tenants)) {
    for (int t = 0; t < tenants; ++t) index_.emplace(tenant_name(t), t);
  }
  // One item: its latency from its due time (named by `payload`) and from its enqueue statement.
  void record(const std::string& tenant, const std::string& payload, std::chrono::microseconds from_statement) {
    const auto it = index_.find(tenant);  // read-only after construction
    if (it == index_.end()) return;
    const auto waited = since_due(payload, Clock::now()).value_or(from_statement);
    from_statement_.record(from_statement);
    all_.record(waited);
    std::lock_guard<std::mutex> lock(mutex_);
    by_tenant_[static_cast<std::size_t>(it->second)].push_back(static_cast<double>(waited.count()) / 1000.0);
  }
  Percentiles all() const { return all_.summary(); }
  Percentiles from_statement() const { return from_statement_.summary(); }
  // Over the tenants for which `include(t)` holds.
  Percentiles of(const std::function<bool(int)>& include) const {
    LatencyRecorder recorder;
    std::lock_guard<std::mutex> lock(mutex_);
    for (std::size_t t = 0; t < by_tenant_.size(); ++t) {
      if (!include(static_cast<int>(t))) continue;
      for (double ms : by_tenant_[t])
        recorder.record(std::chrono::microseconds(static_cast<std::int64_t>(ms * 1000.0)));
    }
    return recorder.summary();
  }
  Percentiles tenant(int t) const {
    LatencyRecorder recorder;
    std::lock_guard<std::mutex> lock(mutex_);
    for (double ms : by_tenant_[static_cast<std::size_t>(t)]) {
      recorder.record(std::chrono::microseconds(static_cast<std::int64_t>(ms * 1000.0)));
    }
    return recorder.summary();
  }

 private:
  std::unordered_map<std::string, int> index_;
  LatencyRecorder all_, from_statement_;
  mutable std::mutex mutex_;
  std::vector<std::vector<double>> by_tenant_;  // guarded by mutex_
};

struct LoadRun {
  std::string load;  // uniform, skewed, skewed_fifo
  std::string system;
  std::vector<double> rates;
  double seconds = 0;
  long long enqueued = 0;
  long long done_in_run = 0;
  bool finished = true;
  LatencySummary pointer;          // quick-pg only
  Percentiles item;                // due time (the producer's tick) -> handler start
  Percentiles from_statement;      // the enqueue statement (vesting) -> handler start
  Percentiles producer_lag;        // how late the producer's ticks went out
  long long max_zone_length = -1;  // largest zone seen (sampled every second); quick-pg only
  double scans_per_s = 0, peeked_per_scan = 0, selected_per_scan = 0;  // quick-pg's Scanner
  std::vector<Percentiles> per_tenant;
  Percentiles busiest, others;  // item latency of the 10 busiest tenants, and of all the others
  double offered_rate() const { return seconds > 0 ? static_cast<double>(enqueued) / seconds : 0; }
  double throughput() const { return seconds > 0 ? static_cast<double>(done_in_run) / seconds : 0; }
};

// An item that arrived: its tenant's index, and the tick it is due in.
struct Arrival {
  int tenant;
  Clock::time_point due;
};

// Runs the arrivals for `duration` on one producer connection: every tick, the items that
// arrived (Poisson, per tenant `rates`) are enqueued in one transaction by `enqueue` (with those of
// any ticks missed while a commit was slow, each due at its own tick). Meanwhile `every_second`
// runs once a second. Returns the items enqueued; `lag` records how late each tick went out.
long long produce(const std::vector<double>& rates, milliseconds duration, unsigned seed,
                  const std::function<void(const std::vector<Arrival>&)>& enqueue,
                  const std::function<void()>& every_second, LatencyRecorder& lag) {
  double total = 0;
  for (double r : rates) total += r;
  std::mt19937 random(seed);
  std::discrete_distribution<int> which(rates.begin(), rates.end());
  std::poisson_distribution<int> arrivals(total * std::chrono::duration<double>(kTick).count());
  long long enqueued = 0;
  const auto start = Clock::now();
  auto next_second = start + std::chrono::seconds(1);
  run_ticks(
      start, start + duration, kTick,
      [&](const std::vector<Clock::time_point>& ticks) {
        std::vector<Arrival> arrived;
        for (const auto tick : ticks) {
          for (int n = arrivals(random); n > 0; --n) arrived.push_back({which(random), tick});
        }
        if (!arrived.empty()) enqueue(arrived);
        enqueued += static_cast<long long>(arrived.size());
        if (Clock::now() >= next_second) {
          every_second();
          next_second += std::chrono::seconds(1);
        }
      },
      lag);
  return enqueued;
}

// The item latency of the 10 busiest tenants (by rate) against that of all the others: water
// filling makes the busiest wait, FIFO does not tell them apart.
void split_busiest(LoadRun& run, const TenantLatencies& latencies) {
  std::vector<int> order(run.rates.size());
  for (std::size_t t = 0; t < order.size(); ++t) order[t] = static_cast<int>(t);
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    return run.rates[static_cast<std::size_t>(a)] > run.rates[static_cast<std::size_t>(b)];
  });
  std::vector<bool> busiest(run.rates.size(), false);
  for (std::size_t i = 0; i < std::min<std::size_t>(10, order.size()); ++i)
    busiest[static_cast<std::size_t>(order[i])] = true;
  run.busiest = latencies.of([&](int t) { return busiest[static_cast<std::size_t>(t)]; });
  run.others = latencies.of([&](int t) { return !busiest[static_cast<std::size_t>(t)]; });
}

ConsumerConfig fairness_config(const std::string& url) {
  ConsumerConfig config = bench_consumer_config(url);
  config.manager.dequeue_max = 1;  // the paper's setting for Figures 5 and 6
  return config;
}

// The consumer's drain rate with dequeue_max = 1: `per_tenant` items in each of `tenants` zones.
double measure_capacity(ExperimentContext& ctx, int tenants, int per_tenant) {
  ScratchDatabase db(ctx.server_url, "quick_bench_fairness");
  auto conn = db.connect();
  const long long items = fill_quick(*conn, std::vector<int>(static_cast<std::size_t>(tenants), per_tenant), kJobType);
  db.vacuum();
  QuickPool pool(fairness_config(db.url()), 1, {kJobType}, [](JobContext&) { return JobResult::done(); });
  pool.start();
  const auto elapsed = wait_until_count([&] { return pool.done(); }, static_cast<std::uint64_t>(items),
                                        std::chrono::minutes(5));
  pool.stop();
  const double rate = elapsed ? static_cast<double>(items) / elapsed->count() : 0;
  ctx.progress("fairness: one consumer, dequeue_max 1, drains " + fixed(rate, 0) + " items/s");
  return rate;
}

LoadRun run_quick(ExperimentContext& ctx, const std::string& load, const std::vector<double>& rates,
                  milliseconds duration) {
  const int tenants = static_cast<int>(rates.size());
  ScratchDatabase db(ctx.server_url, "quick_bench_fairness");
  TenantLatencies latencies(tenants);
  QuickPool pool(fairness_config(db.url()), 1, {kJobType}, [&latencies](JobContext& job) {
    latencies.record(job.item().tenant, job.item().payload, job.waited());
    return JobResult::done();
  });
  LoadRun run;
  run.load = load;
  run.system = "quick-pg";
  run.rates = rates;
  auto producer = db.connect();
  auto monitor = db.connect();
  pool.start();
  LatencyRecorder lag;
  run.enqueued = produce(
      rates, duration, 7,
      [&](const std::vector<Arrival>& arrived) {
        std::vector<NewItem> items(arrived.size());
        for (std::size_t i = 0; i < arrived.size(); ++i) {
          items[i].tenant = tenant_name(arrived[i].tenant);
          items[i].job_type = kJobType;
          items[i].payload = due_payload(arrived[i].due);
        }
        pqxx::work txn(*producer);
        enqueue_batch_in(txn, items);
        txn.commit();
      },
      [&] {  // the longest zone (the paper's "queue lengths ranged between 1 and 60")
        pqxx::nontransaction session(*monitor);
        const auto row =
            session.exec("SELECT coalesce(max(n), 0) FROM (SELECT count(*) AS n FROM quick.items GROUP BY tenant) z")
                .at(0);
        run.max_zone_length = std::max(run.max_zone_length, row[0].as<long long>());
      },
      lag);
  run.producer_lag = lag.summary();
  run.seconds = std::chrono::duration<double>(duration).count();
  run.done_in_run = static_cast<long long>(pool.done());
  {  // the Scanner while the producer ran: the pointer latency is about 1 / (selected per peek x peeks per second)
    const ConsumerStats stats = pool.total_stats();
    const auto scans = static_cast<double>(std::max<std::uint64_t>(stats.scans, 1));
    run.scans_per_s = static_cast<double>(stats.scans) / run.seconds;
    run.peeked_per_scan = static_cast<double>(stats.pointers_peeked) / scans;
    run.selected_per_scan = static_cast<double>(stats.pointers_selected) / scans;
  }
  run.finished = wait_until_count([&] { return pool.done(); }, static_cast<std::uint64_t>(run.enqueued),
                                  std::chrono::minutes(2))
                     .has_value();
  run.pointer = pool.total_stats().pointer_pickup_latency;
  pool.stop();
  run.item = latencies.all();
  run.from_statement = latencies.from_statement();
  for (int t = 0; t < tenants; ++t) run.per_tenant.push_back(latencies.tenant(t));
  split_busiest(run, latencies);
  ctx.progress("fairness " + load + ": offered " + fixed(run.offered_rate(), 0) + " items/s; pointer p50 " +
               fixed(run.pointer.p50_ms, 1) + " p99 " + fixed(run.pointer.p99_ms, 1) + " p99.9 " +
               fixed(run.pointer.p999_ms, 1) + " ms; item p50 " + fixed(run.item.p50_ms, 1) + " p99 " +
               fixed(run.item.p99_ms, 1) + " p99.9 " + fixed(run.item.p999_ms, 1) +
               " ms from the due time (from the enqueue statement p99 " + fixed(run.from_statement.p99_ms, 1) +
               " ms; producer behind its ticks by up to " + fixed(run.producer_lag.max_ms, 1) + " ms); longest zone " +
               std::to_string(run.max_zone_length) + "; " + fixed(run.scans_per_s, 0) + " scans/s, " +
               fixed(run.peeked_per_scan, 1) + " vested pointers per peek, " + fixed(run.selected_per_scan, 2) +
               " selected" + (run.finished ? "" : "; NOT ALL ITEMS RAN"));
  return run;
}

LoadRun run_fifo(ExperimentContext& ctx, const std::string& load, const std::vector<double>& rates,
                 milliseconds duration) {
  const int tenants = static_cast<int>(rates.size());
  ScratchDatabase db(ctx.server_url, "quick_bench_fairness");
  auto producer = db.connect();
  create_baseline_schema(*producer);
  TenantLatencies latencies(tenants);
  BaselinePool pool(BaselinePool::Options{
      db.url(), 4, 10, [&latencies](const ClaimedJob& job) { latencies.record(job.tenant, job.payload, job.waited); },
      milliseconds(5), /*with_payload=*/true});
  LoadRun run;
  run.load = load;
  run.system = "baseline-b10";
  run.rates = rates;
  pool.start();
  LatencyRecorder lag;
  run.enqueued = produce(
      rates, duration, 7,
      [&](const std::vector<Arrival>& arrived) {
        std::vector<BaselineJob> jobs;
        for (const auto& a : arrived) jobs.push_back(BaselineJob{tenant_name(a.tenant), due_payload(a.due), 0});
        pqxx::work txn(*producer);
        enqueue_baseline(txn, jobs);
        txn.commit();
      },
      [] {}, lag);
  run.producer_lag = lag.summary();
  run.seconds = std::chrono::duration<double>(duration).count();
  run.done_in_run = static_cast<long long>(pool.done());
  run.finished = wait_until_count([&] { return pool.done(); }, static_cast<std::uint64_t>(run.enqueued),
                                  std::chrono::minutes(2))
                     .has_value();
  pool.stop();
  run.item = latencies.all();
  run.from_statement = latencies.from_statement();
  for (int t = 0; t < tenants; ++t) run.per_tenant.push_back(latencies.tenant(t));
  split_busiest(run, latencies);
  ctx.progress("fairness " + load + " (FIFO baseline b10, 4 connections): item p50 " + fixed(run.item.p50_ms, 1) +
               " p99 " + fixed(run.item.p99_ms, 1) + " p99.9 " + fixed(run.item.p999_ms, 1) +
               " ms from the due time (from the enqueue statement p99 " + fixed(run.from_statement.p99_ms, 1) +
               " ms; producer behind its ticks by up to " + fixed(run.producer_lag.max_ms, 1) + " ms)" +
               (run.finished ? "" : "; NOT ALL ITEMS RAN"));
  return run;
}

void run_fairness(ExperimentContext& ctx) {
  const int tenants = 1000;
  const milliseconds duration = ctx.duration(milliseconds(20000), milliseconds(3000));
  const double capacity = measure_capacity(ctx, tenants, ctx.size(10, 3));
  const double total = kLoadFraction * capacity;
  std::vector<LoadRun> runs;
  runs.push_back(run_quick(ctx, "uniform", uniform_rates(tenants, total), duration));
  runs.push_back(run_quick(ctx, "skewed", pareto_rates(tenants, total, 42), duration));
  runs.push_back(run_fifo(ctx, "skewed", pareto_rates(tenants, total, 42), duration));

  std::vector<std::vector<std::string>> summary, latency, per_tenant, table;
  auto cell = [](double v, bool present) { return present ? fixed(v, 2) : std::string(); };
  for (const auto& run : runs) {
    const bool quick = run.system == "quick-pg";
    summary.push_back({run.load,
                       run.system,
                       std::to_string(tenants),
                       fixed(total, 1),
                       fixed(run.offered_rate(), 1),
                       fixed(run.throughput(), 1),
                       std::to_string(run.pointer.count),
                       cell(run.pointer.p50_ms, quick),
                       cell(run.pointer.p99_ms, quick),
                       cell(run.pointer.p999_ms, quick),
                       cell(run.pointer.max_ms, quick),
                       std::to_string(run.item.count),
                       fixed(run.item.p50_ms, 2),
                       fixed(run.item.p99_ms, 2),
                       fixed(run.item.p999_ms, 2),
                       fixed(run.item.max_ms, 2),
                       fixed(run.from_statement.p99_ms, 2),
                       fixed(run.producer_lag.max_ms, 2),
                       quick ? std::to_string(run.max_zone_length) : std::string(),
                       cell(run.scans_per_s, quick),
                       cell(run.peeked_per_scan, quick),
                       cell(run.selected_per_scan, quick),
                       fixed(run.busiest.p99_ms, 2),
                       fixed(run.others.p99_ms, 2)});
    const std::string series = quick ? run.load : run.load + "_fifo";
    if (quick) {
      latency.push_back({series, "pointer", "50", fixed(run.pointer.p50_ms, 3)});
      latency.push_back({series, "pointer", "99", fixed(run.pointer.p99_ms, 3)});
      latency.push_back({series, "pointer", "99.9", fixed(run.pointer.p999_ms, 3)});
    }
    latency.push_back({series, "item", "50", fixed(run.item.p50_ms, 3)});
    latency.push_back({series, "item", "99", fixed(run.item.p99_ms, 3)});
    latency.push_back({series, "item", "99.9", fixed(run.item.p999_ms, 3)});
    for (int t = 0; t < tenants; ++t) {
      const auto& p = run.per_tenant[static_cast<std::size_t>(t)];
      per_tenant.push_back({series, tenant_name(t), fixed(run.rates[static_cast<std::size_t>(t)], 4),
                            std::to_string(p.count), fixed(p.p50_ms, 2), fixed(p.p99_ms, 2), fixed(p.max_ms, 2)});
    }
    table.push_back({run.load, quick ? "quick-pg" : "baseline b10 (FIFO)", fixed(run.offered_rate(), 0),
                     quick ? fixed(run.pointer.p50_ms, 1) : "-", quick ? fixed(run.pointer.p99_ms, 1) : "-",
                     quick ? fixed(run.pointer.p999_ms, 1) : "-", fixed(run.item.p50_ms, 1), fixed(run.item.p99_ms, 1),
                     fixed(run.item.p999_ms, 1), fixed(run.from_statement.p99_ms, 1), fixed(run.producer_lag.max_ms, 1),
                     fixed(run.busiest.p99_ms, 1), fixed(run.others.p99_ms, 1),
                     quick ? std::to_string(run.max_zone_length) : "-",
                     quick ? fixed(run.scans_per_s, 0) + " / " + fixed(run.peeked_per_scan, 0) + " / " +
                                 fixed(run.selected_per_scan, 1)
                           : "-"});
  }
  ctx.results->write_csv("fairness.csv",
                         {"load",
                          "system",
                          "tenants",
                          "target_items_per_s",
                          "offered_items_per_s",
                          "throughput_items_per_s",
                          "pointer_n",
                          "pointer_p50_ms",
                          "pointer_p99_ms",
                          "pointer_p999_ms",
                          "pointer_max_ms",
                          "item_n",
                          "item_p50_ms",
                          "item_p99_ms",
                          "item_p999_ms",
                          "item_max_ms",
                          "item_from_statement_p99_ms",
                          "producer_lag_max_ms",
                          "max_zone_length",
                          "scans_per_s",
                          "peeked_per_scan",
                          "selected_per_scan",
                          "busiest10_item_p99_ms",
                          "others_item_p99_ms"},
                         summary);
  ctx.results->write_csv("fairness_latency.csv", {"load", "kind", "percentile", "ms"}, latency);
  ctx.results->write_csv("fairness_tenants.csv",
                         {"load", "tenant", "rate_per_s", "items", "p50_ms", "p99_ms", "max_ms"}, per_tenant);

  const auto& skewed = runs[1];
  const double top_rate = *std::max_element(skewed.rates.begin(), skewed.rates.end());
  ctx.results->add_section(
      "## Fairness, uniform vs skewed load (paper Figures 5 and 6)\n\n" + std::to_string(tenants) +
      " tenants enqueue single no-op items (Poisson arrivals) at " + fixed(total, 0) + " items/s in all, " +
      fixed(kLoadFraction * 100, 0) +
      "% of what one consumer with `manager.dequeue_max` = 1 drains from a full queue (" + fixed(capacity, 0) +
      " items/s, measured first); uniform: every tenant " + fixed(total / tenants, 2) +
      " items/s; skewed: Pareto rates with alpha = log4(5), the busiest tenant " + fixed(top_rate, 1) + " items/s. " +
      fixed(duration.count() / 1000.0, 0) +
      " s per load, one consumer (defaults but `dequeue_max` = 1). Pointer pickup: a pointer's vesting to its zone's "
      "visit (the consumer's histogram: 4% buckets). Item: the item's due time (the 10 ms tick its producer was to "
      "commit it in) to handler start (exact), so that a producer behind its ticks counts; *from the statement*: "
      "the item p99 from the enqueue statement (the vesting time), which leaves that out; *producer lag*: how late "
      "a tick went out at most. Longest zone: the most "
      "items one zone held, sampled every second. The last line runs the skewed load through the FIFO baseline "
      "(4 connections, batch 10, which has capacity to spare at this load).\n\n" +
      markdown_table(
          {"load", "system", "items/s", "pointer p50 ms", "pointer p99 ms", "pointer p99.9 ms", "item p50 ms",
           "item p99 ms", "item p99.9 ms", "item from the statement p99 ms", "producer lag max ms",
           "10 busiest: item p99 ms", "others: item p99 ms", "longest zone", "scans/s / vested per peek / selected"},
          table) +
      "\nA zone is visited each time a Scanner selects its pointer, and with `dequeue_max` = 1 a visit takes one "
      "item. The pointer latency is how long a vested zone waits for that: by Little's law about (vested pointers "
      "per peek) / (scans per second x selected per scan), the last column. Under uniform load a zone rarely holds "
      "more than one item, so an item waits about as long as its pointer. Under skewed load a tenant that enqueues "
      "faster than its zone is visited builds a queue, and each of its items waits one visit per item ahead of it "
      "(the paper's water filling): the busiest tenants' tail grows while the other tenants keep the pointer "
      "latency. FIFO serves items in arrival order: every tenant waits alike.\n\n"
      "![fairness](fairness_latency.png)\n![fairness per tenant](fairness_tenants.png)\n");
}

}  // namespace

QUICK_BENCH_EXPERIMENT(70, "fairness_skew",
                       "uniform vs Pareto-skewed load over 1,000 tenants, one consumer, dequeue_max 1 (Figures 5, 6)",
                       run_fairness);

}  // namespace quick::bench
