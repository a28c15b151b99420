// Experiment 6: tenant scale. The top-level queue holds one pointer per non-empty zone; does
// anything get slower or bigger as the number of tenants with pointers grows?
//
// For 1,000, 100,000 and 1,000,000 tenants (--quick: 1,000 and 10,000), on a fresh database:
//   setup:   one item per tenant, enqueued through quick::enqueue_batch_in, 10,000 items per
//            transaction (the real enqueue path creates the pointers), then VACUUM ANALYZE so that
//            the peek's index-only scan on pointers_vesting finds the visibility map set;
//   peek:    latency of the Scanner's peek, `SELECT * FROM quick.peek_pointers(1000)` (prepared,
//            autocommit, round trip included): p50/p99 of many calls after a warm-up;
//   enqueue: single-item enqueue_in transactions into random existing tenants, 4 clients;
//   memory:  resident memory of one consumer (library defaults) running over the queue. The
//            consumer runs in a forked child process, so nothing else of the suite shares its
//            heap: the child trims its heap (malloc_trim), reads its VmRSS, starts the consumer,
//            samples VmRSS every 50 ms while it works, and reports the peak. "consumer memory"
//            = peak - before: what the consumer itself brought in (threads, connections, buffers).
// Targets: peek p50 at the most tenants <= 2x that at 1,000; consumer memory at the most tenants
// <= 1.25x that at 1,000 (i.e. no growth beyond noise).
#include <malloc.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <random>
#include <thread>

#include "quick/consumer.h"
#include "quick/database.h"
#include "quick/producer.h"
#include "support/bench_database.h"
#include "support/experiment.h"
#include "support/latency_recorder.h"
#include "support/load.h"

namespace quick::bench {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kPeekMax = 1000;
constexpr int kEnqueueClients = 4;

struct ScalePoint {
  int tenants = 0;
  double setup_seconds = 0;
  long long peek_rows = 0;
  Percentiles peek;
  double enqueue_per_s = 0;
  double rss_before_mib = 0, rss_peak_mib = 0;
  long long consumer_items = 0;
  double consumer_mib() const { return rss_peak_mib - rss_before_mib; }
};

void create_tenants(ScratchDatabase& db, int tenants) {
  auto conn = db.connect();
  constexpr int kPerTransaction = 10000;
  for (int first = 0; first < tenants; first += kPerTransaction) {
    std::vector<NewItem> items;
    for (int t = first; t < std::min(tenants, first + kPerTransaction); ++t) {
      items.push_back(NewItem{tenant_name(t), "noop", "{}", {}, 0, std::nullopt});
    }
    pqxx::work txn(*conn);
    enqueue_batch_in(txn, items);
    txn.commit();
  }
}

Percentiles measure_peek(ScratchDatabase& db, int calls, long long& rows) {
  auto conn = db.connect();
  conn->prepare("peek", "SELECT tenant, vesting_time FROM quick.peek_pointers($1)");
  pqxx::nontransaction session(*conn);
  for (int i = 0; i < 20; ++i)
    rows = static_cast<long long>(session.exec_prepared("peek", kPeekMax).size());  // warm-up
  LatencyRecorder latency;
  for (int i = 0; i < calls; ++i) {
    const auto start = Clock::now();
    rows = static_cast<long long>(session.exec_prepared("peek", kPeekMax).size());
    latency.record(std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start));
  }
  return latency.summary();
}

double measure_enqueue_rate(ScratchDatabase& db, int tenants, std::chrono::milliseconds duration) {
  std::atomic<long long> done{0};
  std::atomic<bool> failed{false};
  std::vector<std::thread> clients;
  const auto start = Clock::now();
  for (int c = 0; c < kEnqueueClients; ++c) {
    clients.emplace_back([&, c] {
      try {
        auto conn = db.connect();
        std::mt19937 random(static_cast<unsigned>(100 + c));
        std::uniform_int_distribution<int> tenant(0, tenants - 1);
        while (Clock::now() - start < duration) {
          pqxx::work txn(*conn);
          enqueue_in(txn, NewItem{tenant_name(tenant(random)), "noop", R"({"n":1})", {}, 0, std::nullopt});
          txn.commit();
          ++done;
        }
      } catch (const std::exception&) {
        failed = true;  // no exception may escape a thread
      }
    });
  }
  for (auto& client : clients) client.join();
  if (failed) throw std::runtime_error("tenant_scale: an enqueue client failed");
  return static_cast<double>(done.load()) / std::chrono::duration<double>(Clock::now() - start).count();
}

double vm_rss_mib() {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    if (key == "VmRSS:") {
      double kib = 0;
      status >> kib;
      return kib / 1024.0;
    }
    status.ignore(1 << 20, '\n');
  }
  return 0;
}

