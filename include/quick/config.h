// Consumer configuration: every parameter of the paper's Algorithms 1-3 under its paper name,
// plus what a production consumer needs (threads, retry policies, throttles, stop deadline).
//
// Defaults are chosen for a single small-to-medium Postgres server; docs/configuration.md lists
// each option with its unit, default and effect, and the YAML form `quick worker` reads.
// load_config_file / parse_config_yaml validate everything once and report the first bad value
// with the option's full name and the allowed range (quick::InvalidArgument).
//
// Thread safety: plain values.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace quick {

using Millis = std::chrono::milliseconds;

// One Postgres database with its own top-level queue.
struct DatabaseConfig {
  // A label for logs and stats; non-empty and unique. Default (YAML and Consumer): "db<N>", the
  // database's 1-based position.
  std::string name;
  std::string url;   // libpq connection string or URI; non-empty. YAML: url, or url_env: NAME.
};

// Algorithm 1: the Scanner.
struct ScannerConfig {
  int peek_max = 1000;           // max vested pointers read per peek. Range 1..100000.
  double selection_frac = 0.02;  // fraction of peeked pointers selected at random. (0, 1].
  int selection_max = 2000;      // max pointers selected per peek. >= 1.
  int processing_bound = 10000;  // pointers processed in one database before moving on. >= 1.
  // How long the Scanner sleeps after a round over all databases found no vested pointer.
  // Bounds the pickup latency of an idle queue. Range 1ms..10s. Default 20ms.
  Millis idle_poll_interval{20};
  // Take part in the per-database election of the in-order Scanner (one consumer at a time
  // processes pointers in vesting order, so no pointer starves). Default true.
  bool in_order_election = true;
  // The in-order role's lease: renewed every third of it; a dead holder's role moves to another
  // consumer within this time. Range 1s..10min. Default 5s.
  Millis in_order_lease_duration{5000};
  // Tenant partitioning between consumers (src/scanner/tenant_partition.h): each live consumer
  // of a database owns a share of its tenants; a Scanner takes its own vested pointers at once and
  // other consumers' once they have been vested this long. Keeps consumers from racing for the
  // same few pointers on a lightly loaded queue. 0 turns partitioning off (every Scanner selects
  // from all pointers, as in the paper). Range 0..10min. Default 50ms. Membership is a lease of
  // in_order_lease_duration in quick.consumer_roles (role 'member:<consumer_id>').
  Millis partition_grace{50};
  // Pull requests (earlier items enqueued into parked zones) applied per scan. >= 1.
  int pulls_per_scan = 10000;
};

// Algorithm 2: the Managers.
struct ManagerConfig {
  int threads = 2;               // Manager threads. 1..256.
  // Max items dequeued from one zone per visit (pointer lease): the fairness bound ("water
  // filling"). Larger means fewer visits per item for big zones: one zone's visits run one at a
  // time, each costing a millisecond or two beyond its items, so this bounds how fast one tenant's
  // backlog drains (about 23,000 no-op items/s at 100 on 2 cores, 31,000 at 200:
  // docs/benchmarks.md, section 3). Smaller keeps less of a big zone leased by one consumer: for
  // jobs that take seconds, set it near worker.threads. 1..10000.
  int dequeue_max = 200;
  // Pointer lease duration: the longest a Manager may hold its zones in one visit. A visit is one
  // transaction whose row locks are the lease; past p_duration Postgres cancels it and the zones
  // are free at once. 100ms..10min.
  Millis p_duration{2000};
  Millis min_inactive{60000};    // an empty zone's pointer is deleted after this long idle. 0..1d.
  // Zones handled by one Manager in one visit (one statement and commit: Postgres' cost is per
  // statement, so zones are visited in batches). The in-order Scanner takes at least this many of
  // the oldest pointers per scan. 1..1000.
  int pointers_per_batch = 100;
  // The same for a consumer that is its database's only live consumer (known from tenant
  // partitioning's membership): bigger visits make each zone cheaper, but several consumers lose
  // by them (src/scanner/visit_size.h). Never fewer than pointers_per_batch; 0 = off. 0..1000.
  int pointers_per_batch_alone = 400;
};

