// Counters a consumer keeps: readable from the library (Consumer::stats()) and printed by
// `quick worker`. docs/consumer.md#counters-and-logs explains each.
//
// Every std::uint64_t below is a count (of events, items, pointers or zones, as its comment
// says) since the consumer started, never reset, except the "Now" group, which is a current
// value. All start at 0, live_consumers at 1.
//
// Thread safety: plain values (a snapshot).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>

namespace quick {

// The fixed upper bounds, in milliseconds, of LatencySummary::cumulative_counts: the buckets of
// the Prometheus histograms (quick/metrics.h), 1 ms to 1 minute.
inline constexpr std::array<double, 16> kLatencyBucketBoundsMs = {1,   2.5,  5,    10,   25,    50,    100,   250,
                                                                  500, 1000, 2500, 5000, 10000, 20000, 30000, 60000};

// Percentiles of a latency distribution, in milliseconds (0 when no samples), since the consumer
// started. Read from buckets about 4% wide, so approximate within a bucket.
struct LatencySummary {
  std::uint64_t count = 0;  // samples
  double p50_ms = 0, p99_ms = 0, p999_ms = 0, max_ms = 0, mean_ms = 0;
  double sum_ms = 0;  // of all samples
  // Exact: cumulative_counts[i] samples were at most kLatencyBucketBoundsMs[i] (count is the +Inf
  // bucket).
  std::array<std::uint64_t, kLatencyBucketBoundsMs.size()> cumulative_counts{};
};

// The name job types without a handler in this consumer are counted under in
// ConsumerStats::job_types, so that the number of series stays bounded.
inline constexpr const char* kOtherJobTypes = "(other)";

// Counters of one job type since the consumer started (see ConsumerStats for their meanings).
struct JobTypeStats {
  std::uint64_t items_done = 0;
  std::uint64_t items_retried = 0;
  std::uint64_t items_dead = 0;
  std::uint64_t items_lease_lost = 0;
  LatencySummary pickup_latency;    // vested -> handler start
  LatencySummary handler_duration;  // handler start -> end, in-line retries included
};

struct ConsumerStats {
  // Scanner
  std::uint64_t scans = 0;                    // peeks issued
  std::uint64_t pointers_peeked = 0;          // sum of peek sizes
  std::uint64_t pointers_selected = 0;        // handed to Managers
  std::uint64_t in_order_scans = 0;           // scans done as the in-order Scanner
  std::uint64_t pulls_applied = 0;            // parked pointers pulled earlier
  std::uint64_t pointers_left_to_owners = 0;  // vested, left to their owners (partition_grace)
  std::uint64_t wakeups = 0;                  // wake-up notifications received (quick_wakeup)
  // Managers
  std::uint64_t visits = 0;                        // Manager visits done (one statement each)
  std::uint64_t pointer_lease_attempts = 0;        // zones in those visits
  std::uint64_t pointer_leases_won = 0;            // zones visited
  std::uint64_t pointer_leases_lost = 0;           // conflicts (another consumer had it), of which:
  std::uint64_t pointer_conflicts_locked = 0;      //   another consumer was visiting the zone
  std::uint64_t pointer_conflicts_not_vested = 0;  //   requeued by another since the peek
  std::uint64_t pointer_conflicts_gone = 0;        //   the pointer had been garbage-collected
  std::uint64_t pointers_requeued = 0;
  std::uint64_t pointers_parked = 0;
  std::uint64_t pointers_collected = 0;  // garbage-collected
  std::uint64_t pointers_released_busy = 0;
  std::uint64_t items_dequeued = 0;
  std::uint64_t items_throttled = 0;  // released because their type was at max_in_flight
  // Workers
  std::uint64_t items_done = 0;
  std::uint64_t items_retried = 0;  // requeued with backoff
  std::uint64_t items_inline_retries = 0;
  std::uint64_t items_dead = 0;  // moved to quick.dead_items or deleted
  // Items met without a handler for their job type (released or dead-lettered, per
  // ConsumerConfig::unhandled_job_types; so also counted in items_released or items_dead).
  std::uint64_t items_unhandled = 0;
  std::uint64_t items_lease_lost = 0;       // completion refused: someone else holds the item
  std::uint64_t items_released = 0;         // given back unprocessed (stop, throttle)
  std::uint64_t items_execution_bound = 0;  // handlers stopped by their execution bound
  std::uint64_t lease_extensions = 0;       // item leases extended
  std::uint64_t handler_exceptions = 0;
  // Errors of background loops (all retried)
  std::uint64_t database_errors = 0;
  std::uint64_t reconnects = 0;
  std::uint64_t in_doubt_commits = 0;
  // Latencies
  LatencySummary pickup_latency;          // enqueue (or vesting, if later) -> handler start
  LatencySummary pointer_pickup_latency;  // a pointer's vesting -> its zone's visit
  LatencySummary handler_duration;        // handler start -> end, in-line retries included
  // Now (for live_consumers and pointers_per_visit: the largest value over its databases;
  // live_consumers stays 1 when scanner.partition_grace is 0)
  std::uint64_t items_buffered = 0;      // waiting for a Worker
  std::uint64_t items_running = 0;       // handlers running
  bool in_order_role = false;            // holds the in-order role for at least one database
  std::uint64_t live_consumers = 1;      // consumers sharing its tenants, itself included (max)
  std::uint64_t pointers_per_visit = 0;  // zones per visit now (max; 0 before its first scan)
  // Per job type: every job type with a registered handler (from Consumer::handle() on), and
  // kOtherJobTypes for all others together. Not part of to_string().
  std::map<std::string, JobTypeStats> job_types;

  std::string to_string() const;  // one line per group, for logs and `quick worker`
};

}  // namespace quick
