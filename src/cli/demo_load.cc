#include "cli/demo_load.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <random>
#include <thread>

#include "cli/database_target.h"
#include "cli/stop_signals.h"
#include "quick/database.h"

namespace quick::cli {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kBacklogBatch = 1000;  // backlog jobs per enqueue transaction

bool is_quiet(const std::string& tenant) { return tenant.rfind("quiet-", 0) == 0; }

// The demo writes quiet payloads itself ({"seq": n}); Postgres may respace them (jsonb).
int quiet_seq(const std::string& payload) {
  const auto colon = payload.find(':');
  return colon == std::string::npos ? -1 : std::atoi(payload.c_str() + colon + 1);
}

double millis_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

// What the workers and the producer report, from many threads at once.
class Tally {
 public:
  explicit Tally(int backlog) : backlog_(backlog) {}

  void begin(Clock::time_point start) { start_ = start; }

  // The producer, just before quiet job `seq` commits (seq counts 0, 1, 2, ...).
  void quiet_enqueuing(int seq) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (static_cast<std::size_t>(seq) >= enqueued_at_.size()) enqueued_at_.resize(static_cast<std::size_t>(seq) + 1);
    enqueued_at_[static_cast<std::size_t>(seq)] = Clock::now();
    ++quiet_enqueued_;
  }

  void job_started(const std::string& tenant, const std::string& payload) {
    if (!is_quiet(tenant)) return;
    const auto now = Clock::now();
    const int seq = quiet_seq(payload);
    std::lock_guard<std::mutex> lock(mutex_);
    if (seq < 0 || static_cast<std::size_t>(seq) >= enqueued_at_.size()) return;  // not this run's
    pickups_ms_.push_back(millis_between(enqueued_at_[static_cast<std::size_t>(seq)], now));
  }

  void job_done(const std::string& tenant) {
    if (is_quiet(tenant)) {
      ++quiet_done_;
    } else if (++noisy_done_ == backlog_) {
      std::lock_guard<std::mutex> lock(mutex_);
      noisy_drained_s_ = millis_between(start_, Clock::now()) / 1000.0;
    }
  }

  int noisy_left() const { return backlog_ - noisy_done_.load(); }
  bool all_done() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return noisy_done_.load() >= backlog_ && quiet_done_.load() >= quiet_enqueued_;
  }

  DemoProgress progress(int second) const {
    DemoProgress progress;
    progress.second = second;
    progress.noisy_left = std::max(0, noisy_left());
    std::lock_guard<std::mutex> lock(mutex_);
    progress.quiet_waiting = quiet_enqueued_ - static_cast<int>(pickups_ms_.size());
    DemoRun so_far;
    so_far.quiet_pickup_ms = pickups_ms_;
    std::sort(so_far.quiet_pickup_ms.begin(), so_far.quiet_pickup_ms.end());
    progress.quiet_p99_ms = so_far.quiet_percentile_ms(0.99);
    return progress;
  }

  void fill(DemoRun& run) const {
    std::lock_guard<std::mutex> lock(mutex_);
    run.quiet_pickup_ms = pickups_ms_;
    std::sort(run.quiet_pickup_ms.begin(), run.quiet_pickup_ms.end());
    run.quiet_enqueued = quiet_enqueued_;
    run.jobs_done = noisy_done_.load() + quiet_done_.load();
    run.noisy_drained_s = backlog_ > 0 ? noisy_drained_s_ : std::nullopt;
  }

 private:
  const int backlog_;
  Clock::time_point start_;
  std::atomic<int> noisy_done_{0}, quiet_done_{0};
  mutable std::mutex mutex_;
  std::vector<Clock::time_point> enqueued_at_;  // by seq; guarded by mutex_
  int quiet_enqueued_ = 0;                      // guarded by mutex_
  std::vector<double> pickups_ms_;              // guarded by mutex_
  std::optional<double> noisy_drained_s_;       // guarded by mutex_
};

std::vector<DemoJob> backlog_batch(int tenant, int first, int count) {
  std::vector<DemoJob> jobs;
  for (int i = first; i < first + count; ++i) {
    jobs.push_back(DemoJob{"noisy-" + std::to_string(tenant), R"({"page": )" + std::to_string(i) + "}"});
  }
  return jobs;
}

// Quiet jobs, one per transaction like an application serving requests, on a fixed schedule
// (a slow commit does not stretch it) until `producing` turns false or `seconds` have passed.
class QuietProducer {
 public:
  QuietProducer(DemoQueue& queue, const std::string& url, const DemoLoad& load, Tally& tally)
      : thread_([this, &queue, url, load, &tally] { run(queue, url, load, tally); }) {}
  ~QuietProducer() { stop(); }
  QuietProducer(const QuietProducer&) = delete;
  QuietProducer& operator=(const QuietProducer&) = delete;

