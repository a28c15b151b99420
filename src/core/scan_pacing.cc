#include "core/scan_pacing.h"

#include <algorithm>

namespace quick::core {

void ScanPacing::visit_finished(std::size_t items, int dequeue_max, Clock::time_point now) {
  const auto backlog_items = static_cast<std::size_t>(std::max(1, dequeue_max / 2));
  if (items >= backlog_items) backlog_seen_.store(now.time_since_epoch().count());
}

ScanPacing::Clock::duration ScanPacing::wait_before_scan(Clock::time_point last_scan,
                                                         std::chrono::milliseconds interval,
                                                         Clock::time_point now) const {
  const Clock::rep backlog = backlog_seen_.load();
  if (backlog != kNever && now - Clock::time_point(Clock::duration(backlog)) < kBacklogMemory) {
    return Clock::duration::zero();
  }
  const auto since = now - last_scan;
  return since < interval ? interval - since : Clock::duration::zero();
}

}  // namespace quick::core
