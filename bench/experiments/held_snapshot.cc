// Experiment: a held snapshot (issue 19). One session opens a REPEATABLE READ transaction and
// takes its snapshot (`SELECT 1 FROM quick.items LIMIT 1`) when the load starts and keeps it
// until the load ends, as a report query, a stuck migration or a logical replication slot does:
// from then on no row version that dies can be removed (not by VACUUM, not by index scans
// marking entries dead), so every consumed job's dead versions and index entries stay.
//
// A fixed offered load (1,000 jobs/s, one job per enqueue, 2 producer threads whose enqueues due
// in the same 5 ms tick share a transaction) for 60 s, on 1 tenant and on 1,000 tenants, each
// once without and once with the snapshot; one consumer as in the steady state (Scanner, 2
// Managers, writer, 4 Workers). The plain SKIP LOCKED baseline (batch 1, 4 connections) runs the
// 1-tenant case beside it. Reported per 10 s window: jobs enqueued and done per second,
// end-to-end latency (vesting -> handler start) p50/p99 of the jobs started in the window, and
// the size of the tables and their indexes with their dead tuples (pg_stat_user_tables) at the
// window's end.
//
// Where the time goes (quick-pg runs): at 80% of the run, with the load still on, one more
// session loads auto_explain (log_analyze, log_buffers, nested statements, at NOTICE level so
// the plans come back to the client) and calls, each in a transaction it rolls back, the
// consumer's visit of one zone (quick.visit_zones), the Scanner's quick.scan_pointers and the
// producer's fast path (quick.enqueue_into_existing_zone), then runs EXPLAIN (ANALYZE, BUFFERS)
// of the statements those functions issue, one by one (zone probe, candidates, the zone's first
// entry, the pointer locks, the Scanner's peek and pending-pulls check). With the snapshot held it does so again right
// after the snapshot ends (the same data, now removable) and once more after that. Written to
// held_snapshot_explain_*.txt.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <fstream>
#include <functional>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <pqxx/pqxx>

#include "quick/producer.h"
#include "support/baseline_queue.h"
#include "support/bench_database.h"
#include "support/experiment.h"
#include "support/latency_recorder.h"
#include "support/load.h"
#include "support/quick_pool.h"
#include "support/results_folder.h"

namespace quick::bench {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr const char* kJobType = "noop";
constexpr int kProducers = 2;
constexpr milliseconds kTick{5};

struct TableSize {
  long long heap_bytes = 0, index_bytes = 0, dead_tuples = 0, live_tuples = 0;
};

struct Window {
  double t_s = 0;  // the window's end, since the load started
  double enqueued_per_s = 0, done_per_s = 0;
  Percentiles e2e;                   // jobs whose handler started in the window
  TableSize main_table, side_table;  // quick.items and quick.pointers; the baseline's jobs and nothing
};

struct HeldRun {
  std::string system;  // no spaces: used in CSVs
  int tenants = 0;
  bool held = false;
  double seconds = 0;
  long long enqueued = 0, done_in_run = 0;
  double finish_s = 0;  // after the producers stopped (and the snapshot ended), until the last job ran
  Percentiles e2e;
  std::vector<Window> windows;
  double throughput() const { return seconds > 0 ? static_cast<double>(done_in_run) / seconds : 0; }
  double offered() const { return seconds > 0 ? static_cast<double>(enqueued) / seconds : 0; }
  std::string label() const { return system + (held ? "+held-snapshot" : "") + "/" + std::to_string(tenants) + "t"; }
};

// Latencies with the time they were recorded, so that each window gets its own percentiles.
class TimedLatencies {
 public:
  void record(Clock::time_point at, std::chrono::microseconds latency) {
    std::lock_guard<std::mutex> lock(mutex_);
    samples_.emplace_back(at, static_cast<double>(latency.count()) / 1000.0);
  }
  // Percentiles of the samples recorded in [from, to).
  Percentiles between(Clock::time_point from, Clock::time_point to) const {
    LatencyRecorder window;
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [at, ms] : samples_) {
      if (at >= from && at < to) window.record(std::chrono::microseconds(static_cast<long long>(ms * 1000)));
    }
    return window.summary();
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::pair<Clock::time_point, double>> samples_;  // guarded by mutex_
};

TableSize table_size(pqxx::connection& conn, const std::string& table) {
  if (table.empty()) return {};
  pqxx::nontransaction session(conn);
  const auto row = session.exec_params1(
      "SELECT pg_relation_size($1::regclass), pg_indexes_size($1::regclass), "
      "coalesce((SELECT n_dead_tup FROM pg_stat_user_tables WHERE relid = $1::regclass), 0), "
      "coalesce((SELECT n_live_tup FROM pg_stat_user_tables WHERE relid = $1::regclass), 0)",
      table);
  return {row[0].as<long long>(), row[1].as<long long>(), row[2].as<long long>(), row[3].as<long long>()};
}

// Collects the server's notices (auto_explain's plans at NOTICE level).
class NoticeCollector : public pqxx::errorhandler {
 public:
  NoticeCollector(pqxx::connection_base& conn, std::string& out) : pqxx::errorhandler(conn), out_(out) {}
  bool operator()(const char message[]) noexcept override {
    try {
      out_ += message;
    } catch (...) {
    }
    return true;
  }

