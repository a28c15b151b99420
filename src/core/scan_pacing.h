// Pacing the scans of one database (scanner.min_scan_interval; docs/consumer.md#pacing-the-scans).
//
// Why. A scan and the visit it starts cost Postgres about the same for one job as for ten, so a
// Scanner that scans again as soon as there is room serves a steady stream of small jobs with a
// scan and a visit for every job or two. Scans that start at least the interval apart each take
// what vested since the last, in one visit.
//
// Why not always. When visits are big (a zone with a backlog gives half of manager.dequeue_max
// items or more, or many zones give a few each), the Workers need the next visit as soon as they
// have room; a paced scan would leave them idle (a one-tenant drain lost a fifth of its rate). So
// a visit that took at least half of dequeue_max items (at least one) turns pacing off for
// kBacklogMemory.
//
// Managers report their visits (visit_finished), the Scanner asks before each scan
// (wait_before_scan); both from their own threads.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <limits>

namespace quick::core {

class ScanPacing {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::milliseconds kBacklogMemory{100};

  // A visit of this database took `items` items, with manager.dequeue_max `dequeue_max`.
  void visit_finished(std::size_t items, int dequeue_max, Clock::time_point now);
  // How long the Scanner waits before its next scan of this database, whose last scan started at
  // `last_scan` (zero: scan now).
  Clock::duration wait_before_scan(Clock::time_point last_scan, std::chrono::milliseconds interval,
                                   Clock::time_point now) const;

 private:
  static constexpr Clock::rep kNever = std::numeric_limits<Clock::rep>::min();
  std::atomic<Clock::rep> backlog_seen_{kNever};  // when a visit last found a backlog (time_since_epoch)
};

}  // namespace quick::core