// Runs a consumer for `duration` in a forked child and measures its resident memory (see the
// header comment). Must be called while this process runs no other thread: fork copies only the
// calling thread, so a lock held by another thread would stay locked in the child forever.
void measure_consumer_memory(const std::string& url, std::chrono::milliseconds duration, ScalePoint& point) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) throw std::runtime_error("tenant_scale: pipe failed");
  const pid_t child = ::fork();
  if (child < 0) throw std::runtime_error("tenant_scale: fork failed");
  if (child == 0) {
    ::close(pipe_fds[0]);
    double report[3] = {0, 0, -1};  // rss before, rss peak, items done (-1: failed)
    try {
      ::malloc_trim(0);  // give back the parent's free heap, so that "before" is this process's floor
      report[0] = report[1] = vm_rss_mib();
      ConsumerConfig config = bench_consumer_config(url);
      Consumer consumer(config);
      consumer.handle("noop", [](JobContext&) { return JobResult::done(); });
      consumer.start();
      const auto until = Clock::now() + duration;
      while (Clock::now() < until) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        report[1] = std::max(report[1], vm_rss_mib());
      }
      report[2] = static_cast<double>(consumer.stats().items_done);
      consumer.stop();
    } catch (...) {
      report[2] = -1;
    }
    const ssize_t written = ::write(pipe_fds[1], report, sizeof report);
    ::_exit(written == static_cast<ssize_t>(sizeof report) ? 0 : 1);  // no static destructors, no atexit
  }
  ::close(pipe_fds[1]);
  double report[3] = {0, 0, -1};
  const ssize_t got = ::read(pipe_fds[0], report, sizeof report);
  ::close(pipe_fds[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  if (got != static_cast<ssize_t>(sizeof report) || report[2] < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw std::runtime_error("tenant_scale: the consumer child process failed");
  }
  point.rss_before_mib = report[0];
  point.rss_peak_mib = report[1];
  point.consumer_items = static_cast<long long>(report[2]);
}

ScalePoint measure(ExperimentContext& ctx, int tenants) {
  ScalePoint point;
  point.tenants = tenants;
  ScratchDatabase db(ctx.server_url, "quick_bench_tenant_scale");
  const auto setup_start = Clock::now();
  create_tenants(db, tenants);
  db.vacuum();
  point.setup_seconds = std::chrono::duration<double>(Clock::now() - setup_start).count();
  point.peek = measure_peek(db, ctx.size(500, 100), point.peek_rows);
  point.enqueue_per_s = measure_enqueue_rate(db, tenants,
                                             ctx.duration(std::chrono::seconds(5), std::chrono::seconds(1)));
  measure_consumer_memory(db.url(), ctx.duration(std::chrono::seconds(5), std::chrono::seconds(2)), point);
  ctx.progress(std::to_string(tenants) + " tenants (setup " + fixed(point.setup_seconds, 1) + " s): peek p50 " +
               fixed(point.peek.p50_ms, 2) + " ms, enqueue " + fixed(point.enqueue_per_s, 0) + "/s, consumer " +
               fixed(point.consumer_mib(), 1) + " MiB (" + std::to_string(point.consumer_items) + " items)");
  return point;
}

void run_tenant_scale(ExperimentContext& ctx) {
  const std::vector<int> scales = ctx.quick ? std::vector<int>{1000, 10000} : std::vector<int>{1000, 100000, 1000000};
  std::vector<ScalePoint> points;
  for (int tenants : scales) points.push_back(measure(ctx, tenants));

  std::vector<std::vector<std::string>> csv, table;
  for (const auto& p : points) {
    csv.push_back({std::to_string(p.tenants), fixed(p.setup_seconds, 2), std::to_string(p.peek_rows),
                   std::to_string(p.peek.count), fixed(p.peek.p50_ms, 3), fixed(p.peek.p99_ms, 3),
                   fixed(p.enqueue_per_s, 1), fixed(p.rss_before_mib, 1), fixed(p.rss_peak_mib, 1),
                   fixed(p.consumer_mib(), 1), std::to_string(p.consumer_items)});
    table.push_back({std::to_string(p.tenants), fixed(p.peek.p50_ms, 2), fixed(p.peek.p99_ms, 2),
                     fixed(p.enqueue_per_s, 0), fixed(p.consumer_mib(), 1), std::to_string(p.consumer_items),
                     fixed(p.setup_seconds, 1)});
  }
  ctx.results->write_csv("tenant_scale.csv",
                         {"tenants", "setup_seconds", "peek_rows", "peek_calls", "peek_p50_ms", "peek_p99_ms",
                          "enqueue_per_s", "rss_before_mib", "rss_peak_mib", "consumer_mib", "consumer_items"},
                         csv);
  ctx.results->add_section(
      "## Tenant scale\n\nEach tenant has one queued item (so one pointer), created with `quick::enqueue_batch_in`, "
      "10,000 per transaction, then VACUUM ANALYZE. Peek: `SELECT * FROM quick.peek_pointers(" +
      std::to_string(kPeekMax) +
      ")`, prepared, autocommit, client round trip included. Enqueue: `quick::enqueue_in`, one item per transaction "
      "into random existing tenants, " +
      std::to_string(kEnqueueClients) +
      " clients. Consumer memory: one consumer "
      "(library defaults) in a forked child process: peak VmRSS while it runs over the queue for " +
      fixed(std::chrono::duration<double>(ctx.duration(std::chrono::seconds(5), std::chrono::seconds(2))).count(), 0) +
      " s, minus its VmRSS before it started (after malloc_trim).\n\n" +
      markdown_table(
          {"tenants", "peek p50 ms", "peek p99 ms", "enqueue/s", "consumer MiB", "items consumed", "setup s"}, table) +
      "\n![tenant scale](tenant_scale.png)\n");
  const auto& small = points.front();
  const auto& large = points.back();
  const std::string versus = std::to_string(large.tenants) + " vs " + std::to_string(small.tenants) + " tenants";
  const double peek_ratio = large.peek.p50_ms / small.peek.p50_ms;
  ctx.results->add_target({"tenant_scale", "peek p50, " + versus, peek_ratio, "<= 2", peek_ratio <= 2});
  const double memory_ratio = large.consumer_mib() / std::max(0.1, small.consumer_mib());
  ctx.results->add_target(
      {"tenant_scale", "consumer memory, " + versus, memory_ratio, "<= 1.25 (no growth)", memory_ratio <= 1.25});
}

}  // namespace

QUICK_BENCH_EXPERIMENT(60, "tenant_scale",
                       "1k/100k/1M tenants with pointers: peek latency, enqueue rate, consumer memory",
                       run_tenant_scale);

}  // namespace quick::bench
