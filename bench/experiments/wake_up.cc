// Experiment: wake-up without polling (docs/consumer.md#waking-up). Three measurements:
//   1. A steady 1,000 jobs/s (2 producer threads, each committing one job per transaction on a
//      fixed schedule, over 1,000 tenants) into one consumer with 4 Workers: end-to-end latency
//      (the job's due time on the schedule -> handler start, support/scheduled_load.h, so that a
//      producer behind its schedule counts; and from the enqueue statement, as the item's vesting
//      time gives it) for quick-pg listening (the default), quick-pg polling every
//      20 ms (listening off: the behaviour before notifications) and the plain SKIP LOCKED
//      baseline (4 worker connections, each polling every 5 ms when it finds nothing).
//   2. An idle consumer on an empty queue: its processor time (this process) and scans per second,
//      listening and polling; and the baseline's 4 idle workers.
//   3. What a notification costs an enqueue: 4 clients enqueue single jobs, each into a new zone
//      (so every commit notifies), with notifications on and with quick.wake_consumers = off,
//      alternating.
// Targets (issue 16): e2e p99 <= 5 ms at 1,000 jobs/s; idle <= 1% of a core and <= 1 scan/s.
#include <atomic>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "quick/consumer.h"
#include "quick/database.h"
#include "quick/producer.h"
#include "support/baseline_queue.h"
#include "support/bench_database.h"
#include "support/experiment.h"
#include "support/latency_recorder.h"
#include "support/load.h"
#include "support/machine_cpu.h"
#include "support/scheduled_load.h"

