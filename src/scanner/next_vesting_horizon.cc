#include "scanner/next_vesting_horizon.h"

#include <algorithm>

namespace quick::scanner {

NextVestingHorizon::NextVestingHorizon(std::chrono::milliseconds shortest, std::chrono::milliseconds longest)
    : shortest_(std::max(std::chrono::milliseconds(1), std::min(shortest, longest))),
      longest_(std::max(shortest_, longest)),
      horizon_(shortest_) {}

void NextVestingHorizon::observe(bool saw_vested) {
  horizon_ = saw_vested ? shortest_ : std::min(longest_, 2 * horizon_);
}

}  // namespace quick::scanner