// Algorithm 3: the Workers.
struct WorkerConfig {
  int threads = 8;                     // Worker threads. 1..1024.
  Millis item_lease_duration{30000};   // item lease; extended while the handler runs. 1s..1d.
  // How often leases of held items are extended. Range 1ms..item_lease_duration (exclusive).
  // Default: a third of item_lease_duration.
  std::optional<Millis> lease_extend_interval;
  // The Scanner looks for more zones only while fewer than this many zones have items waiting in
  // the local buffer (Workers take items round robin over zones). A zone with 2 x threads items
  // waiting is not visited again until they run low. 0..100000 (0 counts as 1). Default: threads.
  std::optional<int> prefetch_zones;
  Millis ack_interval{5};     // completions are acknowledged in batches at least this often. 1ms..10s.
  int ack_batch_max = 1000;   // max completions per acknowledgment statement. 1..100000.
};

enum class PermanentFailureAction {
  kMoveToDeadItems,  // keep it in quick.dead_items for inspection and re-enqueue (default)
  kDelete,
};

// How failures of one job type are retried (paper section 6: "each type of queued items can set
// its own retry policy").
struct RetryPolicy {
  int inline_retries = 0;  // immediate retries in the same Worker before requeueing. 0..100.
  int max_attempts = 25;   // after this many failed attempts, the failure is permanent. 0 = no limit.
  Millis give_up_after{0}; // an item failing this long after its enqueue is given up. 0 = never.
  Millis backoff_base{1000};    // first retry delay; doubles with every error. 1ms..1d.
  Millis backoff_max{600000};   // cap on the retry delay. >= backoff_base.
  double backoff_jitter = 0.2;  // +-fraction of random jitter. 0..1.
  PermanentFailureAction on_permanent_failure = PermanentFailureAction::kMoveToDeadItems;
};

struct JobTypeConfig {
  Millis execution_bound{300000};  // handler time limit (paper: execution_bound_t). 1ms..7d.
  int max_in_flight = 0;           // per-consumer throttle: items of this type at once. 0 = none.
  RetryPolicy retry;
  // For `quick worker` only: the command run for each item (argv; the payload is its stdin).
  std::vector<std::string> command;
  int permanent_failure_exit_code = 75;  // `quick worker`: this exit status = permanent failure. 1..255.
};

struct ConsumerConfig {
  std::string consumer_id;  // unique per consumer; default "<hostname>-<pid>-<random>"
  std::vector<DatabaseConfig> databases;
  ScannerConfig scanner;
  ManagerConfig manager;
  WorkerConfig worker;
  JobTypeConfig default_job_type;  // for job types not listed below
  std::map<std::string, JobTypeConfig> job_types;  // names 1..100 characters; in YAML each starts from default_job_type
  Millis stop_deadline{10000};  // how long stop() lets running handlers finish. 0..1h.
  Millis reconnect_delay_max{5000};  // cap of the reconnect/retry backoff of every loop. 10ms..10min.

  // The effective settings for `job_type`.
  const JobTypeConfig& job_type(const std::string& job_type) const;
  Millis effective_lease_extend_interval() const;
  int effective_prefetch_zones() const;
};

// Throws InvalidArgument naming the first invalid option ("manager.dequeue_max must be between
// 1 and 10000, got 0").
void validate(const ConsumerConfig& config);

// YAML, as documented in docs/configuration.md. Durations are strings with units ("250ms",
// "2s", "1m"). A database's url may be given as url_env: NAME (read from the environment).
ConsumerConfig parse_config_yaml(const std::string& yaml_text);
ConsumerConfig load_config_file(const std::string& path);

}  // namespace quick