namespace quick::bench {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr int kTenants = 1000;
constexpr int kProducers = 2;
constexpr double kRate = 1000;  // jobs/s over all producers

// Producers on a fixed schedule (open loop, support/scheduled_load.h), one job per transaction:
// `enqueue(conn, tenant, payload)` per job, the payload naming the job's due time.
ScheduleResult produce(
    const std::string& url, double seconds,
    const std::function<void(pqxx::connection&, const std::string& tenant, const std::string& payload)>& enqueue) {
  return run_schedule(kProducers, kRate, seconds, [&](int p) {
    auto conn = std::shared_ptr<pqxx::connection>(quick::connect(url));
    auto random = std::make_shared<std::mt19937>(static_cast<unsigned>(p + 7));
    return [conn, random, &enqueue](Clock::time_point due) {
      std::uniform_int_distribution<int> tenant(0, kTenants - 1);
      enqueue(*conn, tenant_name(tenant(*random)), due_payload(due));
    };
  });
}

struct LatencyRun {
  std::string system;
  ScheduleResult schedule;  // the producers: jobs sent, not sent, how late
  long done = 0;            // jobs run (each recorded once)
  Percentiles e2e;          // due time -> handler start
  Percentiles pickup;       // the enqueue statement (vesting) -> handler start
  double scans_per_s = 0;
  // The queue's database errors (quick-pg's database_errors, the baseline's failed claims): each
  // retried, so they only showed as higher latency.
  std::uint64_t errors = 0;
  // Every job due was enqueued and ran, without database errors: otherwise the percentiles leave
  // out the slowest, or measure a queue retrying.
  bool complete() const { return schedule.unsent == 0 && done == schedule.sent && errors == 0; }
  std::string problems() const {
    std::string text;
    if (schedule.unsent > 0)
      text += "; " + std::to_string(schedule.unsent) + " jobs not enqueued (" + schedule.first_error + ")";
    if (done < schedule.sent) text += "; " + std::to_string(schedule.sent - done) + " jobs never ran";
    if (errors > 0) text += "; " + std::to_string(errors) + " database errors";
    return text;
  }
};

// What the handlers of a latency run record: each job's latency from its due time (its payload)
// and from its enqueue statement, once.
struct Recorders {
  LatencyRecorder e2e, pickup;
  std::atomic<long> done{0};
  void record(const std::string& payload, std::chrono::microseconds waited) {
    e2e.record(since_due(payload, Clock::now()).value_or(waited));
    pickup.record(waited);
    ++done;
  }
};

ConsumerConfig consumer_config(const std::string& url, bool listening) {
  ConsumerConfig config = bench_consumer_config(url);
  config.worker.threads = 4;
  config.scanner.listen_for_wakeups = listening;
  return config;
}

// How quick-pg's producers enqueue: the one-call enqueue (one autocommit statement, which pulls a
// parked zone's pointer itself), or enqueue_in in a transaction of their own with the default
// options (a pull request, which the consumer applies in its next scan).
enum class Producer { kOneCall, kEnqueueIn };

LatencyRun steady_quick(ExperimentContext& ctx, bool listening, Producer producer, double seconds) {
  ScratchDatabase db(ctx.server_url, "quick_bench_wake_up");
  Recorders recorders;
  Consumer consumer(consumer_config(db.url(), listening));
  consumer.handle("job", [&](JobContext& job) {
    recorders.record(job.item().payload, job.waited());
    return JobResult::done();
  });
  consumer.start();
  std::this_thread::sleep_for(milliseconds(500));
  const auto scans_before = consumer.stats().scans;
  LatencyRun run;
  run.system = std::string(listening ? "quick-pg listening" : "quick-pg polling 20 ms") +
               (producer == Producer::kOneCall ? ", quick::enqueue" : ", enqueue_in");
  run.schedule = produce(db.url(), seconds,
                         [producer](pqxx::connection& conn, const std::string& tenant, const std::string& payload) {
                           NewItem item;
                           item.tenant = tenant;
                           item.job_type = "job";
                           item.payload = payload;
                           if (producer == Producer::kOneCall) {
                             enqueue(conn, item);
                             return;
                           }
                           pqxx::work txn(conn);
                           enqueue_in(txn, item);
                           txn.commit();
                         });
  run.scans_per_s = static_cast<double>(consumer.stats().scans - scans_before) / seconds;
  wait_until_count([&] { return static_cast<std::uint64_t>(recorders.done.load()); },
                   static_cast<std::uint64_t>(run.schedule.sent), std::chrono::seconds(30));
  consumer.stop();
  run.errors = consumer.stats().database_errors;
  run.done = recorders.done.load();
  run.e2e = recorders.e2e.summary();
  run.pickup = recorders.pickup.summary();
  return run;
}

LatencyRun steady_baseline(ExperimentContext& ctx, double seconds) {
  ScratchDatabase db(ctx.server_url, "quick_bench_wake_up");
  {
    auto conn = db.connect();
    create_baseline_schema(*conn);
  }
  Recorders recorders;
  BaselinePool::Options options;
  options.url = db.url();
  options.handler = [&](const ClaimedJob& job) { recorders.record(job.payload, job.waited); };
  options.with_payload = true;
  BaselinePool pool(options);
  pool.start();
  LatencyRun run;
  run.system = "baseline SKIP LOCKED (polling 5 ms)";
  run.schedule = produce(db.url(), seconds,
                         [](pqxx::connection& conn, const std::string& tenant, const std::string& payload) {
                           pqxx::work txn(conn);
                           enqueue_baseline(txn, {BaselineJob{tenant, payload}});
                           txn.commit();
                         });
  wait_until_count([&] { return pool.done(); }, static_cast<std::uint64_t>(run.schedule.sent),
                   std::chrono::seconds(30));
  pool.stop();
  run.errors = pool.errors();
  run.done = recorders.done.load();
  run.e2e = recorders.e2e.summary();
  run.pickup = recorders.pickup.summary();
  return run;
}

struct IdleRun {
  std::string system;
  double core_percent = 0;  // this process
  double scans_per_s = 0;   // quick-pg only
};

IdleRun idle_quick(ExperimentContext& ctx, bool listening, double seconds) {
  ScratchDatabase db(ctx.server_url, "quick_bench_wake_up");
  Consumer consumer(consumer_config(db.url(), listening));
  consumer.handle("job", [](JobContext&) { return JobResult::done(); });
  consumer.start();
  std::this_thread::sleep_for(milliseconds(1000));  // connected, first scans done
  const auto scans_before = consumer.stats().scans;
  const double cpu_before = own_cpu_seconds();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  IdleRun run{listening ? "quick-pg (listening)" : "quick-pg (polling 20 ms)",
              100 * (own_cpu_seconds() - cpu_before) / seconds,
              static_cast<double>(consumer.stats().scans - scans_before) / seconds};
  consumer.stop();
  return run;
}

IdleRun idle_baseline(ExperimentContext& ctx, double seconds) {
  ScratchDatabase db(ctx.server_url, "quick_bench_wake_up");
  {
    auto conn = db.connect();
    create_baseline_schema(*conn);
  }
  BaselinePool::Options options;
  options.url = db.url();
  options.handler = [](const ClaimedJob&) {};
  BaselinePool pool(options);
  pool.start();
  std::this_thread::sleep_for(milliseconds(1000));
  const double cpu_before = own_cpu_seconds();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  IdleRun run{"baseline SKIP LOCKED (4 workers polling 5 ms)", 100 * (own_cpu_seconds() - cpu_before) / seconds, 0};
  pool.stop();
  return run;
}

// Jobs/s of 4 clients enqueueing single jobs into new zones for `seconds`.
double new_zone_enqueue_rate(const std::string& url, bool notify, double seconds, int round) {
  std::atomic<long> jobs{0};
  std::vector<std::thread> threads;
  const auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  const auto start = Clock::now();
  for (int c = 0; c < 4; ++c) {
    threads.emplace_back([&, c] {
      try {
        auto conn = quick::connect(url);
        if (!notify) pqxx::nontransaction(*conn).exec("SET quick.wake_consumers = off");
        NewItem item;
        item.job_type = "job";
        for (long i = 0; Clock::now() < until; ++i) {
          item.tenant = "z" + std::to_string(round) + (notify ? "n" : "q") + std::to_string(c) + "-" +
                        std::to_string(i);
          pqxx::work txn(*conn);
          enqueue_in(txn, item);
          txn.commit();
          ++jobs;
        }
      } catch (const std::exception& e) {
        std::fprintf(stderr, "enqueuer: %s\n", e.what());
      }
    });
  }
  for (auto& t : threads) t.join();
  return static_cast<double>(jobs.load()) / std::chrono::duration<double>(Clock::now() - start).count();
}

void run_wake_up(ExperimentContext& ctx) {
  const double seconds = ctx.quick ? 2.0 : 10.0;
  std::vector<LatencyRun> latency{steady_quick(ctx, true, Producer::kOneCall, seconds),
                                  steady_quick(ctx, true, Producer::kEnqueueIn, seconds),
                                  steady_quick(ctx, false, Producer::kOneCall, seconds), steady_baseline(ctx, seconds)};
  std::vector<std::vector<std::string>> latency_rows, csv;
  for (const auto& run : latency) {
    ctx.progress(run.system + ": " + std::to_string(run.schedule.sent) + " jobs, e2e p50 " + fixed(run.e2e.p50_ms, 2) +
                 " ms, p99 " + fixed(run.e2e.p99_ms, 2) + " ms (from the enqueue statement " +
                 fixed(run.pickup.p99_ms, 2) + " ms; producers behind schedule by up to " +
                 fixed(run.schedule.lag.max_ms, 1) + " ms)" + run.problems());
    latency_rows.push_back({run.system, fixed(static_cast<double>(run.schedule.sent) / seconds, 0),
                            fixed(run.e2e.p50_ms, 2), fixed(run.e2e.p99_ms, 2), fixed(run.e2e.p999_ms, 2),
                            fixed(run.e2e.max_ms, 2), fixed(run.pickup.p99_ms, 2),
                            fixed(run.schedule.lag.p99_ms, 2) + " / " + fixed(run.schedule.lag.max_ms, 1),
                            run.system.rfind("quick", 0) == 0 ? fixed(run.scans_per_s, 0) : "",
                            run.complete() ? "" : "**" + run.problems().substr(2) + "**"});
    csv.push_back({"steady", run.system, fixed(run.e2e.p50_ms, 3), fixed(run.e2e.p99_ms, 3), fixed(run.e2e.max_ms, 3),
                   fixed(run.scans_per_s, 1)});
  }
  const double idle_seconds = ctx.quick ? 2.0 : 10.0;
  std::vector<IdleRun> idle{idle_quick(ctx, true, idle_seconds), idle_quick(ctx, false, idle_seconds),
                            idle_baseline(ctx, idle_seconds)};
  std::vector<std::vector<std::string>> idle_rows;
  for (const auto& run : idle) {
    ctx.progress(run.system + " idle: " + fixed(run.core_percent, 2) + "% of a core, " + fixed(run.scans_per_s, 1) +
                 " scans/s");
    idle_rows.push_back(
        {run.system, fixed(run.core_percent, 2), run.system.rfind("quick", 0) == 0 ? fixed(run.scans_per_s, 1) : ""});
    csv.push_back({"idle", run.system, fixed(run.core_percent, 3), "", "", fixed(run.scans_per_s, 2)});
  }

  ScratchDatabase db(ctx.server_url, "quick_bench_wake_up");
  const int rounds = ctx.quick ? 1 : 3;
  const double round_seconds = ctx.quick ? 1.0 : 3.0;
  double quiet = 0, notifying = 0;
  for (int round = 0; round < rounds; ++round) {
    quiet += new_zone_enqueue_rate(db.url(), false, round_seconds, round);
    notifying += new_zone_enqueue_rate(db.url(), true, round_seconds, round);
  }
  quiet /= rounds;
  notifying /= rounds;
  ctx.progress("new-zone enqueues: " + fixed(notifying, 0) + " jobs/s notifying, " + fixed(quiet, 0) +
               " jobs/s with quick.wake_consumers = off");
  csv.push_back({"new_zone_enqueue", "notifying", fixed(notifying, 1), "", "", ""});
  csv.push_back({"new_zone_enqueue", "wake_consumers=off", fixed(quiet, 1), "", "", ""});
  ctx.results->write_csv("wake_up.csv", {"measurement", "system", "a", "b", "c", "d"}, csv);

  const LatencyRun& listening = latency[0];
  const IdleRun& idle_listening = idle[0];
  ctx.results->add_section(
      "## Wake-up\n\nSteady load: " + fixed(kRate, 0) + " jobs/s from " + std::to_string(kProducers) +
      " producer threads, one job per transaction on a fixed schedule, tenants chosen at random among " +
      std::to_string(kTenants) + ", for " + fixed(seconds, 0) +
      " s; one consumer with 4 Workers (quick-pg, library defaults otherwise) or 4 worker connections (baseline). "
      "quick-pg's producers use the one-call enqueue (`quick::enqueue`: one autocommit statement, which moves a "
      "parked zone's pointer itself), or `enqueue_in` in a transaction of their own with the default options (a "
      "pull request, applied by the consumer's next scan: one more write in the pickup path). The baseline's "
      "producers insert one row per transaction. End-to-end: a job's due time on the producers' schedule to its "
      "handler's start, so that a producer that falls behind (an enqueue slower than its 2 ms interval, a commit "
      "waiting for the WAL flush) delays the jobs due meanwhile in the figures as it does in fact; *from the "
      "statement*: p99 from the enqueue statement's start (the item's vesting time, `JobContext::waited()`), which "
      "leaves that delay out; *producer lag*: how late the enqueues started (p99 / max).\n\n" +
      markdown_table({"system", "jobs/s", "e2e p50 ms", "e2e p99 ms", "e2e p99.9 ms", "e2e max ms",
                      "from the statement p99 ms", "producer lag p99 / max ms", "scans/s", "incomplete"},
                     latency_rows) +
      "\nIdle: the consumer on an empty queue for " + fixed(idle_seconds, 0) +
      " s, processor time of this process (the consumer's side only).\n\n" +
      markdown_table({"system", "% of a core", "scans/s"}, idle_rows) +
      "\nA notification's cost: 4 clients, single-job transactions, each into a new zone (so every commit "
      "notifies), " +
      std::to_string(rounds) + " alternating rounds of " + fixed(round_seconds, 0) + " s: " + fixed(notifying, 0) +
      " jobs/s notifying against " + fixed(quiet, 0) + " jobs/s with `quick.wake_consumers = off` (" +
      fixed(quiet > 0 ? notifying / quiet : 0, 2) +
      "x). Enqueues into zones whose pointer is already due send nothing (the enqueue experiment measures "
      "those).\n");
  // A run in which jobs were not enqueued or never ran misses the target: its percentiles leave
  // out the jobs that fared worst.
  ctx.results->add_target({"wake_up", "e2e p99 at 1,000 jobs/s, listening (ms)" + listening.problems(),
                           listening.e2e.p99_ms, "<= 5 ms", listening.complete() && listening.e2e.p99_ms <= 5.0});
  ctx.results->add_target({"wake_up", "idle consumer, % of a core", idle_listening.core_percent, "<= 1%",
                           idle_listening.core_percent <= 1.0});
  ctx.results->add_target({"wake_up", "idle consumer, scans per second", idle_listening.scans_per_s, "<= 1",
                           idle_listening.scans_per_s <= 1.0});
}

}  // namespace

QUICK_BENCH_EXPERIMENT(75, "wake_up", "steady 1,000 jobs/s latency, idle cost, notification cost", run_wake_up);

}  // namespace quick::bench
