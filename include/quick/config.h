// Consumer configuration: every parameter of the paper's Algorithms 1-3 under its paper name,
// plus what a production consumer needs (threads, retry policies, throttles, stop deadline).
//
// Each option below states its unit, its allowed range (inclusive unless written with <), its
// default and its effect. Durations are Millis (milliseconds) here and strings with a unit in
// YAML ("250ms", "2s", "1m"). Defaults are chosen for a single small-to-medium Postgres server;
// docs/configuration.md lists every option with the same facts, the YAML form `quick worker`
// reads, and the measurements behind the defaults. load_config_file / parse_config_yaml /
// validate check everything once and report the first bad value with the option's full name and
// the allowed range (quick::InvalidArgument).
//
// Thread safety: plain values. The functions below keep no state and may be called from any
// thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace quick {

using Millis = std::chrono::milliseconds;

// One Postgres database with its own top-level queue.
struct DatabaseConfig {
  // A label for logs and stats; non-empty and unique among the databases. Default: "" here,
  // which Consumer and the YAML reader replace with "db<N>", the database's 1-based position
  // (validate() alone rejects an empty name).
  std::string name;
  // libpq connection string or URI; non-empty and well-formed. YAML: url, or url_env: NAME. The
  // consumer's connections add connect_timeout=5 (seconds) unless it sets one.
  std::string url;
};

// Algorithm 1: the Scanner.
struct ScannerConfig {
  int peek_max = 1000;  // max vested pointers read per peek. 1..100000. Default 1000.
  // Fraction of the peeked pointers selected, uniformly at random: each scan selects
  // ceil(peeked x selection_frac) of them, at most selection_max. Smaller means less contention
  // between consumers but higher latency (paper, Figure 7). Range (0, 1]. Default 0.02.
  double selection_frac = 0.02;
  int selection_max = 2000;  // max pointers selected per peek. >= 1. Default 2000.
  // Pointers selected in one database before the Scanner moves on to the next database of its
  // round. Range >= 1. Default 10000.
  int processing_bound = 10000;
  // How long the Scanner sleeps after a round over all databases found no vested pointer.
  // Bounds the pickup latency of an idle queue. Range 1ms..10s. Default 20ms.
  Millis idle_poll_interval{20};
  // The shortest time between the starts of two scans of one database. Under load, each scan then
  // finds what vested since the one before and hands it to the Managers in one visit, instead of
  // a scan and a visit for every job or two: Postgres' cost of both is mostly per statement and
  // per commit (docs/consumer.md#pacing-the-scans). Adds at most this much to an item's pickup
  // latency (one that vests right after a scan waits for the next). Not applied for 100 ms after a
  // visit that took half of manager.dequeue_max items or more (a backlog: the Workers need the next
  // visit at once). 0: scan whenever there is room. Range 0..1s. Default 2ms.
  Millis min_scan_interval{2};
  // Listen for wake-up notifications (channel quick_wakeup; docs/consumer.md#waking-up) on one more
  // connection per database. A new zone, or an item that vests before its parked zone's pointer,
  // notifies; so an idle Scanner sleeps until then, until the next pointer vests (its scans
  // read when, within a horizon that doubles with each idle round: docs/consumer.md), or
  // listening_poll_interval, whichever comes first, instead of polling. Off, or
  // while a listener connection is down, it polls every idle_poll_interval. Turn off where
  // LISTEN does not work (a pooler in transaction mode). Default true.
  bool listen_for_wakeups = true;
  // The longest an idle Scanner sleeps while listening: a fallback for work no notification
  // announced (e.g. from a transaction that set quick.wake_consumers = off); never shorter than
  // idle_poll_interval. Range 1ms..10min. Default 1s.
  Millis listening_poll_interval{1000};
  // Take part in the per-database election of the in-order Scanner (one consumer at a time
  // processes pointers in vesting order, so no pointer starves). Default true.
  bool in_order_election = true;
  // The in-order role's lease: renewed every third of it; a dead holder's role moves to another
  // consumer within this time. Range 1s..10min. Default 5s.
  Millis in_order_lease_duration{5000};
  // Tenant partitioning between consumers (docs/consumer.md#tenant-partitioning): each live
  // consumer of a database owns a share of its tenants; a Scanner takes its own vested pointers at
  // once and other consumers' once they have been vested this long. Keeps consumers from racing
  // for the same few pointers on a lightly loaded queue. 0 turns partitioning off (every Scanner
  // selects from all pointers, as in the paper). Range 0..10min. Default 50ms. Membership is a
  // lease of in_order_lease_duration in quick.consumer_roles (role 'member:<consumer_id>').
  Millis partition_grace{50};
  // Pull requests (earlier items enqueued into parked zones) applied per scan, in requests.
  // Range >= 1. Default 10000.
  int pulls_per_scan = 10000;
};

