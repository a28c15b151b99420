// The baseline every experiment measures quick-pg against: the queue most Postgres users write
// or use. One jobs table; a pool of workers, each on its own connection, claims jobs with
//   SELECT ... ORDER BY priority, run_at LIMIT n FOR UPDATE SKIP LOCKED
// runs them, and deletes them in the same transaction.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <pqxx/pqxx>

namespace quick::bench {

struct BaselineJob {
  std::string tenant;
  std::string payload = "{}";
  int priority = 0;
};

// Creates bench_baseline.jobs (identity key; index on (priority, run_at)), dropping any old one.
void create_baseline_schema(pqxx::connection& conn);

// One multi-row INSERT (parameters, unnest) in the caller's transaction.
void enqueue_baseline(pqxx::transaction_base& txn, const std::vector<BaselineJob>& jobs);

// The writes QuiCK's design adds to an enqueue, added to the baseline so that their cost can be
// measured apart from quick-pg's own code (the steady state's "baseline-b10+zone-writes"):
//   - every job also enters an index in its tenant's order, (tenant, priority, run_at): what
//     quick.items' zone index costs;
//   - every tenant of a transaction has a pointer row (bench_baseline.zones, indexed by vesting
//     time as quick.pointers is), which the enqueue locks FOR KEY SHARE (the enqueue/GC lock) and
//     then moves to vest now (FOR NO KEY UPDATE SKIP LOCKED, then an update), as an enqueue into a
//     parked zone does when it pulls the pointer in its transaction.
// The consumers are unchanged: they claim and delete as before and never read the zones.
// Creates the index and one pointer per tenant, tenant_name(0 .. tenants - 1).
void add_zone_writes_schema(pqxx::connection& conn, int tenants);
// enqueue_baseline plus those writes, in one statement.
void enqueue_baseline_with_zone_writes(pqxx::transaction_base& txn, const std::vector<BaselineJob>& jobs);

struct ClaimedJob {
  std::int64_t id = 0;
  std::string tenant;
  std::chrono::microseconds waited{0};  // run_at -> handler start
  std::string payload;                  // with Options::with_payload only
};

class BaselinePool {
 public:
  struct Options {
    std::string url;
    int connections = 4;                             // worker threads, one connection each
    int batch = 1;                                   // LIMIT n
    std::function<void(const ClaimedJob&)> handler;  // runs inside the claiming transaction
    std::chrono::milliseconds idle_poll{5};          // sleep after an empty claim
    bool with_payload = false;                       // the claim also reads each job's payload
  };

  explicit BaselinePool(Options options) : options_(std::move(options)) {}
  ~BaselinePool() { stop(); }

  void start();
  void stop();
  std::uint64_t done() const { return done_.load(); }
  std::uint64_t errors() const { return errors_.load(); }

 private:
  void run_worker();

  Options options_;
  std::vector<std::thread> threads_;
  std::atomic<bool> stopping_{false};
  std::atomic<std::uint64_t> done_{0};    // jobs deleted by committed transactions
  std::atomic<std::uint64_t> errors_{0};  // failed claim/commit transactions (retried)
};

}  // namespace quick::bench
