// The systems a windowed load (windowed_load.h) runs against, each in a scratch database of its
// own, with the handlers recording end-to-end latency while the run measures: quick-pg with the
// steady state's consumer, and the plain SKIP LOCKED queue (batch 1, 4 connections). And the
// ways their producers enqueue.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <pqxx/pqxx>

#include "support/baseline_queue.h"
#include "support/bench_database.h"
#include "support/experiment.h"
#include "support/quick_pool.h"
#include "support/windowed_load.h"

namespace quick::bench {

// What every job of these loads is: a no-op.
constexpr const char* kLoadJobType = "noop";

// How producers enqueue the jobs given (each job's payload names its due time).
using EnqueueTenants = std::function<void(pqxx::connection&, const std::vector<LoadJob>&)>;

// quick-pg: all the jobs in one transaction (enqueue_batch_in), or each job on its own with the
// one-call enqueue (quick::enqueue: one autocommit statement).
EnqueueTenants quick_batch_in_transaction();
EnqueueTenants quick_one_call();
// The baseline: all the jobs in one transaction, or each in one autocommit INSERT.
EnqueueTenants baseline_in_transaction();
EnqueueTenants baseline_autocommit();

class LoadTarget {
 public:
  virtual ~LoadTarget() = default;
  LoadTarget(const LoadTarget&) = delete;
  LoadTarget& operator=(const LoadTarget&) = delete;

  const ScratchDatabase& db() const { return db_; }
  const std::string& name() const { return system_.name; }
  WindowedRun run(ExperimentContext& ctx, const LoadShape& shape) {
    return run_windowed(ctx, db_, system_, e2e_, measuring_, shape);
  }

 protected:
  LoadTarget(const std::string& server_url, const std::string& database_name) : db_(server_url, database_name) {}

  ScratchDatabase db_;
  TimedLatencies e2e_;
  std::atomic<bool> measuring_{false};
  LoadedSystem system_;
};

// quick-pg: one consumer (Scanner, 2 Managers, writer, 4 Workers; library defaults otherwise),
// `tenants` zones created before the load with their pointers parked (so that enqueues take the
// fast path), the consumer running and idle when the constructor returns.
class QuickLoadTarget final : public LoadTarget {
 public:
  QuickLoadTarget(ExperimentContext& ctx, const std::string& database_name, int tenants, EnqueueTenants enqueue);
  ~QuickLoadTarget() override { pool_.reset(); }  // its handlers use the latencies

 private:
  std::unique_ptr<QuickPool> pool_;
  ConsumerStats at_start_;  // the counters when the load started
};

// The plain SKIP LOCKED queue: 4 worker connections claiming one job at a time, started by the run.
class BaselineLoadTarget final : public LoadTarget {
 public:
  BaselineLoadTarget(ExperimentContext& ctx, const std::string& database_name, EnqueueTenants enqueue);
  ~BaselineLoadTarget() override { pool_.reset(); }

 private:
  std::unique_ptr<BaselinePool> pool_;
};

}  // namespace quick::bench
