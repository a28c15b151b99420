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
  if (now >= next_wide_) return Plan{Kind::kWide, floors_below(*last_refresh_, kWideMargin)};
  return Plan{Kind::kNarrow, floors_below(*last_refresh_, kNarrowMargin)};
}

void ScanFloorKeeper::observe(const store::Scan& scan, const Plan& plan, Clock::time_point now,
                              Clock::duration duration) {
  last_was_narrow_ = plan.kind == Kind::kNarrow;
  if (last_was_narrow_) return;
  last_refresh_ = Refresh{scan.database_now, scan.pointers.empty()
                                                 ? std::nullopt
                                                 : std::optional<DbTime>(scan.pointers.front().vesting_time)};
  next_wide_ = now + kWideEvery;
  if (plan.kind == Kind::kFull) {
    next_full_ = now + std::max<Clock::duration>(kFullEveryAtLeast, duration * kFullCostFactor);
  }
}

std::optional<ScanFloorKeeper::Clock::time_point> ScanFloorKeeper::wide_scan_due() const {
  if (!last_was_narrow_) return std::nullopt;
  return next_wide_;
}

}  // namespace quick::scanner
