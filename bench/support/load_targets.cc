#include "support/load_targets.h"

#include "quick/producer.h"
#include "support/load.h"
#include "support/results_folder.h"
#include "support/scheduled_load.h"

namespace quick::bench {
namespace {

using Clock = std::chrono::steady_clock;

NewItem load_job(const LoadJob& job) {
  NewItem item;
  item.tenant = job.tenant;
  item.job_type = kLoadJobType;
  item.payload = job.payload;
  return item;
}

// The consumer's work between two readings of its counters: how many jobs each visit and each
// scan served, and how many wake-ups it received (docs/benchmarks.md#13-steady-load).
std::string describe_consumer_work(const ConsumerStats& before, const ConsumerStats& after) {
  const auto jobs = static_cast<double>(after.items_done - before.items_done);
  const auto visits = static_cast<double>(after.visits - before.visits);
  const auto zones = static_cast<double>(after.pointer_leases_won - before.pointer_leases_won);
  const auto scans = static_cast<double>(after.scans - before.scans);
  const auto per = [](double count, double of) { return of > 0 ? count / of : 0.0; };
  return "consumer: " + fixed(visits, 0) + " visits (" + fixed(per(zones, visits), 1) + " zones, " +
         fixed(per(jobs, visits), 1) + " jobs each), " + fixed(scans, 0) + " scans (" + fixed(per(jobs, scans), 1) +
         " jobs each), " + fixed(static_cast<double>(after.wakeups - before.wakeups), 0) + " wake-ups received";
}

}  // namespace

EnqueueTenants quick_batch_in_transaction() {
  return [](pqxx::connection& conn, const std::vector<LoadJob>& jobs) {
    std::vector<NewItem> items;
    for (const auto& job : jobs) items.push_back(load_job(job));
    pqxx::work txn(conn);
    enqueue_batch_in(txn, items);
    txn.commit();
  };
}

EnqueueTenants quick_one_call() {
  return [](pqxx::connection& conn, const std::vector<LoadJob>& jobs) {
    for (const auto& job : jobs) enqueue(conn, load_job(job));
  };
}

EnqueueTenants baseline_in_transaction() {
  return [](pqxx::connection& conn, const std::vector<LoadJob>& load) {
    std::vector<BaselineJob> jobs;
    for (const auto& job : load) jobs.push_back(BaselineJob{job.tenant, job.payload, 0});
    pqxx::work txn(conn);
    enqueue_baseline(txn, jobs);
    txn.commit();
  };
}

EnqueueTenants baseline_autocommit() {
  return [](pqxx::connection& conn, const std::vector<LoadJob>& jobs) {
    for (const auto& job : jobs) {
      pqxx::nontransaction statement(conn);
      enqueue_baseline(statement, {BaselineJob{job.tenant, job.payload, 0}});
    }
  };
}

QuickLoadTarget::QuickLoadTarget(ExperimentContext& ctx, const std::string& database_name, int tenants,
                                 EnqueueTenants enqueue)
    : LoadTarget(ctx.server_url, database_name) {
  ConsumerConfig config = bench_consumer_config(db_.url());
  config.manager.threads = 2;
  config.worker.threads = 4;
  pool_ = std::make_unique<QuickPool>(config, 1, std::vector<std::string>{kLoadJobType}, [this](JobContext& job) {
    if (!measuring_.load()) return JobResult::done();
    const auto now = Clock::now();
    e2e_.record(now, since_due(job.item().payload, now).value_or(job.waited()), job.waited());
    return JobResult::done();
  });
  {
    auto conn = db_.connect();
    fill_quick(*conn, std::vector<int>(static_cast<std::size_t>(tenants), 1), kLoadJobType);
  }
  // The consumer runs the setup's jobs before the load starts (their zones are then parked).
  pool_->start();
  system_.name = "quick-pg";
  system_.setup_timed_out = !wait_until_count([this] { return pool_->done(); }, static_cast<std::uint64_t>(tenants),
                                              std::chrono::minutes(1));
  if (system_.setup_timed_out) {
    ctx.progress(system_.name + ": the setup's " + std::to_string(tenants) +
                 " jobs did not all run within a minute (the run is incomplete)");
  }
  system_.main_table = "quick.items";
  system_.side_table = "quick.pointers";
  system_.start = [this] { at_start_ = pool_->total_stats(); };
  system_.stop = [this] { pool_->stop(); };
  system_.describe_work = [this] { return describe_consumer_work(at_start_, pool_->total_stats()); };
  system_.done = [this] { return pool_->done(); };
  system_.errors = [this] { return pool_->total_stats().database_errors; };
  system_.enqueue = std::move(enqueue);
}

BaselineLoadTarget::BaselineLoadTarget(ExperimentContext& ctx, const std::string& database_name, EnqueueTenants enqueue)
    : LoadTarget(ctx.server_url, database_name) {
  {
    auto conn = db_.connect();
    create_baseline_schema(*conn);
  }
  pool_ = std::make_unique<BaselinePool>(
      BaselinePool::Options{db_.url(), 4, 1,
                            [this](const ClaimedJob& job) {
                              if (!measuring_.load()) return;
                              const auto now = Clock::now();
                              e2e_.record(now, since_due(job.payload, now).value_or(job.waited), job.waited);
                            },
                            std::chrono::milliseconds(5), /*with_payload=*/true});
  system_.name = "baseline-b1";
  system_.main_table = "bench_baseline.jobs";
  system_.start = [this] { pool_->start(); };
  system_.stop = [this] { pool_->stop(); };
  system_.done = [this] { return pool_->done(); };
  system_.errors = [this] { return pool_->errors(); };
  system_.enqueue = std::move(enqueue);
}

}  // namespace quick::bench
