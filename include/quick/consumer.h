// The QuiCK consumer (paper section 6): a Scanner thread, a pool of Managers and a pool of
// Workers, serving one or more databases, each with its own top-level queue.
//
//   quick::Consumer consumer(config);
//   consumer.handle("send_receipt", [](quick::JobContext& job) {
//     ...;
//     return quick::JobResult::done();
//   });
//   consumer.start();
//   ...
//   consumer.stop();   // or let the destructor do it
//
// Data flow and the lease/pointer state machines: docs/architecture.md and docs/consumer.md.
//
// Lifecycle: handle() before start(); start() and stop() are idempotent; stop() is safe before
// start() and from several threads at once. It stops scanning, lets running handlers finish
// until config.stop_deadline, then asks them to stop (JobContext::should_stop), and releases the
// leases of items it did not finish (they become available at once). It returns once every
// thread has ended, except Workers whose handlers still run 2 s after being asked to stop: those
// are left behind (logged as an error) and their items vest again when their leases run out.
// The full sequence: docs/consumer.md#stopping.
//
// Errors: every background loop classifies database errors (connection lost, server restart,
// serialization failure, in-doubt commit, ...), logs them through spdlog, backs off (up to
// config.reconnect_delay_max) and goes on. No exception escapes a consumer thread. Loggers:
// quick.consumer, quick.scanner, quick.election, quick.manager, quick.worker, quick.lease_keeper,
// quick.acker.
//
// Thread safety: all public methods may be called from any thread.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "quick/config.h"
#include "quick/handler.h"
#include "quick/stats.h"

namespace quick {

class Consumer {
 public:
  // Fills in the defaults that depend on the host (consumer_id, database names; see config.h),
  // then validates `config`: throws InvalidArgument naming the first bad option. Connects to
  // nothing: the threads connect after start().
  explicit Consumer(ConsumerConfig config);
  ~Consumer();  // stop()
  Consumer(const Consumer&) = delete;
  Consumer& operator=(const Consumer&) = delete;

  // Registers the handler for `job_type` (a later call for the same type replaces it). Items of
  // types without a handler are released for config.unhandled_job_type_delay (or dead-lettered:
  // config.unhandled_job_types), counted and logged once per type. Throws InvalidArgument when
  // called after start() or with an empty handler.
  void handle(const std::string& job_type, Handler handler);

  // Starts the Scanner, config.manager.threads Managers, config.worker.threads Workers and the
  // writer thread, then returns. Throws InvalidArgument, starting nothing, when no handler is
  // registered. Database errors never surface here: the threads connect, and retry with backoff
  // (see "Errors" above). Calls after the first do nothing: a stopped consumer does not restart.
  void start();
  // Stops the consumer, as described under "Lifecycle" above.
  void stop();

  // Waits until the consumer serves every database: its Scanner has completed a scan of each
  // since start(), and (with scanner.listen_for_wakeups) its wake-up listener listens on each, so
  // an item enqueued from now on is found without waiting for a poll. Returns false if that did
  // not happen within `timeout` (a database unreachable, say), or the consumer was never started
  // or is stopped. For tests and health checks; a consumer works without anyone waiting for it.
  bool wait_until_ready(std::chrono::milliseconds timeout) const;
  // Waits until the consumer holds no work at one moment: nothing buffered, no handler running,
  // no acknowledgment waiting to be written, no Manager visit in progress. Says nothing about the
  // database: items may be queued that have not vested, or that the next scan will find (to wait
  // for a drained queue, query quick.items). Returns false on timeout, or if the consumer was
  // never started or is stopped.
  bool wait_until_idle(std::chrono::milliseconds timeout) const;

  // A consistent-enough snapshot of the counters (each counter is exact; they are read one by one).
  ConsumerStats stats() const;

  // The configuration in use: the one passed in, with the defaults the constructor filled in.
  const ConsumerConfig& config() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace quick