// Algorithm 2: the Managers.
struct ManagerConfig {
  // Manager threads, each with its own connection to every database; at most this many visits
  // run at once. Range 1..256. Default 2.
  int threads = 2;
  // Max items dequeued from one zone per visit (pointer lease), in items: the fairness bound
  // ("water filling"). Range 1..10000. Default 200. Larger means fewer visits per item for big
  // zones: one zone's visits run one at a time, each with a cost of its own beyond its items, so
  // this bounds how fast one tenant's backlog drains; the default is sized for draining big zones
  // of short jobs (measurements: docs/configuration.md#manager-algorithm-2). Smaller keeps less of
  // a big zone leased by one consumer: every item taken stays leased to it until a Worker runs
  // it, so for jobs that take seconds, set it near worker.threads.
  int dequeue_max = 200;
  // Pointer lease duration: the longest a Manager may hold its zones in one visit. A visit is one
  // transaction whose row locks are the lease; this is the Manager sessions' statement_timeout,
  // so past p_duration Postgres cancels the visit and the zones are free at once; the next visits
  // then take fewer zones until they fit (docs/consumer.md#manager).
  // Range 100ms..10min. Default 2s.
  Millis p_duration{2000};
  // An empty zone's pointer is deleted only after it has been idle this long, so a zone that
  // refills soon keeps its pointer. Range 0..24h. Default 1min.
  Millis min_inactive{60000};
  // Zones handled by one Manager in one visit (one statement and commit: Postgres' cost is per
  // statement, so zones are visited in batches), in zones. The in-order Scanner takes at least
  // one visit's worth of the oldest pointers per scan (this, or pointers_per_batch_alone when the
  // consumer is alone; at most scanner.selection_max). Range 1..1000. Default 100.
  int pointers_per_batch = 100;
  // The same for a consumer that is its database's only live consumer (known from tenant
  // partitioning's membership, so it needs scanner.partition_grace > 0): bigger visits make each
  // zone cheaper, but several consumers sharing a database lose throughput by them, so only a
  // lone consumer uses this size (docs/configuration.md#manager-algorithm-2). Never fewer than
  // pointers_per_batch; 0 = off. Range 0..1000. Default 400.
  int pointers_per_batch_alone = 400;
  // Payload bytes (of the items' JSON text) one visit may take, in bytes, over all its zones,
  // filled round robin over them; a visit always takes at least one item. Bounds what one visit
  // sends, so a consumer that stalls cannot keep the server blocked sending it, with the zones
  // locked. Range 1024..1073741824. Default 4194304 (4 MiB).
  std::int64_t visit_max_bytes = 4194304;
};