  // Done producing: its time is up, or an error ended it (failed()).
  bool finished() const { return finished_.load(); }
  bool failed() const { return finished_.load() && failure_ != nullptr; }
  void stop() {
    producing_.store(false);
    if (thread_.joinable()) thread_.join();
  }
  void rethrow_failure() const {
    if (failure_) std::rethrow_exception(failure_);
  }

 private:
  void run(DemoQueue& queue, const std::string& url, const DemoLoad& load, Tally& tally) {
    try {
      auto conn = connect_with_timeout(url);
      std::mt19937 random(7);  // the same tenants, in the same order, for every queue
      std::uniform_int_distribution<int> tenant(0, load.quiet_tenants - 1);
      const auto period = std::chrono::duration<double>(1.0 / load.quiet_rate);
      const auto start = Clock::now();
      const auto end = start + std::chrono::seconds(load.seconds);
      for (int seq = 0; producing_.load(); ++seq) {
        const auto due = start + std::chrono::duration_cast<Clock::duration>(period * seq);
        if (due >= end) break;
        // Short naps, so that a stop is heard soon even at a slow rate.
        while (producing_.load() && Clock::now() < due) {
          std::this_thread::sleep_for(std::min<Clock::duration>(due - Clock::now(), std::chrono::milliseconds(50)));
        }
        if (!producing_.load()) break;
        const DemoJob job{"quiet-" + std::to_string(tenant(random)), R"({"seq": )" + std::to_string(seq) + "}"};
        queue.enqueue_one(*conn, job, [&tally, seq] { tally.quiet_enqueuing(seq); });
      }
    } catch (...) {
      failure_ = std::current_exception();
    }
    finished_.store(true);
  }

  std::atomic<bool> producing_{true}, finished_{false};
  std::exception_ptr failure_;  // written by the thread before finished_
  std::thread thread_;          // last: starts once the members above exist
};

// Stops the queue however the run ends, so that no worker outlives the tally it writes to.
struct QueueStopper {
  DemoQueue& queue;
  ~QueueStopper() { queue.stop(); }
};

}  // namespace

std::optional<double> DemoRun::quiet_percentile_ms(double fraction) const {
  if (quiet_pickup_ms.empty()) return std::nullopt;
  const auto rank = static_cast<std::size_t>(std::ceil(fraction * static_cast<double>(quiet_pickup_ms.size())));
  return quiet_pickup_ms[std::min(quiet_pickup_ms.size(), std::max<std::size_t>(rank, 1)) - 1];
}

DemoRun run_demo_load(DemoQueue& queue, const std::string& url, const DemoLoad& load, StopSignals& stop,
                      const DemoProgressPrinter& progress) {
  DemoRun run;
  run.system = queue.name();
  run.backlog = load.backlog();
  {
    auto conn = connect_with_timeout(url);
    for (int tenant = 0; tenant < load.noisy_tenants; ++tenant) {
      for (int first = 0; first < load.noisy_backlog; first += kBacklogBatch) {
        if (stop.received()) {
          run.interrupted = true;
          return run;
        }
        queue.enqueue_batch(*conn, backlog_batch(tenant, first, std::min(kBacklogBatch, load.noisy_backlog - first)));
      }
    }
  }

  Tally tally(load.backlog());
  const auto start = Clock::now();
  tally.begin(start);
  QueueStopper stopper{queue};
  const auto job_time = std::chrono::milliseconds(load.job_ms);
  queue.start([&tally, job_time](const std::string& tenant, const std::string& payload) {
    tally.job_started(tenant, payload);
    std::this_thread::sleep_for(job_time);
    tally.job_done(tenant);
  });
  QuietProducer producer(queue, url, load, tally);

  // Every job at full speed would take `ideal` seconds; past a generous multiple of it, the run
  // gives up rather than wait forever on a queue that stopped moving.
  const double ideal = (load.backlog() + load.quiet_rate * load.seconds) * load.job_ms / 1000.0 / load.worker_threads();
  const auto limit = std::chrono::duration<double>(load.seconds + 60 + 3 * ideal);
  int second = 0;
  while (true) {
    if (stop.wait_for(std::chrono::milliseconds(100))) {
      run.interrupted = true;
      break;
    }
    const auto elapsed = Clock::now() - start;
    if (producer.failed()) break;
    if (producer.finished() && tally.all_done()) {
      run.drained = true;
      break;
    }
    if (elapsed > limit) break;
    if (elapsed >= std::chrono::seconds(second + 1)) {
      ++second;
      progress(run.system, tally.progress(second), false);
    }
  }
  run.elapsed_s = std::chrono::duration<double>(Clock::now() - start).count();
  producer.stop();
  queue.stop();
  tally.fill(run);
  progress(run.system, tally.progress(static_cast<int>(std::lround(run.elapsed_s))), true);
  producer.rethrow_failure();
  return run;
}

}  // namespace quick::cli