 private:
  std::string& out_;
};

// The hot statements of one zone's visit, one scan and one enqueue, with their plans, buffers and
// row counts (auto_explain, nested statements); each call in a transaction rolled back.
std::string capture_explain(const std::string& url, const std::string& tenant, const std::string& heading) {
  std::string out = "==== " + heading + " ====\n";
  try {
    pqxx::connection conn(url);
    NoticeCollector notices(conn, out);
    pqxx::nontransaction session(conn);
    session.exec(
        "LOAD 'auto_explain'; SET auto_explain.log_min_duration = 0; SET auto_explain.log_analyze = on; "
        "SET auto_explain.log_buffers = on; SET auto_explain.log_nested_statements = on; "
        "SET auto_explain.log_level = notice; SET client_min_messages = notice");
    const std::string t = session.quote(tenant);
    const std::vector<std::pair<std::string, std::string>> calls{
        {"the consumer's visit of zone " + tenant,
         "SELECT count(*) FROM quick.visit_zones(ARRAY[" + t + "], 200, '30 s', '60 s')"},
        {"the consumer's visit of up to 100 vested zones (a Manager's batch)",
         "SELECT count(*) FROM quick.visit_zones(ARRAY(SELECT p.tenant FROM quick.pointers p WHERE p.vesting_time "
         "<= now() ORDER BY p.vesting_time LIMIT 100), 200, '30 s', '60 s')"},
        {"the Scanner's scan", "SELECT count(*) FROM quick.scan_pointers(1000, 10000)"},
        {"the producer's fast path into zone " + tenant,
         "SELECT quick.enqueue_into_existing_zone(" + t + ", 'noop', '{}', '0', 0, false)"},
    };
    for (const auto& [what, call] : calls) {
      out += "\n---- " + what + ": " + call + "\n";
      session.exec("BEGIN");
      session.exec(call);
      session.exec("ROLLBACK");
    }
    // The same statements one by one, as the functions issue them (the visit above may find its
    // zone locked by the consumer and stop at its first step).
    session.exec("SET auto_explain.log_min_duration = -1");
    const std::string zone = "FROM quick.items i WHERE i.tenant = " + t;
    const std::vector<std::pair<std::string, std::string>> statements{
        {"the zone probe (visit steps 1 and 3)",
         "SELECT i.id " + zone + " AND i.vesting_time <= now() ORDER BY i.priority, i.vesting_time LIMIT 1"},
        {"the candidates (visit step 2a)", "SELECT i.id " + zone +
                                               " AND i.vesting_time <= now() ORDER BY i.priority, i.vesting_time "
                                               "LIMIT 200 FOR NO KEY UPDATE SKIP LOCKED"},
        {"the zone's first entry, vested or not (settle, step 4b)",
         "SELECT i.priority, i.vesting_time " + zone + " ORDER BY i.priority, i.vesting_time LIMIT 1"},
        {"the visit's pointer lock (step 1)", "SELECT p.tenant FROM quick.pointers p WHERE p.tenant = ANY (ARRAY[" + t +
                                                  "]) AND p.vesting_time <= now() FOR NO KEY UPDATE SKIP LOCKED"},
        {"the enqueue's pointer lock (fast path, step a)",
         "SELECT p.vesting_time FROM quick.pointers p WHERE p.tenant = " + t + " FOR KEY SHARE"},
        {"the Scanner's peek",
         "SELECT p.tenant, p.vesting_time FROM quick.pointers p WHERE p.vesting_time <= "
         "statement_timestamp() ORDER BY p.vesting_time, p.tenant LIMIT 1000"},
        {"the Scanner's pending pulls check", "SELECT 1 FROM quick.pointer_pulls LIMIT 1"},
    };
    for (const auto& [what, statement] : statements) {
      out += "\n---- " + what + ", EXPLAIN (ANALYZE, BUFFERS): " + statement + "\n";
      session.exec("BEGIN");
      for (const auto& row : session.exec("EXPLAIN (ANALYZE, BUFFERS) " + statement))
        out += row[0].c_str() + std::string("\n");
      session.exec("ROLLBACK");
    }
  } catch (const std::exception& error) {
    out += "\n(capture failed: " + std::string(error.what()) + ")\n";
  }
  return out + "\n";
}

// What differs between quick-pg and the baseline.
struct System {
  std::string name;
  std::string main_table, side_table;
  std::function<void()> start, stop;
  std::function<std::uint64_t()> done;
  std::function<void(pqxx::connection&, const std::vector<std::string>&)> enqueue;  // one job per tenant named
};

HeldRun run_held(ExperimentContext& ctx, const ScratchDatabase& db, System& system, TimedLatencies& e2e,
                 std::atomic<bool>& measuring, int tenants, bool held, double rate, milliseconds duration,
                 milliseconds window, bool explain) {
  HeldRun run;
  run.system = system.name;
  run.tenants = tenants;
  run.held = held;
  db.vacuum();
  system.start();
  auto sizes_conn = db.connect();
  std::unique_ptr<pqxx::connection> holder;
  std::unique_ptr<pqxx::nontransaction> holder_session;
  if (held) {
    holder = db.connect();
    holder_session = std::make_unique<pqxx::nontransaction>(*holder);
    holder_session->exec("BEGIN ISOLATION LEVEL REPEATABLE READ");
    holder_session->exec("SELECT 1 FROM " + system.main_table + " LIMIT 1");
  }
  ctx.progress(run.label() + ": " + fixed(rate, 0) + " jobs/s for " + fixed(duration.count() / 1000.0, 0) + " s" +
               (held ? ", a REPEATABLE READ snapshot held throughout" : ""));

  measuring.store(true);
  const std::uint64_t done_before = system.done();
  std::atomic<long long> enqueued{0};
  std::atomic<int> producer_errors{0};
  const double per_thread = rate / kProducers;
  const auto start = Clock::now();
  const auto end = start + duration;
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&, p] {
      auto conn = db.connect();
      std::mt19937 random(2000 + static_cast<unsigned>(p));
      std::uniform_int_distribution<int> tenant(0, tenants - 1);
      long long sent = 0;
      for (auto tick = start + kTick; tick <= end; tick += kTick) {
        std::this_thread::sleep_until(tick);
        const double elapsed = std::chrono::duration<double>(std::min(Clock::now(), end) - start).count();
        const auto due = static_cast<long long>(per_thread * elapsed);
        std::vector<std::string> batch;
        for (; sent < due; ++sent) batch.push_back(tenant_name(tenant(random)));
        if (batch.empty()) continue;
        try {
          system.enqueue(*conn, batch);
          enqueued.fetch_add(static_cast<long long>(batch.size()));
        } catch (const std::exception& error) {
          if (producer_errors.fetch_add(1) == 0) ctx.progress(run.label() + ": producer error: " + error.what());
        }
      }
    });
  }
  const auto windows = static_cast<int>(duration / window);
  const int explain_at = std::max(1, static_cast<int>(std::lround(0.8 * windows)));
  std::string explain_text;
  long long last_enqueued = 0, last_done = 0;
  auto last_end = start;
  for (int w = 1; w <= windows; ++w) {
    const auto window_end = start + w * window;
    std::this_thread::sleep_until(window_end);
    Window row;
    row.t_s = std::chrono::duration<double>(window_end - start).count();
    const long long now_enqueued = enqueued.load();
    const auto now_done = static_cast<long long>(system.done() - done_before);
    const double seconds = std::chrono::duration<double>(window).count();
    row.enqueued_per_s = static_cast<double>(now_enqueued - last_enqueued) / seconds;
    row.done_per_s = static_cast<double>(now_done - last_done) / seconds;
    row.e2e = e2e.between(last_end, window_end);
    row.main_table = table_size(*sizes_conn, system.main_table);
    row.side_table = table_size(*sizes_conn, system.side_table);
    ctx.progress(run.label() + ": " + fixed(row.t_s, 0) + " s: done " + fixed(row.done_per_s, 0) + "/s, p50 " +
                 fixed(row.e2e.p50_ms, 1) + " ms, p99 " + fixed(row.e2e.p99_ms, 1) + " ms; " + system.main_table + " " +
                 std::to_string(row.main_table.heap_bytes / 1024) + " kB + indexes " +
                 std::to_string(row.main_table.index_bytes / 1024) + " kB, dead " +
                 std::to_string(row.main_table.dead_tuples));
    run.windows.push_back(row);
    last_enqueued = now_enqueued;
    last_done = now_done;
    last_end = window_end;
    if (explain && w == explain_at) {
      explain_text += capture_explain(
          db.url(), tenant_name(0),
          run.label() + " at " + fixed(row.t_s, 0) + " s, load on" + (held ? ", snapshot held" : ""));
    }
  }
  for (auto& thread : producers) thread.join();
  run.seconds = std::chrono::duration<double>(end - start).count();
  run.enqueued = enqueued.load();
  run.done_in_run = static_cast<long long>(system.done() - done_before);
  if (holder_session) {
    holder_session->exec("COMMIT");
    if (explain) {
      explain_text += capture_explain(db.url(), tenant_name(0), run.label() + " just after the snapshot ended");
      explain_text += capture_explain(db.url(), tenant_name(0), run.label() + " after the snapshot ended, again");
    }
  }
  const auto finished = wait_until_count([&] { return system.done() - done_before; },
                                         static_cast<std::uint64_t>(run.enqueued), std::chrono::minutes(2));
  run.finish_s = finished ? finished->count() : -1;
  system.stop();
  measuring.store(false);
  run.e2e = e2e.between(start, Clock::now());
  if (!explain_text.empty()) {
    std::string file = "held_snapshot_explain_" + run.label() + ".txt";
    std::replace(file.begin(), file.end(), '/', '_');
    std::ofstream(ctx.results->dir() / file) << explain_text;
  }
  ctx.progress(run.label() + ": offered " + fixed(run.offered(), 0) + " jobs/s, done " + fixed(run.throughput(), 0) +
               "/s; e2e p50 " + fixed(run.e2e.p50_ms, 1) + " ms, p99 " + fixed(run.e2e.p99_ms, 1) + " ms" +
               (producer_errors.load() ? "; producer errors: " + std::to_string(producer_errors.load()) : "") +
               (finished ? "" : "; NOT ALL JOBS RAN"));
  return run;
}

