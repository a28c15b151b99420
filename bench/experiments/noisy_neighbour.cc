// Experiment: the noisy neighbour. Tenant A has a backlog of 20,000 jobs of ~5 ms each; tenant B
// enqueues one job every 100 ms for 20 s; 4 workers. Measured: B's pickup latency (vesting =
// enqueue -> handler start) and A's throughput during B's window, for quick-pg (one consumer,
// worker.threads = 4, every other setting at its default: no priorities, no per-tenant settings)
// and for the baseline SKIP LOCKED queue with 4 worker connections, batch 1 and batch 10.
//
// Every job, A's and B's, sleeps 5 ms in its handler (a sleep, not a busy-wait: the machine's
// cores are shared with Postgres, and a spinning handler would steal them from the queue under
// test). So 4 workers can run at most 800 jobs/s.
//
// The baseline is FIFO (ORDER BY priority, run_at): B's jobs queue behind A's whole backlog. So
// for the baseline the run goes on after B's window until B's last job has started.
//
// Targets: quick-pg's B p99 pickup latency <= 25 ms; quick-pg's A throughput >= 95% of the
// baseline's (batch 1, the baseline the issue names; batch 10 is reported next to it).
//
// Experiment long_jobs (issue 19, fairness by processing time): the same, with A's jobs 100 times
// longer than B's (50 ms and 0.5 ms), quick-pg only: A alone first (its throughput alone), then A
// and B with one consumer and with two. Targets: B p99 <= 10 ms, A >= 0.7x its rate alone.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

#include "quick/producer.h"
#include "support/baseline_queue.h"
#include "support/bench_database.h"
#include "support/experiment.h"
#include "support/latency_recorder.h"
#include "support/quick_pool.h"
#include "support/scheduled_load.h"
#include "support/two_tenant_run.h"

namespace quick::bench {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr const char* kJobType = "sleep5ms";
constexpr const char* kTenantA = "A";
constexpr const char* kTenantB = "B";
constexpr milliseconds kBInterval{100};
constexpr int kWorkers = 4;


// What the handlers of both systems record. Handlers run on many threads.
struct Tally {
  std::chrono::microseconds a_job{5000};  // how long each of A's jobs sleeps
  std::chrono::microseconds b_job{5000};  // and each of B's
  std::atomic<std::uint64_t> a_done{0};
  std::atomic<std::uint64_t> b_started{0};
  std::mutex mutex;
  struct BSample {
    std::int64_t id;
    double from_due_ms, from_statement_ms;
    bool operator<(const BSample& other) const { return id < other.id; }
  };
  std::vector<BSample> b_latency;  // guarded by mutex