// Algorithm 3: the Workers.
struct WorkerConfig {
  int threads = 8;  // Worker threads (handlers run at once). 1..1024. Default 8.
  // Item lease; extended while the handler runs. A dead consumer's items run again after this
  // long. Range 1s..24h. Default 30s.
  Millis item_lease_duration{30000};
  // How often leases of held items are extended. Range 1ms..item_lease_duration (exclusive).
  // Default (unset): a third of item_lease_duration.
  std::optional<Millis> lease_extend_interval;
  // In zones: the Scanner looks for more zones only while fewer than this many zones have items
  // waiting in the local buffer (Workers take items round robin over zones). A zone with
  // 2 x threads items waiting is not visited again until they run low. Range 0..100000 (0 counts
  // as 1). Default (unset): threads.
  std::optional<int> prefetch_zones;
  // Completions (and retries, releases, permanent failures) that handlers did not commit in their
  // own transaction are written in batches: a batch is written once its oldest result has waited
  // this long, or as soon as it holds ack_batch_max results. Range 1ms..10s. Default 5ms.
  Millis ack_interval{5};
  int ack_batch_max = 1000;  // max results per acknowledgment statement. 1..100000. Default 1000.
};

enum class PermanentFailureAction {
  kMoveToDeadItems,  // keep it in quick.dead_items for inspection and re-enqueue (default)
  kDelete,
};

// How failures of one job type are retried (paper section 6: "each type of queued items can set
// its own retry policy"). Every failed attempt counts, in-line retries included: in
// max_attempts, in the backoff and in the item's error count
// (docs/consumer.md#retry-policies-and-throttles).
struct RetryPolicy {
  int inline_retries = 0;  // immediate retries in the same Worker, then requeue. 0..100. Default 0.
  // After this many failed attempts, the failure is permanent. >= 0; 0 = no limit. Default 25.
  int max_attempts = 25;
  // An item still failing this long after its enqueue is given up. >= 0; 0 = never. Default 0.
  Millis give_up_after{0};
  Millis backoff_base{1000};   // first retry delay, doubled per failure. 1ms..24h. Default 1s.
  Millis backoff_max{600000};  // cap on the retry delay. >= backoff_base. Default 10min.
  // Each retry delay is varied at random by up to +- this fraction, so that failed items do not
  // retry in lockstep. Range 0..1. Default 0.2.
  double backoff_jitter = 0.2;
  PermanentFailureAction on_permanent_failure = PermanentFailureAction::kMoveToDeadItems;
};

// `quick worker`: the exit status by which a command says "failed, try again later" (EX_TEMPFAIL of
// sysexits.h). Every non-zero status other than permanent_failure_exit_code is a transient failure;
// this one is reserved so that it can never be configured as permanent.
inline constexpr int kTransientFailureExitCode = 75;

struct JobTypeConfig {
  // Handler time limit (paper: execution_bound_t), counted from the handler's start, in-line
  // retries included. Past it should_stop() turns true and the item's lease is no longer
  // extended; a result other than done then counts as a failure. Range 1ms..7d. Default 5min.
  Millis execution_bound{300000};
  // Per-consumer throttle, in items: at most this many items of this type held by this consumer
  // at once (buffered or running); extra items are released to vest again shortly. Cluster-wide
  // the limit is max_in_flight x consumers. Range >= 0; 0 = no limit. Default 0.
  int max_in_flight = 0;
  RetryPolicy retry;
  // For `quick worker` only: the command run for each item (argv; the payload is its stdin).
  // When given, its first element (the program) must not be empty. Default: none.
  std::vector<std::string> command;
  // `quick worker` only: a command exiting with this status failed permanently (no retry); any
  // other non-zero status is a transient failure, retried per policy, 75 (EX_TEMPFAIL of
  // sysexits.h, "try again later") always among them. Range 1..255, except 75. Default 65
  // (EX_DATAERR, "the input data was incorrect": the payload cannot ever succeed).
  int permanent_failure_exit_code = 65;
  // `quick worker` only: names of variables of the worker's own environment that the command
  // also gets. A command starts from an allow-listed environment, never the worker's whole one
  // (which holds database URLs and libpq's PG* settings): its item's QUICK_* variables, PATH,
  // HOME, LANG, LC_* and TZ (those set), and these names. Each must be a variable name
  // ([A-Za-z_][A-Za-z0-9_]*) and must not start with PG or QUICK_ (reserved: libpq's settings,
  // the item's variables, QUICK_DATABASE_URL); the YAML reader also refuses a database's url_env.
  // Names the worker does not have are skipped. Default: none. In YAML a job type's list replaces
  // default_job_type's.
  std::vector<std::string> environment;
};

