#include "scanner/scan_floors.h"

#include <algorithm>

namespace quick::scanner {

store::ScanFloors ScanFloorKeeper::next(Clock::time_point now) const {
  if (!next_full_scan_ || now >= *next_full_scan_) return {};
  return floors_;
}

void ScanFloorKeeper::observe(const store::Scan& scan, const store::ScanFloors& used, Clock::time_point now) {
  if (used.requested_from || used.vested_from) return;  // a scan from floors: they stay
  const DbTime edge = scan.database_now - margin_;
  floors_.requested_from = edge;
  // The oldest vested pointer found comes first; none found: nothing vested is older than now.
  floors_.vested_from = scan.pointers.empty() ? edge : std::min(edge, scan.pointers.front().vesting_time);
  next_full_scan_ = now + full_scan_every_;
}

}  // namespace quick::scanner