HeldRun run_quick(ExperimentContext& ctx, int tenants, bool held, double rate, milliseconds duration,
                  milliseconds window) {
  ScratchDatabase db(ctx.server_url, "quick_bench_held");
  ConsumerConfig config = bench_consumer_config(db.url());
  config.manager.threads = 2;
  config.worker.threads = 4;
  TimedLatencies e2e;
  std::atomic<bool> measuring{false};
  QuickPool pool(config, 1, {kJobType}, [&](JobContext& job) {
    if (measuring.load()) e2e.record(Clock::now(), job.waited());
    return JobResult::done();
  });
  {
    // Every zone exists before the load (its pointer parked), so that enqueues take the fast path.
    auto conn = db.connect();
    fill_quick(*conn, std::vector<int>(static_cast<std::size_t>(tenants), 1), kJobType);
  }
  System system;
  system.name = "quick-pg";
  system.main_table = "quick.items";
  system.side_table = "quick.pointers";
  system.start = [&] { pool.start(); };
  system.stop = [&] { pool.stop(); };
  system.done = [&] { return pool.done(); };
  system.enqueue = [](pqxx::connection& conn, const std::vector<std::string>& tenant_names) {
    std::vector<NewItem> items;
    for (const auto& tenant : tenant_names) {
      NewItem item;
      item.tenant = tenant;
      item.job_type = kJobType;
      items.push_back(std::move(item));
    }
    pqxx::work txn(conn);
    enqueue_batch_in(txn, items);
    txn.commit();
  };
  // The consumer runs the setup's jobs before the load starts (their zones are then parked).
  pool.start();
  wait_until_count([&] { return pool.done(); }, static_cast<std::uint64_t>(tenants), std::chrono::minutes(1));
  system.start = [] {};
  return run_held(ctx, db, system, e2e, measuring, tenants, held, rate, duration, window, /*explain=*/true);
}