// What a Worker does with an item whose job type has no handler in this consumer.
enum class UnhandledJobTypeAction {
  // Give it back, without counting an error, to vest again after unhandled_job_type_delay: another
  // consumer, or a later deploy of this one, may handle it (default).
  kRelease,
  // Fail it permanently, as its job type's retry.on_permanent_failure says (quick.dead_items by
  // default).
  kDeadLetter,
};

struct ConsumerConfig {
  // Unique per consumer; names it in leases, logs and its connections' application_name.
  // Default: "" here, which Consumer replaces with "<hostname>-<pid>-<random>".
  std::string consumer_id;
  std::vector<DatabaseConfig> databases;  // at least one
  ScannerConfig scanner;
  ManagerConfig manager;
  WorkerConfig worker;
  JobTypeConfig default_job_type;  // for job types not listed below
  // Names 1..100 characters, as an item's job_type; in YAML each starts from default_job_type.
  std::map<std::string, JobTypeConfig> job_types;
  // How long stop() lets running handlers finish before asking them to stop. Range 0..1h.
  // Default 10s.
  Millis stop_deadline{10000};
  // Cap of the reconnect/retry backoff of every background loop: after an error a loop waits
  // 50ms (20ms on the writer thread), doubling with each further failure up to this cap, +-25%
  // jitter; after a permanent error (such as a missing schema) at least 1s
  // (docs/consumer.md#errors). Range 10ms..10min. Default 5s.
  Millis reconnect_delay_max{5000};
  // Items of a job type without a handler (Consumer::handle; for `quick worker`, not listed under
  // job_types) are released (kRelease) or dead-lettered (kDeadLetter), counted in
  // ConsumerStats::items_unhandled, and logged once per job type per consumer (a warning).
  // YAML: release or dead_letter. Default release.
  UnhandledJobTypeAction unhandled_job_types = UnhandledJobTypeAction::kRelease;
  // With kRelease, how long such an item waits before it vests again: each release costs a visit
  // and a write, so not much below the time it takes to deploy the missing handler.
  // Range 1s..24h. Default 1min.
  Millis unhandled_job_type_delay{60000};

  // The effective settings for `job_type`: its job_types entry, else default_job_type.
  const JobTypeConfig& job_type(const std::string& job_type) const;
  // worker.lease_extend_interval, or a third of worker.item_lease_duration when unset.
  Millis effective_lease_extend_interval() const;
  // worker.prefetch_zones, or worker.threads when unset (0 is returned as 0).
  int effective_prefetch_zones() const;
};

// Throws InvalidArgument naming the first invalid option ("manager.dequeue_max must be between
// 1 and 10000, got 0"). Checks every range stated above and that each url is a well-formed
// connection string; connects to nothing.
void validate(const ConsumerConfig& config);

// YAML, as documented in docs/configuration.md. Durations are strings with units ("250ms",
// "2s", "1m") and must be whole milliseconds. A database's url may be given as url_env: NAME
// (read from the environment now). Unknown or repeated keys and wrong types are errors, with
// their line and column. Validates the result; throws InvalidArgument.
ConsumerConfig parse_config_yaml(const std::string& yaml_text);
// parse_config_yaml of the file's contents; errors (including an unreadable file) are
// InvalidArgument prefixed with `path`.
ConsumerConfig load_config_file(const std::string& path);

}  // namespace quick
