// Where the Scanner's next scan starts reading (docs/consumer.md#scanning-from-a-floor).
//
// A scan reads the pull requests in requested_at order and the vested pointers in vesting order,
// each from the start of its index. While a long snapshot holds vacuum back, those starts fill
// with the dead versions of every request applied and every pointer settled since, and every
// scan steps over all of them. So only one scan a second reads from the beginning; the scans in
// between start at floors taken from that full scan: its database time less a margin, and for
// the pointers no later than the oldest vested pointer it found. A request or pointer that lands
// below a floor (written by a statement that began more than the margin before the full scan,
// and committed after it) waits for the next full scan: at most a second.
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

  explicit ScanFloorKeeper(std::chrono::milliseconds full_scan_every = std::chrono::milliseconds{1000},
                           std::chrono::milliseconds margin = std::chrono::milliseconds{1000})
      : full_scan_every_(full_scan_every), margin_(margin) {}

  // The floors for the next scan: none (read from the beginning) when a full scan is due.
  store::ScanFloors next(Clock::time_point now) const;

  // After a scan made with `used`: a full one sets the floors until the next full scan is due.
  void observe(const store::Scan& scan, const store::ScanFloors& used, Clock::time_point now);

 private:
  std::chrono::milliseconds full_scan_every_;
  std::chrono::milliseconds margin_;
  std::optional<Clock::time_point> next_full_scan_;  // unset: before the first full scan
  store::ScanFloors floors_;
};

}  // namespace quick::scanner