HeldRun run_baseline(ExperimentContext& ctx, int tenants, bool held, double rate, milliseconds duration,
                     milliseconds window) {
  ScratchDatabase db(ctx.server_url, "quick_bench_held");
  {
    auto conn = db.connect();
    create_baseline_schema(*conn);
  }
  TimedLatencies e2e;
  std::atomic<bool> measuring{false};
  BaselinePool pool(BaselinePool::Options{db.url(), 4, 1,
                                          [&](const ClaimedJob& job) {
                                            if (measuring.load()) e2e.record(Clock::now(), job.waited);
                                          },
                                          milliseconds(5)});
  System system;
  system.name = "baseline-b1";
  system.main_table = "bench_baseline.jobs";
  system.start = [&] { pool.start(); };
  system.stop = [&] { pool.stop(); };
  system.done = [&] { return pool.done(); };
  system.enqueue = [](pqxx::connection& conn, const std::vector<std::string>& tenant_names) {
    std::vector<BaselineJob> jobs;
    for (const auto& tenant : tenant_names) jobs.push_back(BaselineJob{tenant, "{}", 0});
    pqxx::work txn(conn);
    enqueue_baseline(txn, jobs);
    txn.commit();
  };
  return run_held(ctx, db, system, e2e, measuring, tenants, held, rate, duration, window, /*explain=*/false);
}

