#include "support/windowed_load.h"

#include <algorithm>
#include <random>
#include <thread>

#include "support/load.h"
#include "support/results_folder.h"
#include "support/scheduled_load.h"

namespace quick::bench {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds kTick{5};

std::string kb(long long bytes) { return std::to_string(bytes / 1024); }

// One producer thread's loop until `end`: open (rate > 0, its share of what is due each tick) or
// closed (one job per transaction, as fast as it can).
void produce(LoadedSystem& system, pqxx::connection& conn, const LoadShape& shape, int index, Clock::time_point start,
             Clock::time_point end, std::atomic<long long>& enqueued, LatencyRecorder& lag,
             const std::function<void(const char*)>& failed) {
  std::mt19937 random(2000 + static_cast<unsigned>(index));
  std::uniform_int_distribution<int> tenant(0, shape.tenants - 1);
  auto send = [&](const std::vector<LoadJob>& batch) {
    try {
      system.enqueue(conn, batch);
      enqueued.fetch_add(static_cast<long long>(batch.size()));
    } catch (const std::exception& error) {
      failed(error.what());
      // A closed loop would otherwise spin on a persistent error (a broken connection), taking
      // the cores from the system under test; the run reports the errors.
      std::this_thread::sleep_for(milliseconds(10));
    }
  };
  if (shape.rate <= 0) {
    while (Clock::now() < end) send({{tenant_name(tenant(random)), due_payload(Clock::now())}});
    return;
  }
  // Each tick's jobs are due at the tick; the ticks missed while a commit was slow go out in the
  // next commit, still due at their own ticks.
  const double per_thread = shape.rate / shape.producers;
  long sent = 0;
  run_ticks(
      start, end, kTick,
      [&](const std::vector<Clock::time_point>& ticks) {
        std::vector<LoadJob> batch;
        for (const auto tick : ticks) {
          const std::string payload = due_payload(tick);
          for (const long due = due_by_tick(per_thread, kTick, tick - start); sent < due; ++sent)
            batch.push_back({tenant_name(tenant(random)), payload});
        }
        if (!batch.empty()) send(batch);
      },
      lag);
}

}  // namespace

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

void TimedLatencies::record(Clock::time_point at, std::chrono::microseconds from_due,
                            std::chrono::microseconds from_statement) {
  std::lock_guard<std::mutex> lock(mutex_);
  samples_.push_back({at, from_due, from_statement});
}

Percentiles TimedLatencies::window(Clock::time_point from, Clock::time_point to,
                                   std::chrono::microseconds Sample::*latency) const {
  LatencyRecorder recorder;
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& s : samples_) {
    if (s.at >= from && s.at < to) recorder.record(s.*latency);
  }
  return recorder.summary();
}

Percentiles TimedLatencies::between(Clock::time_point from, Clock::time_point to) const {
  return window(from, to, &Sample::from_due);
}

Percentiles TimedLatencies::statement_between(Clock::time_point from, Clock::time_point to) const {
  return window(from, to, &Sample::from_statement);
}