  // One job: B's pickup latency is recorded at handler start, from the due time its payload names
  // (support/scheduled_load.h) and from its enqueue statement (`waited`, the vesting time); then
  // the job's work (a sleep).
  void run_job(const std::string& tenant, std::int64_t id, std::chrono::microseconds waited,
               const std::string& payload) {
    const bool is_b = tenant == kTenantB;
    if (is_b) {
      const auto from_due = since_due(payload, Clock::now()).value_or(waited);
      std::lock_guard<std::mutex> lock(mutex);
      b_latency.push_back(
          {id, static_cast<double>(from_due.count()) / 1000.0, static_cast<double>(waited.count()) / 1000.0});
      b_started.fetch_add(1);
    }
    std::this_thread::sleep_for(is_b ? b_job : a_job);
    if (!is_b) a_done.fetch_add(1);
  }
};

NewItem job_item(const std::string& tenant, const std::string& payload) {
  NewItem item;
  item.tenant = tenant;
  item.job_type = kJobType;
  item.payload = payload;
  return item;
}

struct Sizes {
  int a_backlog;
  int b_jobs;            // one every 100 ms
  milliseconds warm_up;  // consumers run A alone this long before B starts
  std::chrono::microseconds a_job{5000};
  std::chrono::microseconds b_job{5000};
  bool b_sends = true;  // false: the window runs with A alone (B enqueues nothing)
  int b_priority = 0;   // the baseline's priority for B's jobs (lower runs first)
};

// B's window, the same for both systems: `enqueue_b(payload)` commits one job on B's own
// connection every 100 ms, on a fixed schedule (run_schedule: a slow commit does not stretch the
// window, and the jobs due meanwhile go out at once), each job's payload naming its due time, so
// that B's latency counts from it: a sender behind its schedule counts. A's throughput is counted
// over the window; then waits until every B job sent has started.
// `errors()` is the queue's database errors since it started. The run is incomplete (its targets
// not met) when a B job was not sent or never started, the queue had errors, or A's backlog ran
// out during the window.
TwoTenantRun run_window(ExperimentContext& ctx, const std::string& system, const Sizes& sizes, Tally& tally,
                        const std::function<void(const std::string&)>& enqueue_b,
                        const std::function<std::uint64_t()>& errors) {
  std::this_thread::sleep_for(sizes.warm_up);
  TwoTenantRun run;
  run.system = system;
  run.b_jobs = sizes.b_sends ? sizes.b_jobs : 0;
  const std::uint64_t a_before = tally.a_done.load();
  const auto start = Clock::now();
  if (run.b_jobs > 0) {
    const double rate = 1000.0 / static_cast<double>(kBInterval.count());
    const auto schedule = run_schedule(1, rate, static_cast<double>(run.b_jobs) / rate, [&](int) {
      return [&](Clock::time_point due) { enqueue_b(due_payload(due)); };
    });
    run.b_jobs = static_cast<int>(schedule.scheduled);
    run.b_sent = static_cast<int>(schedule.sent);
    run.b_send_error = schedule.first_error;
    run.b_lag = schedule.lag;
  }
  std::this_thread::sleep_until(start + sizes.b_jobs * kBInterval);
  run.window_s = std::chrono::duration<double>(Clock::now() - start).count();
  const std::uint64_t a_done = tally.a_done.load();
  run.a_in_window = a_done - a_before;
  run.a_ran_out = a_done >= static_cast<std::uint64_t>(sizes.a_backlog);
  if (!wait_until_count([&] { return tally.b_started.load(); }, static_cast<std::uint64_t>(run.b_sent),
                        std::chrono::seconds(300))) {
    ctx.progress(system + ": B's jobs did not all start within 5 minutes");
  }
  run.errors = errors();
  run.b_last_start_s = std::chrono::duration<double>(Clock::now() - start).count();
  std::lock_guard<std::mutex> lock(tally.mutex);
  // Ids grow in enqueue order, and B enqueues one job at a time: sorting by id gives B's sequence.
  auto samples = tally.b_latency;
  std::sort(samples.begin(), samples.end());
  LatencyRecorder from_due, from_statement;
  const auto us = [](double ms) { return std::chrono::microseconds(static_cast<std::int64_t>(ms * 1000.0)); };
  for (const auto& sample : samples) {
    run.b_by_seq_ms.push_back(sample.from_due_ms);
    from_due.record(us(sample.from_due_ms));
    from_statement.record(us(sample.from_statement_ms));
  }
  run.b = from_due.summary();
  run.b_from_statement = from_statement.summary();
  const std::string b_text = run.b_jobs == 0
                                 ? std::string()
                                 : "B pickup from the due time p50 " + fixed(run.b.p50_ms, 1) + " ms, p99 " +
                                       fixed(run.b.p99_ms, 1) + " ms, max " + fixed(run.b.max_ms, 1) +
                                       " ms (from the enqueue statement p99 " + fixed(run.b_from_statement.p99_ms, 1) +
                                       " ms; B's sender behind its schedule max " + fixed(run.b_lag.max_ms, 1) +
                                       " ms); ";
  ctx.progress(system + ": " + b_text + "A " + fixed(run.a_per_second(), 0) + " jobs/s" +
               (run.complete() ? "" : "; INCOMPLETE: " + run.problems()));
  return run;
}

TwoTenantRun run_quick(ExperimentContext& ctx, const Sizes& sizes, int consumers = 1,
                       const std::string& system = "quick-pg") {
  ScratchDatabase db(ctx.server_url, "quick_bench_noisy");
  auto conn = db.connect();
  {
    std::vector<NewItem> batch;
    for (int i = 0; i < sizes.a_backlog; ++i) {
      batch.push_back(job_item(kTenantA, R"({"n":)" + std::to_string(i) + "}"));
      if (batch.size() == 1000 || i + 1 == sizes.a_backlog) {
        pqxx::work txn(*conn);
        enqueue_batch_in(txn, batch);
        txn.commit();
        batch.clear();
      }
    }
  }
  db.vacuum();
  ConsumerConfig config = bench_consumer_config(db.url());
  config.worker.threads = kWorkers;  // everything else at the library defaults
  Tally tally;
  tally.a_job = sizes.a_job;
  tally.b_job = sizes.b_job;
  QuickPool pool(config, consumers, {kJobType}, [&tally](JobContext& job) {
    tally.run_job(job.item().tenant, job.item().id, job.waited(), job.item().payload);
    return JobResult::done();
  });
  pool.start();
  auto run = run_window(
      ctx, system, sizes, tally,
      [&](const std::string& payload) {
        pqxx::work txn(*conn);
        enqueue_in(txn, job_item(kTenantB, payload));
        txn.commit();
      },
      [&pool] { return pool.total_stats().database_errors; });
  pool.stop();
  run.connections = consumers * connections_per_consumer(config);
  return run;
}

TwoTenantRun run_baseline(ExperimentContext& ctx, const Sizes& sizes, int batch, const std::string& system = "") {
  ScratchDatabase db(ctx.server_url, "quick_bench_noisy");
  auto conn = db.connect();
  create_baseline_schema(*conn);
  {
    std::vector<BaselineJob> jobs;
    for (int i = 0; i < sizes.a_backlog; ++i) {
      jobs.push_back(BaselineJob{kTenantA, R"({"n":)" + std::to_string(i) + "}", 0});
      if (jobs.size() == 1000 || i + 1 == sizes.a_backlog) {
        pqxx::work txn(*conn);
        enqueue_baseline(txn, jobs);
        txn.commit();
        jobs.clear();
      }
    }
  }
  db.exec("VACUUM ANALYZE bench_baseline.jobs");
  Tally tally;
  tally.a_job = sizes.a_job;
  tally.b_job = sizes.b_job;
  BaselinePool pool(BaselinePool::Options{
      db.url(), kWorkers, batch,
      [&tally](const ClaimedJob& job) { tally.run_job(job.tenant, job.id, job.waited, job.payload); }, milliseconds(5),
      /*with_payload=*/true});
  pool.start();
  auto run = run_window(
      ctx, system.empty() ? "baseline-b" + std::to_string(batch) : system, sizes, tally,
      [&](const std::string& payload) {
        pqxx::work txn(*conn);
        enqueue_baseline(txn, {BaselineJob{kTenantB, payload, sizes.b_priority}});
        txn.commit();
      },
      [&pool] { return pool.errors(); });
  pool.stop();
  run.connections = kWorkers;
  return run;
}

// B's latencies of every run in enqueue order, as CSV rows (system, seq, latency_ms).
std::vector<std::vector<std::string>> b_latency_rows(const std::vector<TwoTenantRun>& runs) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& run : runs) {
    for (std::size_t seq = 0; seq < run.b_by_seq_ms.size(); ++seq) {
      rows.push_back({run.system, std::to_string(seq), fixed(run.b_by_seq_ms[seq], 3)});
    }
  }
  return rows;
}

