// ConsumerStats::to_string (include/quick/stats.h): the text `quick worker` prints and logs.
#include <sstream>

#include "quick/stats.h"

namespace quick {
namespace {

std::string latency_text(const LatencySummary& latency) {
  std::ostringstream out;
  // Fixed, not the default's 3 significant digits, which print 1234.5 as 1.23e+03.
  out << std::fixed;
  out.precision(3);
  out << "n=" << latency.count << " p50=" << latency.p50_ms << "ms p99=" << latency.p99_ms
      << "ms p99.9=" << latency.p999_ms << "ms max=" << latency.max_ms << "ms";
  return out.str();
}

}  // namespace

std::string ConsumerStats::to_string() const {
  std::ostringstream out;
  out << "items: done=" << items_done << " retried=" << items_retried << " dead=" << items_dead
      << " unhandled=" << items_unhandled << " lease_lost=" << items_lease_lost << " released=" << items_released
      << " throttled=" << items_throttled << " inline_retries=" << items_inline_retries
      << " dequeued=" << items_dequeued << " buffered=" << items_buffered << " running=" << items_running << "\n"
      << "pointers: visits=" << visits << " lease_attempts=" << pointer_lease_attempts << " won=" << pointer_leases_won
      << " conflicts=" << pointer_leases_lost << " (locked=" << pointer_conflicts_locked
      << " not_vested=" << pointer_conflicts_not_vested << " gone=" << pointer_conflicts_gone << ")"
      << " requeued=" << pointers_requeued << " parked=" << pointers_parked << " collected=" << pointers_collected
      << " released_busy=" << pointers_released_busy << " pulls=" << pulls_applied << "\n"
      << "scanner: scans=" << scans << " peeked=" << pointers_peeked << " selected=" << pointers_selected
      << " in_order_scans=" << in_order_scans << " left_to_owners=" << pointers_left_to_owners << " wakeups=" << wakeups
      << " live_consumers=" << live_consumers << " pointers_per_visit=" << pointers_per_visit
      << (in_order_role ? " (in-order role)" : "") << "\n"
      << "pickup latency: " << latency_text(pickup_latency) << "\n"
      << "pointer pickup latency: " << latency_text(pointer_pickup_latency) << "\n"
      << "handler duration: " << latency_text(handler_duration) << "\n"
      << "errors: database=" << database_errors << " reconnects=" << reconnects << " in_doubt=" << in_doubt_commits
      << " handler_exceptions=" << handler_exceptions << " execution_bound=" << items_execution_bound;
  return out.str();
}

}  // namespace quick
