#include "scanner/visit_size.h"

#include <algorithm>

namespace quick::scanner {

void LoneConsumerTracker::observe(std::size_t live_consumers) {
  alone_reads_ = live_consumers <= 1 ? std::min(alone_reads_ + 1, kReadsNeeded) : 0;
}

int pointers_per_visit(const ManagerConfig& manager, bool alone) {
  return alone ? std::max(manager.pointers_per_batch, manager.pointers_per_batch_alone) : manager.pointers_per_batch;
}

}  // namespace quick::scanner