void run_noisy_neighbour(ExperimentContext& ctx) {
  // A's backlog must outlast the warm-up plus B's window at 800 jobs/s (here 1 s + 20 s = 16,800
  // jobs at most), so that B always competes with a busy neighbour.
  const Sizes sizes{ctx.size(20000, 2000), ctx.size(200, 20), milliseconds(ctx.quick ? 300 : 1000)};
  std::vector<TwoTenantRun> runs;
  runs.push_back(run_quick(ctx, sizes));
  runs.push_back(run_baseline(ctx, sizes, 1));
  runs.push_back(run_baseline(ctx, sizes, 10));
  const TwoTenantRun& quick = runs[0];
  const TwoTenantRun& base1 = runs[1];
  const TwoTenantRun& base10 = runs[2];

  std::vector<std::vector<std::string>> summary, table;
  for (const auto& run : runs) {
    summary.push_back({run.system, std::to_string(run.connections), std::to_string(run.b.count), fixed(run.b.p50_ms, 2),
                       fixed(run.b.p99_ms, 2), fixed(run.b.max_ms, 2), std::to_string(run.a_in_window),
                       fixed(run.window_s, 3), fixed(run.a_per_second(), 1), fixed(run.b_last_start_s, 2),
                       std::to_string(run.b_sent), std::to_string(run.errors), run.complete() ? "1" : "0",
                       fixed(run.b_from_statement.p99_ms, 2), fixed(run.b_lag.max_ms, 2)});
    table.push_back({run.label(), std::to_string(run.connections), fixed(run.b.p50_ms, 1), fixed(run.b.p99_ms, 1),
                     fixed(run.b.max_ms, 1), fixed(run.b_from_statement.p99_ms, 1), fixed(run.b_lag.max_ms, 1),
                     fixed(run.a_per_second(), 0), fixed(run.a_per_second() / base1.a_per_second(), 3)});
  }
  ctx.results->write_csv("noisy_neighbour.csv",
                         {"system", "connections", "b_jobs", "b_p50_ms", "b_p99_ms", "b_max_ms", "a_jobs_in_window",
                          "window_s", "a_jobs_per_s", "b_last_start_s", "b_jobs_sent", "database_errors", "complete",
                          "b_p99_from_statement_ms", "b_sender_lag_max_ms"},
                         summary);
  ctx.results->write_csv("noisy_neighbour_b_latency.csv", {"system", "seq", "latency_ms"}, b_latency_rows(runs));

  const double a_ratio = quick.a_per_second() / base1.a_per_second();
  ctx.results->add_section(
      "## Noisy neighbour\n\nTenant A starts with a backlog of " + std::to_string(sizes.a_backlog) + " jobs; after " +
      fixed(static_cast<double>(sizes.warm_up.count()) / 1000.0, 1) + " s, tenant B enqueues one job every 100 ms (" +
      std::to_string(sizes.b_jobs) +
      " jobs, one per transaction, on its own connection). Every job sleeps 5 ms, so 4 workers run at most 800 "
      "jobs/s. quick-pg: one consumer, `worker.threads` = 4, all other settings at their defaults (no priorities, "
      "no per-tenant settings). Baseline: 4 worker connections, `ORDER BY priority, run_at ... FOR UPDATE SKIP "
      "LOCKED`, batch 1 and batch 10. B's pickup latency is from each job's due time on B's 100 ms schedule "
      "(its payload names it) to handler start, so that a sender behind its schedule counts; *from the statement*: "
      "p99 from the enqueue statement (vesting, `JobContext::waited()`, `ClaimedJob::waited`), which leaves that "
      "out; *sender lag*: how late B's sender started an enqueue at most. A's throughput counts A's jobs finished "
      "during B's window. A run with B's jobs not all sent or started, database errors or A's backlog used up is "
      "marked INCOMPLETE and meets no target.\n\n" +
      markdown_table({"system", "connections", "B p50 ms", "B p99 ms", "B max ms", "B p99 from the statement ms",
                      "B sender lag max ms", "A jobs/s", "A vs baseline b1"},
                     table) +
      "\nquick-pg does not queue B behind A: B's enqueue pulls B's pointer forward, the next scan selects it "
      "next to A's, and the Workers take buffered items round robin over zones, so B's job typically waits for a "
      "scan, a visit and one of A's 5 ms jobs to end. The baseline serves jobs in `run_at` order, so each of B's "
      "jobs waits for all of A's backlog queued before it: B's last job started " +
      fixed(base1.b_last_start_s, 1) + " s (batch 1) and " + fixed(base10.b_last_start_s, 1) +
      " s (batch 10) after B's first enqueue. A's throughput is bounded by 800 jobs/s (4 workers x 5 ms); the "
      "baseline's per-job claim and delete transaction (batch 1) costs part of it.\n\n"
      "![noisy neighbour](noisy_neighbour.png)\n");
  // A run that broke (a B job missing, database errors, A's backlog used up) meets no target.
  const auto incomplete = [](const TwoTenantRun& run) {
    return run.complete() ? std::string() : " (" + run.system + " INCOMPLETE: " + run.problems() + ")";
  };
  ctx.results->add_target({"noisy_neighbour", "quick-pg B p99 pickup latency (ms)" + incomplete(quick), quick.b.p99_ms,
                           "<= 25 ms", quick.complete() && quick.b.p99_ms <= 25.0});
  ctx.results->add_target({"noisy_neighbour",
                           "quick-pg A throughput / baseline batch 1" + incomplete(quick) + incomplete(base1), a_ratio,
                           ">= 0.95", quick.complete() && base1.complete() && a_ratio >= 0.95});
  ctx.progress("A throughput quick-pg / baseline b10: " + fixed(quick.a_per_second() / base10.a_per_second(), 3));
}