std::string kb(long long bytes) { return std::to_string(bytes / 1024); }

void run_held_snapshot(ExperimentContext& ctx) {
  const double rate = 1000;
  const milliseconds duration = ctx.duration(milliseconds(60000), milliseconds(3000));
  const milliseconds window = ctx.duration(milliseconds(10000), milliseconds(1000));
  const int many = ctx.size(1000, 100);
  std::vector<HeldRun> runs;
  for (const int tenants : {1, many}) {
    for (const bool held : {false, true}) runs.push_back(run_quick(ctx, tenants, held, rate, duration, window));
  }
  for (const bool held : {false, true}) runs.push_back(run_baseline(ctx, 1, held, rate, duration, window));

  std::vector<std::vector<std::string>> csv, summary, windows_table;
  for (const auto& run : runs) {
    summary.push_back({run.system, std::to_string(run.tenants), run.held ? "held" : "none", fixed(run.offered(), 0),
                       fixed(run.throughput(), 0), fixed(run.e2e.p50_ms, 1), fixed(run.e2e.p99_ms, 1),
                       fixed(run.e2e.max_ms, 1), fixed(run.finish_s, 1)});
    for (const auto& w : run.windows) {
      csv.push_back({run.label(), run.system, std::to_string(run.tenants), run.held ? "1" : "0", fixed(w.t_s, 0),
                     fixed(w.enqueued_per_s, 1), fixed(w.done_per_s, 1), std::to_string(w.e2e.count),
                     fixed(w.e2e.p50_ms, 2), fixed(w.e2e.p99_ms, 2), fixed(w.e2e.max_ms, 2),
                     std::to_string(w.main_table.heap_bytes), std::to_string(w.main_table.index_bytes),
                     std::to_string(w.main_table.dead_tuples), std::to_string(w.main_table.live_tuples),
                     std::to_string(w.side_table.heap_bytes), std::to_string(w.side_table.index_bytes),
                     std::to_string(w.side_table.dead_tuples)});
      windows_table.push_back({run.label(), fixed(w.t_s, 0), fixed(w.done_per_s, 0), fixed(w.e2e.p50_ms, 1),
                               fixed(w.e2e.p99_ms, 1), kb(w.main_table.heap_bytes), kb(w.main_table.index_bytes),
                               std::to_string(w.main_table.dead_tuples), kb(w.side_table.heap_bytes),
                               kb(w.side_table.index_bytes), std::to_string(w.side_table.dead_tuples)});
    }
  }
  ctx.results->write_csv(
      "held_snapshot.csv",
      {"run", "system", "tenants", "held", "t_s", "enqueued_per_s", "done_per_s", "e2e_n", "e2e_p50_ms", "e2e_p99_ms",
       "e2e_max_ms", "main_heap_bytes", "main_index_bytes", "main_dead_tuples", "main_live_tuples", "side_heap_bytes",
       "side_index_bytes", "side_dead_tuples"},
      csv);
  ctx.results->add_section(
      "## Held snapshot\n\n" + fixed(rate, 0) + " jobs/s offered (one job per enqueue; " + std::to_string(kProducers) +
      " producers commit every 5 ms the enqueues due) for " + fixed(duration.count() / 1000.0, 0) +
      " s, once without and once with a session holding a REPEATABLE READ snapshot from the start to the "
      "end of the load. quick-pg: one consumer (Scanner, 2 Managers, writer, 4 Workers), every zone created "
      "before the load; baseline-b1: the SKIP LOCKED table, 4 connections claiming one job at a time. e2e: "
      "vesting to handler start, of the jobs started in the window; after the load, the run waits for the "
      "backlog (finish s).\n\n" +
      markdown_table({"system", "tenants", "snapshot", "offered/s", "done/s", "e2e p50 ms", "e2e p99 ms", "e2e max ms",
                      "finish s"},
                     summary) +
      "\nPer window (main: quick.items or bench_baseline.jobs; side: quick.pointers; sizes at the window's end, "
      "kB; dead: n_dead_tup):\n\n" +
      markdown_table({"run", "t s", "done/s", "p50 ms", "p99 ms", "main kB", "main idx kB", "main dead", "side kB",
                      "side idx kB", "side dead"},
                     windows_table) +
      "\nPlans and buffers of the hot statements: held_snapshot_explain_*.txt.\n");
  for (const int tenants : {1, many}) {
    const HeldRun* plain = nullptr;
    const HeldRun* held = nullptr;
    for (const auto& run : runs) {
      if (run.system != "quick-pg" || run.tenants != tenants) continue;
      (run.held ? held : plain) = &run;
    }
    if (!plain || !held) continue;
    double worst_ratio = 1e9, worst_p99 = 0;
    for (std::size_t i = 0; i < held->windows.size() && i < plain->windows.size(); ++i) {
      worst_ratio = std::min(worst_ratio, held->windows[i].done_per_s / std::max(1.0, plain->windows[i].done_per_s));
      worst_p99 = std::max(worst_p99, held->windows[i].e2e.p99_ms / std::max(0.001, plain->windows[i].e2e.p99_ms));
    }
    const std::string who = "quick-pg, " + std::to_string(tenants) + " tenant(s), snapshot held";
    ctx.results->add_target(
        {"held_snapshot", who + ": worst window throughput / without", worst_ratio, ">= 0.9", worst_ratio >= 0.9});
    ctx.results->add_target(
        {"held_snapshot", who + ": worst window p99 / without", worst_p99, "<= 2", worst_p99 <= 2.0});
  }
}

}  // namespace

QUICK_BENCH_EXPERIMENT(95, "held_snapshot",
                       "1,000 jobs/s with and without a held REPEATABLE READ snapshot: per-10-s windows, table sizes",
                       run_held_snapshot);

}  // namespace quick::bench
