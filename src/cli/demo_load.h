// The noisy-neighbour load of `quick demo`, described once and driven the same way through each
// queue it compares (quick-pg and a plain FIFO queue): the same backlog, enqueued up front; the
// same quiet jobs, one per transaction at a fixed rate, for the same random quiet tenants (a fixed
// seed); the same number of worker threads; the same simulated work per job. Only the queue
// differs, behind the DemoQueue interface.
//
// A quiet job's pickup latency is measured the same way for both queues, on the demo's own clock:
// from just before its enqueue commits to the moment a worker starts it.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <pqxx/pqxx>

namespace quick::cli {

struct DemoLoad {
  int noisy_tenants = 3;
  int noisy_backlog = 2500;  // jobs per noisy tenant, enqueued before the workers start
  int quiet_tenants = 300;
  double quiet_rate = 40;  // quiet jobs per second, each for a random quiet tenant
  int seconds = 8;         // how long quiet jobs arrive
  int job_ms = 5;          // simulated work per job (a sleep)
  int consumers = 2;       // quick-pg consumers ...
  int workers = 4;         // ... with this many worker threads each; the FIFO queue gets as many in all

  int worker_threads() const { return consumers * workers; }
  int backlog() const { return noisy_tenants * noisy_backlog; }
};

struct DemoJob {
  std::string tenant;   // noisy-<n> or quiet-<n>
  std::string payload;  // JSON; a quiet job's is {"seq": n}, n counting from 0 in enqueue order
};

// A queue the demo drives. Connections are the caller's for enqueues; workers open their own.
class DemoQueue {
 public:
  // Runs one job on a worker thread; the queue completes the job after it returns.
  using JobRunner = std::function<void(const std::string& tenant, const std::string& payload)>;

  virtual ~DemoQueue() = default;
  virtual std::string name() const = 0;
  // Enqueues `jobs` in one transaction.
  virtual void enqueue_batch(pqxx::connection& conn, const std::vector<DemoJob>& jobs) = 0;
  // Enqueues one job in its own transaction, calling `before_commit` just before the commit.
  virtual void enqueue_one(pqxx::connection& conn, const DemoJob& job, const std::function<void()>& before_commit) = 0;
  // Starts the workers; each job goes through `run` once.
  virtual void start(JobRunner run) = 0;
  // Stops the workers: running jobs finish and are completed, nothing stays leased or locked, and
  // every connection the workers opened is closed. Idempotent.
  virtual void stop() = 0;
};

// What one run through one queue measured.
struct DemoRun {
  std::string system;
  std::vector<double> quiet_pickup_ms;  // every quiet job started, sorted
  int quiet_enqueued = 0;
  int jobs_done = 0;  // noisy and quiet
  int backlog = 0;
  std::optional<double> noisy_drained_s;  // from the workers' start to the backlog's last job done
  double elapsed_s = 0;                   // from the workers' start to the end of the run
  bool drained = false;                   // every job enqueued was done
  bool interrupted = false;               // a stop signal ended it early

  std::optional<double> quiet_percentile_ms(double fraction) const;  // nearest rank; none without samples
};

class StopSignals;

// Prints the progress of a run: one line per second (rewritten in place on a terminal).
struct DemoProgress {
  int second = 0;
  int noisy_left = 0;
  int quiet_waiting = 0;  // enqueued, not yet started
  std::optional<double> quiet_p99_ms;
};
using DemoProgressPrinter = std::function<void(const std::string& system, const DemoProgress& progress, bool last)>;

// Runs the load through `queue` on the database `url`: enqueues the backlog, starts the workers and
// the quiet producer, waits until quiet jobs stopped arriving and every job is done (or a stop
// signal, or a drain limit), then stops the producer and the queue.
DemoRun run_demo_load(DemoQueue& queue, const std::string& url, const DemoLoad& load, StopSignals& stop,
                      const DemoProgressPrinter& progress);

}  // namespace quick::cli