WindowedRun run_windowed(ExperimentContext& ctx, const ScratchDatabase& db, LoadedSystem& system, TimedLatencies& e2e,
                         std::atomic<bool>& measuring, const LoadShape& shape) {
  WindowedRun run;
  run.system = system.name;
  run.tenants = shape.tenants;
  run.held = shape.held_snapshot;
  db.vacuum();
  system.start();
  auto sizes_conn = db.connect();
  std::unique_ptr<pqxx::connection> holder;
  std::unique_ptr<pqxx::nontransaction> holder_session;
  if (shape.held_snapshot) {
    holder = db.connect();
    holder_session = std::make_unique<pqxx::nontransaction>(*holder);
    holder_session->exec("BEGIN ISOLATION LEVEL REPEATABLE READ");
    holder_session->exec("SELECT 1 FROM " + system.main_table + " LIMIT 1");
  }
  ctx.progress(run.label() + ": " +
               (shape.rate > 0 ? fixed(shape.rate, 0) + " jobs/s" : "one job per transaction as fast as they can") +
               " from " + std::to_string(shape.producers) + " producers for " +
               fixed(static_cast<double>(shape.duration.count()) / 1000.0, 0) + " s" +
               (!shape.held_snapshot         ? ""
                : shape.hold_for.count() > 0 ? ", a REPEATABLE READ snapshot held for the first " +
                                                   fixed(static_cast<double>(shape.hold_for.count()) / 1000.0, 0) + " s"
                                             : ", a REPEATABLE READ snapshot held throughout"));

  measuring.store(true);
  const std::uint64_t done_before = system.done();
  std::atomic<long long> enqueued{0};
  std::atomic<int> producer_errors{0};
  LatencyRecorder lag;
  const auto start = Clock::now();
  const auto end = start + shape.duration;
  std::vector<std::thread> producers;
  // Joins the producers however the windows below end: a read of the table sizes that fails (the
  // server went away) must not destroy running threads, which aborts the whole bench.
  struct JoinOnExit {
    std::vector<std::thread>& threads;
    ~JoinOnExit() {
      for (auto& thread : threads) {
        if (thread.joinable()) thread.join();
      }
    }
  } join_producers{producers};
  for (int p = 0; p < shape.producers; ++p) {
    producers.emplace_back([&, p] {
      auto failed = [&](const char* what) {
        if (producer_errors.fetch_add(1) == 0) ctx.progress(run.label() + ": producer error: " + what);
      };
      try {  // nothing may escape a thread
        auto conn = db.connect();
        produce(system, *conn, shape, p, start, end, enqueued, lag, failed);
      } catch (const std::exception& error) {
        failed(error.what());
      }
    });
  }
  // Ends the held snapshot (once) and says so.
  auto release_snapshot = [&] {
    if (!holder_session) return;
    holder_session->exec("COMMIT");
    holder_session.reset();
    run.released_s = std::chrono::duration<double>(Clock::now() - start).count();
    ctx.progress(run.label() + ": the snapshot ended at " + fixed(run.released_s, 0) + " s");
    if (shape.after_snapshot) shape.after_snapshot();
  };
  const auto windows = static_cast<int>(shape.duration / shape.window);
  long long last_enqueued = 0, last_done = 0;
  auto last_end = start;
  for (int w = 1; w <= windows; ++w) {
    const auto window_end = start + w * shape.window;
    std::this_thread::sleep_until(window_end);
    LoadWindow row;
    row.t_s = std::chrono::duration<double>(window_end - start).count();
    const long long now_enqueued = enqueued.load();
    const auto now_done = static_cast<long long>(system.done() - done_before);
    const double seconds = std::chrono::duration<double>(shape.window).count();
    row.enqueued_per_s = static_cast<double>(now_enqueued - last_enqueued) / seconds;
    row.done_per_s = static_cast<double>(now_done - last_done) / seconds;
    row.e2e = e2e.between(last_end, window_end);
    row.main_table = table_size(*sizes_conn, system.main_table);
    row.side_table = table_size(*sizes_conn, system.side_table);
    ctx.progress(run.label() + ": " + fixed(row.t_s, 0) + " s: enqueued " + fixed(row.enqueued_per_s, 0) + "/s, done " +
                 fixed(row.done_per_s, 0) + "/s, p50 " + fixed(row.e2e.p50_ms, 1) + " ms, p99 " +
                 fixed(row.e2e.p99_ms, 1) + " ms; " + system.main_table + " " + kb(row.main_table.heap_bytes) +
                 " kB + indexes " + kb(row.main_table.index_bytes) + " kB, dead " +
                 std::to_string(row.main_table.dead_tuples));
    run.windows.push_back(row);
    last_enqueued = now_enqueued;
    last_done = now_done;
    last_end = window_end;
    if (shape.after_window) shape.after_window(w, windows, row);
    if (shape.hold_for.count() > 0 && window_end - start >= shape.hold_for) release_snapshot();
  }
  for (auto& thread : producers) thread.join();  // here, before the totals (JoinOnExit then has none left)
  run.seconds = std::chrono::duration<double>(end - start).count();
  run.enqueued = enqueued.load();
  run.done_in_run = static_cast<long long>(system.done() - done_before);
  run.producer_errors = producer_errors.load();
  release_snapshot();
  const auto finished = wait_until_count([&] { return system.done() - done_before; },
                                         static_cast<std::uint64_t>(run.enqueued), std::chrono::minutes(2));
  run.finish_s = finished ? finished->count() : -1;
  system.stop();
  run.setup_timed_out = system.setup_timed_out;
  if (system.errors) run.errors = system.errors();
  measuring.store(false);
  const auto stopped = Clock::now();
  run.e2e = e2e.between(start, stopped);
  run.from_statement = e2e.statement_between(start, stopped);
  run.producer_lag = lag.summary();
  ctx.progress(run.label() + ": offered " + fixed(run.offered(), 0) + " jobs/s, done " + fixed(run.throughput(), 0) +
               "/s; e2e from the due time p50 " + fixed(run.e2e.p50_ms, 1) + " ms, p99 " + fixed(run.e2e.p99_ms, 1) +
               " ms (from the enqueue statement p99 " + fixed(run.from_statement.p99_ms, 1) + " ms" +
               (shape.rate > 0 ? "; producers behind their ticks p99 " + fixed(run.producer_lag.p99_ms, 1) +
                                     " ms, max " + fixed(run.producer_lag.max_ms, 1) + " ms"
                               : "") +
               ")" + (run.complete() ? "" : "; INCOMPLETE: " + run.problems()));
  if (system.describe_work) ctx.progress(run.label() + ": " + system.describe_work());
  return run;
}

