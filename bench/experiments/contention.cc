// Experiment 5 (the paper's Figure 7, on Postgres): the effect of scanner.selection_frac on
// contention between consumers, latency and maximum throughput.
//
// As in the paper: uniform load, 1 item per enqueue, 4 consumers selecting pointers at random.
// quick-pg normally lets one consumer per database hold the in-order role (it processes pointers
// in vesting order); here all four run with scanner.in_order_election = false, so every Scanner
// selects at random, as in the paper's figure. Everything else is the library default, tenant
// partitioning included (scanner.partition_grace 50 ms: each consumer takes its own tenants'
// vested pointers at once and others' only after 50 ms; docs/consumer.md).
//
// For each selection_frac, on a fresh database:
//   (a) maximum throughput: 4 consumers drain a pre-filled queue of many tenants x 1 item;
//   (b) latency: then a steady load below saturation (two producers, single-item transactions into
//       random tenants on a fixed schedule) runs for a while; p50/p99 of the items' latency from
//       their due time on the schedule to handler start (support/scheduled_load.h, so that a
//       producer behind its schedule counts), and the p99 of the pickup latency the paper plots
//       (vesting -> handler start, JobContext::waited()), which leaves that out;
//   (c) pointer-lease failures as % of attempts, during (a) and during (b), split by where they
//       failed (quick.visit_zones classifies each zone it could not visit):
//         locked      another consumer was visiting the zone (row locked) - the analogue of the
//                     paper's commit-time failure (b);
//         not_vested  visited and requeued by another consumer since the peek - the paper's
//                     read-time failure (a);
//         gone        the pointer had been garbage-collected.
// Target: at the default selection_frac (0.02), <= 10% of pointer-lease attempts fail. Checked
// under the steady load (the paper's condition) and, separately, during the drain (saturation).
#include <atomic>
#include <cmath>
#include <thread>

#include "quick/database.h"
#include "quick/producer.h"
#include "support/bench_database.h"
#include "support/experiment.h"
#include "support/latency_recorder.h"
#include "support/load.h"
#include "support/quick_pool.h"
#include "support/scheduled_load.h"

namespace quick::bench {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kConsumers = 4;
constexpr const char* kDrainType = "drain";
constexpr const char* kLoadType = "load";

// The Manager counters this experiment reads, summed over the consumers (as QuickPool::total_stats
// sums them), with the differences and shares it reports.
struct LeaseCounts {
  std::uint64_t scans = 0, peeked = 0, selected = 0;
  std::uint64_t attempts = 0, lost = 0, locked = 0, not_vested = 0, gone = 0;

