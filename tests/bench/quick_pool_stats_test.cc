// QuickPool::total_stats (bench/support/quick_pool.h): the counters of several consumers, summed.
// steady_load.cc and load_targets.cc divide them by each other (zones per visit, jobs per scan):
// a counter left out of the sum (visits was) is one consumer's count over all consumers' others.
#include <gtest/gtest.h>

#include "support/quick_pool.h"

namespace quick::bench {
namespace {

// Every counter of ConsumerStats (quick/stats.h), by name.
#define QUICK_BENCH_EACH_COUNTER(X) \
  X(scans)                          \
  X(pointers_peeked)                \
  X(pointers_selected)              \
  X(in_order_scans)                 \
  X(pulls_applied)                  \
  X(pointers_left_to_owners)        \
  X(wakeups)                        \
  X(visits)                         \
  X(pointer_lease_attempts)         \
  X(pointer_leases_won)             \
  X(pointer_leases_lost)            \
  X(pointer_conflicts_locked)       \
  X(pointer_conflicts_not_vested)   \
  X(pointer_conflicts_gone)         \
  X(pointers_requeued)              \
  X(pointers_parked)                \
  X(pointers_collected)             \
  X(pointers_released_busy)         \
  X(items_dequeued)                 \
  X(items_throttled)                \
  X(items_done)                     \
  X(items_retried)                  \
  X(items_inline_retries)           \
  X(items_dead)                     \
  X(items_unhandled)                \
  X(items_lease_lost)               \
  X(items_released)                 \
  X(items_execution_bound)          \
  X(lease_extensions)               \
  X(handler_exceptions)             \
  X(database_errors)                \
  X(reconnects)                     \
  X(in_doubt_commits)               \
  X(items_buffered)                 \
  X(items_running)

ConsumerStats with_every_counter(std::uint64_t value) {
  ConsumerStats stats;
#define QUICK_BENCH_SET(field) stats.field = value;
  QUICK_BENCH_EACH_COUNTER(QUICK_BENCH_SET)
#undef QUICK_BENCH_SET
  return stats;
}

TEST(QuickPoolStatsTest, EveryCounterIsSummedOverTheConsumers) {
  const ConsumerStats total = sum_consumer_stats({with_every_counter(1), with_every_counter(2), with_every_counter(4)});
#define QUICK_BENCH_CHECK(field) EXPECT_EQ(total.field, 7u) << #field;
  QUICK_BENCH_EACH_COUNTER(QUICK_BENCH_CHECK)
#undef QUICK_BENCH_CHECK
}

TEST(QuickPoolStatsTest, GaugesOfTheLargestAreTheLargest) {
  ConsumerStats a, b;
  a.pointers_per_visit = 3;
  b.pointers_per_visit = 5;
  a.live_consumers = 2;
  b.live_consumers = 1;
  b.in_order_role = true;
  const ConsumerStats total = sum_consumer_stats({a, b});
  EXPECT_EQ(total.pointers_per_visit, 5u);
  EXPECT_EQ(total.live_consumers, 2u);
  EXPECT_TRUE(total.in_order_role);
  EXPECT_EQ(sum_consumer_stats({}).items_done, 0u);
}

}  // namespace
}  // namespace quick::bench
