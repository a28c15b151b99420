// The live counters behind ConsumerStats. Every thread increments them; stats() copies them.
//
// QUICK_CONSUMER_COUNTERS lists each counter once; it must name fields of quick::ConsumerStats
// (a misspelt name fails to compile), and generates the atomics, the snapshot and the printout.
//
// Thread safety: all members are atomics or internally locked histograms.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "quick/stats.h"
#include "util/latency_histogram.h"

// One group of counters per line, as ConsumerStats lists them.
// clang-format off
#define QUICK_CONSUMER_COUNTERS(X)                                                                    \
  X(scans) X(pointers_peeked) X(pointers_selected) X(in_order_scans) X(pulls_applied)                 \
  X(pointers_left_to_owners) X(wakeups)                                                              \
  X(visits) X(pointer_lease_attempts) X(pointer_leases_won) X(pointer_leases_lost)                    \
  X(pointer_conflicts_locked) X(pointer_conflicts_not_vested) X(pointer_conflicts_gone)               \
  X(pointers_requeued) X(pointers_parked) X(pointers_collected) X(pointers_released_busy)             \
  X(items_dequeued) X(items_throttled) X(items_done) X(items_retried) X(items_inline_retries)         \
  X(items_dead) X(items_unhandled) X(items_lease_lost) X(items_released) X(items_execution_bound)     \
  X(lease_extensions) X(handler_exceptions) X(database_errors) X(reconnects) X(in_doubt_commits)
// clang-format on

namespace quick::core {

// The counters of one job type (JobTypeStats).
struct JobTypeCounters {
  std::atomic<std::uint64_t> items_done{0};
  std::atomic<std::uint64_t> items_retried{0};
  std::atomic<std::uint64_t> items_dead{0};
  std::atomic<std::uint64_t> items_lease_lost{0};
  util::LatencyHistogram pickup_latency;
  util::LatencyHistogram handler_duration;

  JobTypeStats snapshot() const;
};

// Counters per job type, for the job types with a handler and one kOtherJobTypes entry for the
// rest: an item's job type is whatever a producer wrote, so counting each would let producers
// grow the consumer's memory and the metrics' series without bound.
class JobTypeCounterSet {
 public:
  JobTypeCounterSet();
  // Gives `job_type` counters of its own (Consumer::handle()); a second call keeps them.
  void track(const std::string& job_type);
  // The counters of `job_type`, or the kOtherJobTypes ones. The reference stays valid.
  JobTypeCounters& of(const std::string& job_type);
  std::map<std::string, JobTypeStats> snapshot() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::unique_ptr<JobTypeCounters>> by_type_;  // guarded by mutex_
  JobTypeCounters* other_;                                           // in by_type_
};

// What became of an item, counted for the consumer and for its job type.
enum class ItemEvent { kDone, kRetried, kDead, kLeaseLost };

struct Counters {
#define QUICK_DECLARE_COUNTER(name) std::atomic<std::uint64_t> name{0};
  QUICK_CONSUMER_COUNTERS(QUICK_DECLARE_COUNTER)
#undef QUICK_DECLARE_COUNTER

  util::LatencyHistogram pickup_latency;          // vested -> handler start
  util::LatencyHistogram pointer_pickup_latency;  // pointer vested -> visited
  util::LatencyHistogram handler_duration;
  JobTypeCounterSet job_types;

  // Adds to items_done (or ...) and to the same counter of the item's job type.
  void count(ItemEvent event, const std::string& job_type);
  void record_pickup(const std::string& job_type, std::chrono::microseconds latency);
  void record_handler_duration(const std::string& job_type, std::chrono::microseconds duration);

  // Counters only; the caller fills in the "now" fields.
  ConsumerStats snapshot() const;
};

inline void add(std::atomic<std::uint64_t>& counter, std::uint64_t amount = 1) {
  counter.fetch_add(amount, std::memory_order_relaxed);
}

}  // namespace quick::core