void run_long_jobs(ExperimentContext& ctx) {
  // A's backlog must outlast the runs: at most 4 (8 with two consumers) x 20 jobs/s for 1 s + 20 s.
  Sizes sizes{ctx.size(4000, 400), ctx.size(200, 20), milliseconds(ctx.quick ? 300 : 1000),
              std::chrono::microseconds(50000), std::chrono::microseconds(500)};
  Sizes alone = sizes;
  alone.b_sends = false;
  std::vector<TwoTenantRun> runs;
  runs.push_back(run_quick(ctx, alone, 1, "A-alone-1-consumer"));
  runs.push_back(run_quick(ctx, sizes, 1, "A+B-1-consumer"));
  runs.push_back(run_quick(ctx, alone, 2, "A-alone-2-consumers"));
  runs.push_back(run_quick(ctx, sizes, 2, "A+B-2-consumers"));
  // The plain SKIP LOCKED queue beside it, 4 workers, with B's jobs at a higher priority than A's
  // (as a user of a FIFO queue would set it): B waits for one of A's jobs to end.
  Sizes prioritized = sizes;
  prioritized.b_priority = -1;
  runs.push_back(run_baseline(ctx, alone, 1, "baseline-b1-A-alone"));
  runs.push_back(run_baseline(ctx, prioritized, 1, "baseline-b1-A+B-B-first"));

  std::vector<std::vector<std::string>> table, summary;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const auto& run = runs[i];
    const auto& base = runs[i - i % 2];  // the same consumers with A alone
    const bool with_b = i % 2 == 1;
    table.push_back({run.label(), std::to_string(run.connections), with_b ? fixed(run.b.p50_ms, 1) : "-",
                     with_b ? fixed(run.b.p99_ms, 1) : "-", with_b ? fixed(run.b.max_ms, 1) : "-",
                     with_b ? fixed(run.b_from_statement.p99_ms, 1) : "-", with_b ? fixed(run.b_lag.max_ms, 1) : "-",
                     fixed(run.a_per_second(), 1), fixed(run.a_per_second() / base.a_per_second(), 3)});
    summary.push_back({run.system, std::to_string(run.connections), std::to_string(run.b.count), fixed(run.b.p50_ms, 2),
                       fixed(run.b.p99_ms, 2), fixed(run.b.max_ms, 2), fixed(run.a_per_second(), 2),
                       fixed(run.a_per_second() / base.a_per_second(), 3), std::to_string(run.b_sent),
                       std::to_string(run.errors), run.complete() ? "1" : "0", fixed(run.b_from_statement.p99_ms, 2),
                       fixed(run.b_lag.max_ms, 2)});
  }
  ctx.results->write_csv(
      "long_jobs.csv",
      {"system", "connections", "b_jobs", "b_p50_ms", "b_p99_ms", "b_max_ms", "a_jobs_per_s", "a_vs_alone",
       "b_jobs_sent", "database_errors", "complete", "b_p99_from_statement_ms", "b_sender_lag_max_ms"},
      summary);
  ctx.results->write_csv("long_jobs_b_latency.csv", {"system", "seq", "latency_ms"}, b_latency_rows(runs));
  ctx.results->add_section(
      "## Long jobs beside short ones\n\nTenant A has a backlog of 50 ms jobs; tenant B sends a 0.5 ms job every "
      "100 ms (" +
      std::to_string(sizes.b_jobs) +
      " jobs); 4 workers per consumer, everything else at the defaults. Each configuration runs once with A alone "
      "(its throughput alone) and once with B beside it. The baseline: the SKIP LOCKED queue, 4 workers claiming "
      "one job at a time, B's jobs at a higher priority than A's. B's latency as in the noisy neighbour: from each "
      "job's due time, the p99 from the enqueue statement beside it; incomplete runs are marked and meet no "
      "target.\n\n" +
      markdown_table({"run", "connections", "B p50 ms", "B p99 ms", "B max ms", "B p99 from the statement ms",
                      "B sender lag max ms", "A jobs/s", "A vs alone"},
                     table) +
      "\n![long jobs](long_jobs.png)\n");
  // A run that broke (a B job missing, database errors, A's backlog used up) meets no target.
  const auto incomplete = [](const TwoTenantRun& run) {
    return run.complete() ? std::string() : " (" + run.system + " INCOMPLETE: " + run.problems() + ")";
  };
  for (const std::size_t i : {std::size_t{1}, std::size_t{3}}) {
    const auto& with_b = runs[i];
    const auto& alone_run = runs[i - 1];
    const double ratio = with_b.a_per_second() / alone_run.a_per_second();
    ctx.results->add_target({"long_jobs", with_b.system + " B p99 pickup latency (ms)" + incomplete(with_b),
                             with_b.b.p99_ms, "<= 10 ms", with_b.complete() && with_b.b.p99_ms <= 10.0});
    ctx.results->add_target({"long_jobs",
                             with_b.system + " A throughput / A alone" + incomplete(with_b) + incomplete(alone_run),
                             ratio, ">= 0.7", with_b.complete() && alone_run.complete() && ratio >= 0.7});
  }
}

}  // namespace

QUICK_BENCH_OPT_IN_EXPERIMENT(51, "long_jobs",
                              "tenant A's 50 ms jobs vs tenant B's 0.5 ms job every 100 ms, one and two consumers: B's "
                              "pickup latency, A's throughput against A alone",
                              run_long_jobs);

QUICK_BENCH_EXPERIMENT(50, "noisy_neighbour",
                       "tenant A's 20,000-job backlog vs tenant B's job every 100 ms: B's pickup latency, A's "
                       "throughput",
                       run_noisy_neighbour);

}  // namespace quick::bench
