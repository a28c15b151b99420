#include "scanner/scan_floors.h"

#include <algorithm>

namespace quick::scanner {

store::ScanFloors ScanFloorKeeper::floors_below(const Refresh& refresh, std::chrono::milliseconds margin) const {
  const DbTime edge = refresh.database_now - margin;
  store::ScanFloors floors;
  floors.requested_from = edge;
  // The oldest vested pointer the refresh found stays in reach; none found: nothing was vested.
  floors.vested_from = refresh.oldest_vested ? std::min(edge, *refresh.oldest_vested) : edge;
  return floors;
}

ScanFloorKeeper::Plan ScanFloorKeeper::next(Clock::time_point now) const {
  if (!last_refresh_ || now >= next_full_) return Plan{Kind::kFull, {}};
  if (now >= next_wide_) {
    Plan wide{Kind::kWide, floors_below(*last_refresh_, kWideMargin)};
    if (late_commit_) {  // below the margin, else not noted
      wide.floors.requested_from = std::min(*wide.floors.requested_from, *late_commit_ - kNarrowMargin);
      wide.floors.vested_from = std::min(*wide.floors.vested_from, *late_commit_ - kNarrowMargin);
    }
    return wide;
  }
  return Plan{Kind::kNarrow, floors_below(*last_refresh_, kNarrowMargin)};
}

void ScanFloorKeeper::observe(const store::Scan& scan, const Plan& plan, Clock::time_point now,
                              Clock::duration duration) {
  last_was_narrow_ = plan.kind == Kind::kNarrow;
  if (last_was_narrow_) return;
  // A wide scan reached back to it (next() saw it), a full one read everything; unless the wide
  // scan left pull requests it could not apply (their pointers locked): then the next wide scan
  // reaches back again, since narrow ones would not.
  // Only a scan that found nothing vested counts here: beside vested pointers, left-over requests
  // are reported for the Scanner to look again soon, and under steady requests from several
  // consumers nearly every wide scan would keep the reach, each then costing about a full scan
  // under a long snapshot.
  const bool left_over = scan.pointers.empty() && scan.next_vesting && *scan.next_vesting <= scan.database_now;
  if (plan.kind == Kind::kFull || !left_over) late_commit_.reset();
  last_refresh_ = Refresh{scan.database_now, scan.pointers.empty()
                                                 ? std::nullopt
                                                 : std::optional<DbTime>(scan.pointers.front().vesting_time)};
  next_wide_ = now + kWideEvery;
  if (plan.kind == Kind::kFull) {
    next_full_ = now + std::max<Clock::duration>(kFullEveryAtLeast, duration * kFullCostFactor);
  }
}

void ScanFloorKeeper::note_late_commit(DbTime started) {
  if (!last_refresh_) return;  // the first scan is a full one
  const DbTime wide_floor = last_refresh_->database_now - kWideMargin;
  if (started >= wide_floor) return;  // the next wide scan reads it anyway
  const DbTime reach = last_refresh_->database_now - kLateCommitReach;
  const DbTime from = std::max(started, reach);
  late_commit_ = late_commit_ ? std::min(*late_commit_, from) : from;
}

std::optional<ScanFloorKeeper::Clock::time_point> ScanFloorKeeper::wide_scan_due() const {
  if (!last_was_narrow_ && !late_commit_) return std::nullopt;
  return next_wide_;
}

}  // namespace quick::scanner
