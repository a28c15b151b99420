// Where the Scanner's next scan starts reading (docs/consumer.md#scanning-from-a-floor).
//
// A scan reads the pull requests in requested_at order and the vested pointers in vesting order,
// each from the start of its index. While a long snapshot holds vacuum back, those starts fill
// with the dead versions of every request applied and every pointer settled since, and a scan
// from the start steps over all of them: a cost that grows with the snapshot's age. So scans
// start at floors taken from the last refresh (its database time less a margin, and for the
// pointers no later than the oldest vested pointer it found):
//   narrow  most scans: the last refresh's time less 100 ms;
//   wide    every 250 ms, a refresh: the last refresh's time less 5 s. Every 250 ms, not every
//           second: a narrow scan reads everything written since its refresh, and while a
//           snapshot holds vacuum back that is every pointer version and pull request of those
//           milliseconds (474 buffers per peek, ~0.6 s behind on average, with 1,000 busy
//           tenants); a wide scan costs about ten narrow ones then, and nothing more otherwise;
//   full    from the beginning, a refresh too: first, then every 10 s or, when a full scan has
//           become slow, every 1,000 times its duration, so that it never takes over 0.1% of the
//           Scanner's time. While a full scan runs the Scanner selects nothing, so what vests
//           meanwhile waits for it: at 1% of the Scanner's time those jobs were the queue's p99
//           under an old snapshot (docs/benchmarks.md#ten-minutes-held-after-zone-time).
// A request or pointer written below a narrow floor (its transaction committed after the refresh,
// its writing statement began before) is read by the next wide scan, within 250 ms: an idle
// Scanner whose last scan was narrow sleeps no longer than until that scan is due (idle_wait.h).
// Below a wide floor (its transaction committed more than 5 s after the writing statement
// began: an application's long transaction that enqueued early), by the next wide scan after its
// wake-up notification arrives (note_late_commit), else by the next full one.
//
// Thread safety: the Scanner thread only.
#pragma once

#include <chrono>
#include <optional>

#include "store/pointer_store.h"

namespace quick::scanner {

class ScanFloorKeeper {
 public:
  using Clock = std::chrono::steady_clock;
  enum class Kind { kNarrow, kWide, kFull };
  struct Plan {
    Kind kind = Kind::kFull;
    store::ScanFloors floors;  // none for a full scan
  };

  // The next scan: full when due (and before the first), else wide when due, else narrow.
  Plan next(Clock::time_point now) const;

  // After a scan made as `plan` took `duration`: a wide or full one is the new refresh.
  void observe(const store::Scan& scan, const Plan& plan, Clock::time_point now, Clock::duration duration);

  // A wake-up notification said that a transaction whose first notifying statement began at
  // `started` has committed (sql/functions/notify_consumers.sql). When that lies below the next
  // wide scan's floor (a transaction that ran over kWideMargin), that scan reaches back to it
  // (and the ones after it while they find nothing vested and pull requests left over), so what
  // it wrote is read within kWideEvery of its commit, not at the next full scan. Reaching back at
  // most kLateCommitReach: anyone may send the notification, and a scan from further back costs as
  // much as a full one while a snapshot holds vacuum back.
  void note_late_commit(DbTime started);

  // After a narrow scan, or with a late commit noted, when the next wide scan is due: what landed
  // below the narrow floor is read then, so an idle Scanner sleeps no longer (idle_wait.h). Unset
  // after a wide or full scan.
  std::optional<Clock::time_point> wide_scan_due() const;

  static constexpr std::chrono::milliseconds kNarrowMargin{100};
  static constexpr std::chrono::milliseconds kWideMargin{5000};
  static constexpr std::chrono::milliseconds kWideEvery{250};
  static constexpr std::chrono::milliseconds kFullEveryAtLeast{10000};
  static constexpr int kFullCostFactor = 1000;
  static constexpr std::chrono::minutes kLateCommitReach{10};

 private:
  struct Refresh {
    DbTime database_now;
    std::optional<DbTime> oldest_vested;
  };
  store::ScanFloors floors_below(const Refresh& refresh, std::chrono::milliseconds margin) const;

  std::optional<Refresh> last_refresh_;  // unset: before the first full scan
  Clock::time_point next_wide_{};
  Clock::time_point next_full_{};
  bool last_was_narrow_ = false;
  std::optional<DbTime> late_commit_;  // the earliest start noted since the last refresh
};

}  // namespace quick::scanner
