#include "core/counters.h"

namespace quick::core {

ConsumerStats Counters::snapshot() const {
  ConsumerStats stats;
#define QUICK_COPY_COUNTER(name) stats.name = name.load(std::memory_order_relaxed);
  QUICK_CONSUMER_COUNTERS(QUICK_COPY_COUNTER)
#undef QUICK_COPY_COUNTER
  stats.pickup_latency = pickup_latency.summary();
  stats.pointer_pickup_latency = pointer_pickup_latency.summary();
  stats.handler_duration = handler_duration.summary();
  return stats;
}

}  // namespace quick::core