std::vector<std::string> windowed_csv_header() {
  return {"run",
          "system",
          "tenants",
          "held",
          "t_s",
          "enqueued_per_s",
          "done_per_s",
          "e2e_n",
          "e2e_p50_ms",
          "e2e_p99_ms",
          "e2e_max_ms",
          "main_heap_bytes",
          "main_index_bytes",
          "main_dead_tuples",
          "main_live_tuples",
          "side_heap_bytes",
          "side_index_bytes",
          "side_dead_tuples"};
}

std::vector<std::vector<std::string>> windowed_csv_rows(const std::vector<WindowedRun>& runs) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& run : runs) {
    for (const auto& w : run.windows) {
      rows.push_back({run.label(), run.system, std::to_string(run.tenants), run.held ? "1" : "0", fixed(w.t_s, 0),
                      fixed(w.enqueued_per_s, 1), fixed(w.done_per_s, 1), std::to_string(w.e2e.count),
                      fixed(w.e2e.p50_ms, 2), fixed(w.e2e.p99_ms, 2), fixed(w.e2e.max_ms, 2),
                      std::to_string(w.main_table.heap_bytes), std::to_string(w.main_table.index_bytes),
                      std::to_string(w.main_table.dead_tuples), std::to_string(w.main_table.live_tuples),
                      std::to_string(w.side_table.heap_bytes), std::to_string(w.side_table.index_bytes),
                      std::to_string(w.side_table.dead_tuples)});
    }
  }
  return rows;
}

std::string windowed_summary_markdown(const std::vector<WindowedRun>& runs) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& run : runs) {
    rows.push_back({run.marked_system(), std::to_string(run.tenants), run.held ? "held" : "none",
                    fixed(run.offered(), 0), fixed(run.throughput(), 0), fixed(run.e2e.p50_ms, 1),
                    fixed(run.e2e.p99_ms, 1), fixed(run.e2e.max_ms, 1), fixed(run.from_statement.p99_ms, 1),
                    run.producer_lag.count > 0 ? fixed(run.producer_lag.max_ms, 1) : "-", fixed(run.finish_s, 1)});
  }
  return markdown_table({"system", "tenants", "snapshot", "offered/s", "done/s", "e2e p50 ms", "e2e p99 ms",
                         "e2e max ms", "from the statement p99 ms", "producer lag max ms", "finish s"},
                        rows);
}

std::string windowed_markdown(const std::vector<WindowedRun>& runs) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& run : runs) {
    for (const auto& w : run.windows) {
      rows.push_back({run.label(), fixed(w.t_s, 0), fixed(w.enqueued_per_s, 0), fixed(w.done_per_s, 0),
                      fixed(w.e2e.p50_ms, 1), fixed(w.e2e.p99_ms, 1), kb(w.main_table.heap_bytes),
                      kb(w.main_table.index_bytes), std::to_string(w.main_table.dead_tuples),
                      kb(w.side_table.heap_bytes), kb(w.side_table.index_bytes),
                      std::to_string(w.side_table.dead_tuples)});
    }
  }
  return markdown_table({"run", "t s", "enqueued/s", "done/s", "p50 ms", "p99 ms", "main kB", "main idx kB",
                         "main dead", "side kB", "side idx kB", "side dead"},
                        rows);
}

}  // namespace quick::bench