  static LeaseCounts of(const QuickPool& pool) {
    LeaseCounts c;
    for (const auto& consumer : pool.consumers()) {
      const ConsumerStats s = consumer->stats();
      c.scans += s.scans;
      c.peeked += s.pointers_peeked;
      c.selected += s.pointers_selected;
      c.attempts += s.pointer_lease_attempts;
      c.lost += s.pointer_leases_lost;
      c.locked += s.pointer_conflicts_locked;
      c.not_vested += s.pointer_conflicts_not_vested;
      c.gone += s.pointer_conflicts_gone;
    }
    return c;
  }
  LeaseCounts operator-(const LeaseCounts& o) const {
    return {scans - o.scans, peeked - o.peeked, selected - o.selected,     attempts - o.attempts,
            lost - o.lost,   locked - o.locked, not_vested - o.not_vested, gone - o.gone};
  }
  double pct(std::uint64_t part) const {
    return attempts > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(attempts) : 0;
  }
  double per_scan(std::uint64_t part) const {
    return scans > 0 ? static_cast<double>(part) / static_cast<double>(scans) : 0;
  }
};

struct Point {
  double selection_frac = 0;
  long long drain_items = 0;
  double drain_seconds = 0;
  bool drain_timed_out = false;
  LeaseCounts drain;
  double load_rate = 0;  // offered, items/s
  long long load_items = 0;
  bool load_timed_out = false;
  Percentiles latency;         // due time on the producers' schedule -> handler start
  Percentiles from_statement;  // the enqueue statement (vesting) -> handler start
  Percentiles producer_lag;    // how late the producers' enqueues started
  LeaseCounts load;
  double max_throughput() const { return drain_seconds > 0 ? static_cast<double>(drain_items) / drain_seconds : 0; }
};

// Enqueues single-item transactions into random tenants at `rate` items/s in all for `duration`,
// from kProducers threads on a common schedule (support/scheduled_load.h: a late enqueue does not
// delay the next ones), each item's payload naming its due time. Throws if any was not enqueued.
ScheduleResult produce_steady_load(const std::string& url, int tenants, double rate,
                                   std::chrono::milliseconds duration) {
  constexpr int kProducers = 2;
  const ScheduleResult result = run_schedule(
      kProducers, rate, std::chrono::duration<double>(duration).count(), [&](int p) {
        auto conn = std::shared_ptr<pqxx::connection>(quick::connect(url));
        auto random = std::make_shared<std::mt19937>(static_cast<unsigned>(7 + p));
        return [conn, random, tenants](Clock::time_point due) {
          std::uniform_int_distribution<int> tenant(0, tenants - 1);
          pqxx::work txn(*conn);
          enqueue_in(txn, NewItem{tenant_name(tenant(*random)), kLoadType, due_payload(due), {}, 0, std::nullopt});
          txn.commit();
        };
      });
  if (result.unsent > 0) throw std::runtime_error("contention: a producer failed: " + result.first_error);
  return result;
}

Point measure(ExperimentContext& ctx, double selection_frac, int tenants, double load_rate,
              std::chrono::milliseconds load_duration) {
  Point point;
  point.selection_frac = selection_frac;
  point.load_rate = load_rate;
  ScratchDatabase db(ctx.server_url, "quick_bench_contention");
  {
    auto conn = db.connect();
    point.drain_items = fill_quick(*conn, std::vector<int>(static_cast<std::size_t>(tenants), 1), kDrainType);
  }
  db.vacuum();

  ConsumerConfig config = bench_consumer_config(db.url());
  config.scanner.selection_frac = selection_frac;
  config.scanner.in_order_election = false;  // pure random selection on all four, as in the paper
  LatencyRecorder latency, from_statement;
  QuickPool pool(config, kConsumers, {kDrainType, kLoadType}, [&](JobContext& job) {
    if (job.item().job_type == kLoadType) {
      latency.record(since_due(job.item().payload, Clock::now()).value_or(job.waited()));
      from_statement.record(job.waited());
    }
    return JobResult::done();
  });
  const auto timeout = ctx.quick ? std::chrono::seconds(60) : std::chrono::seconds(600);

  // (a) Maximum throughput: drain the backlog.
  pool.start();
  const auto drained = wait_until_count([&] { return pool.done(); }, static_cast<std::uint64_t>(point.drain_items),
                                        timeout);
  point.drain_timed_out = !drained;
  point.drain_seconds = drained ? drained->count() : 0;
  point.drain = LeaseCounts::of(pool);

  // (b) Steady load below saturation, on the same (now warm) consumers. The drained zones' pointers
  // are parked, so each new item pulls its zone's pointer in, as in a live queue.
  const ScheduleResult schedule = produce_steady_load(db.url(), tenants, load_rate, load_duration);
  point.load_items = schedule.sent;
  point.producer_lag = schedule.lag;
  const auto target = static_cast<std::uint64_t>(point.drain_items + point.load_items);
  point.load_timed_out = !wait_until_count([&] { return pool.done(); }, target, std::chrono::seconds(60));
  pool.stop();
  point.load = LeaseCounts::of(pool) - point.drain;
  point.latency = latency.summary();
  point.from_statement = from_statement.summary();

  ctx.progress("selection_frac " + fixed(selection_frac, 3) + ": max " + fixed(point.max_throughput(), 0) + " jobs/s" +
               (point.drain_timed_out ? " (TIMED OUT)" : "") + ", drain failures " +
               fixed(point.drain.pct(point.drain.lost), 1) + "%; under " + fixed(load_rate, 0) + "/s: p50 " +
               fixed(point.latency.p50_ms, 1) + " ms, p99 " + fixed(point.latency.p99_ms, 1) +
               " ms from the due time (from the enqueue statement " + fixed(point.from_statement.p99_ms, 1) +
               " ms; producers behind schedule by up to " + fixed(point.producer_lag.max_ms, 1) + " ms), failures " +
               fixed(point.load.pct(point.load.lost), 1) + "%" +
               (point.load_timed_out ? " (load not drained in 60 s)" : ""));
  return point;
}

void run_contention(ExperimentContext& ctx) {
  const std::vector<double> fracs = ctx.quick ? std::vector<double>{0.001, 0.02, 0.5}
                                              : std::vector<double>{0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5};
  const int tenants = ctx.size(20000, 2000);
  // Items/s: below the drain rate at every selection_frac (the table shows both), so that latency
  // measures pickup, not a growing backlog.
  const double load_rate = ctx.quick ? 150 : 300;
  const auto load_duration = ctx.duration(std::chrono::seconds(15), std::chrono::seconds(2));
  const double default_frac = ScannerConfig{}.selection_frac;

  std::vector<Point> points;
  for (double frac : fracs) points.push_back(measure(ctx, frac, tenants, load_rate, load_duration));

  std::vector<std::vector<std::string>> csv, table;
  for (const auto& p : points) {
    csv.push_back({fixed(p.selection_frac, 3),
                   std::to_string(kConsumers),
                   std::to_string(tenants),
                   std::to_string(p.drain_items),
                   fixed(p.drain_seconds, 3),
                   fixed(p.max_throughput(), 1),
                   std::to_string(p.drain.attempts),
                   fixed(p.drain.pct(p.drain.lost), 2),
                   fixed(p.drain.pct(p.drain.locked), 2),
                   fixed(p.drain.pct(p.drain.not_vested), 2),
                   fixed(p.drain.pct(p.drain.gone), 2),
                   fixed(p.drain.per_scan(p.drain.peeked), 1),
                   fixed(p.drain.per_scan(p.drain.selected), 2),
                   fixed(p.load_rate, 1),
                   std::to_string(p.load_items),
                   fixed(p.latency.p50_ms, 2),
                   fixed(p.latency.p99_ms, 2),
                   fixed(p.from_statement.p99_ms, 2),
                   fixed(p.producer_lag.max_ms, 2),
                   std::to_string(p.load.attempts),
                   fixed(p.load.pct(p.load.lost), 2),
                   fixed(p.load.pct(p.load.locked), 2),
                   fixed(p.load.pct(p.load.not_vested), 2),
                   fixed(p.load.pct(p.load.gone), 2),
                   fixed(p.load.per_scan(p.load.peeked), 1),
                   fixed(p.load.per_scan(p.load.selected), 2)});
    auto split = [](const LeaseCounts& c) {
      return fixed(c.pct(c.lost), 1) + "% (" + fixed(c.pct(c.locked), 1) + " / " + fixed(c.pct(c.not_vested), 1) +
             " / " + fixed(c.pct(c.gone), 1) + ")";
    };
    table.push_back(
        {fixed(p.selection_frac, 3) + (std::abs(p.selection_frac - default_frac) < 1e-9 ? " (default)" : ""),
         fixed(p.latency.p50_ms, 1) + (p.load_timed_out ? " (load not drained)" : ""), fixed(p.latency.p99_ms, 1),
         fixed(p.from_statement.p99_ms, 1), fixed(p.producer_lag.max_ms, 1), split(p.load),
         fixed(p.load.per_scan(p.load.peeked), 0) + " / " + fixed(p.load.per_scan(p.load.selected), 1),
         fixed(p.max_throughput(), 0) + (p.drain_timed_out ? " (timed out)" : ""), split(p.drain)});
  }
  ctx.results->write_csv("contention.csv",
                         {"selection_frac",
                          "consumers",
                          "tenants",
                          "drain_items",
                          "drain_seconds",
                          "max_jobs_per_s",
                          "drain_attempts",
                          "drain_failed_pct",
                          "drain_locked_pct",
                          "drain_not_vested_pct",
                          "drain_gone_pct",
                          "drain_peeked_per_scan",
                          "drain_selected_per_scan",
                          "load_rate_per_s",
                          "load_items",
                          "load_p50_ms",
                          "load_p99_ms",
                          "load_from_statement_p99_ms",
                          "load_producer_lag_max_ms",
                          "load_attempts",
                          "load_failed_pct",
                          "load_locked_pct",
                          "load_not_vested_pct",
                          "load_gone_pct",
                          "load_peeked_per_scan",
                          "load_selected_per_scan"},
                         csv);
  ctx.results->add_section(
      "## Contention (Figure 7)\n\n" + std::to_string(kConsumers) +
      " consumers, all with `scanner.in_order_election = false` (pure random selection, as in the paper's figure; "
      "normally one consumer per database holds the in-order role), otherwise library defaults (peek_max " +
      std::to_string(ScannerConfig{}.peek_max) + ", selection_max " + std::to_string(ScannerConfig{}.selection_max) +
      ", dequeue_max " + std::to_string(ManagerConfig{}.dequeue_max) + ", partition_grace " +
      std::to_string(ScannerConfig{}.partition_grace.count()) +
      " ms: each consumer owns a share of the tenants and takes others' vested pointers only after the grace). "
      "For each selection_frac, on a fresh database: "
      "maximum throughput = drain rate of " +
      std::to_string(tenants) + " tenants x 1 item; then a steady load of " + fixed(load_rate, 0) +
      " single-item enqueues/s into random tenants for " +
      fixed(std::chrono::duration<double>(load_duration).count(), 0) +
      " s; latency = those items' due time on the producers' schedule to handler start (so that a producer "
      "behind its schedule counts; *from the statement*: p99 from the enqueue statement, the vesting time, "
      "which leaves that out; *producer lag*: how late an enqueue started at most). Lease failures are % of "
      "pointer-lease "
      "attempts, total (locked / not_vested / gone): *locked* = another consumer was visiting the zone (the paper's "
      "commit-time failure), *not_vested* = visited and requeued by another consumer since the peek (the paper's "
      "read-time failure), *gone* = pointer garbage-collected. Peeked/selected are per scan.\n\n" +
      markdown_table({"selection_frac", "p50 ms", "p99 ms", "from the statement p99 ms", "producer lag max ms",
                      "failures under load", "peeked / selected", "max jobs/s", "failures in drain"},
                     table) +
      "\n![contention](contention.png)\n");
  for (const auto& p : points) {
    if (std::abs(p.selection_frac - default_frac) > 1e-9) continue;
    // The paper measures under a steady load; the drain (a saturated queue, full peeks) is shown too.
    const double under_load = p.load.pct(p.load.lost), in_drain = p.drain.pct(p.drain.lost);
    const std::string metric = "% pointer-lease attempts failed, 4 consumers, selection_frac " + fixed(default_frac, 2);
    ctx.results->add_target({"contention", metric + ", steady load", under_load, "<= 10", under_load <= 10});
    ctx.results->add_target({"contention", metric + ", drain (saturated)", in_drain, "<= 10", in_drain <= 10});
  }
}

}  // namespace

QUICK_BENCH_EXPERIMENT(50, "contention",
                       "selection_frac 0.001-0.5, 4 random-selecting consumers: lease failures, latency, max "
                       "throughput",
                       run_contention);

}  // namespace quick::bench
