#include "support/quick_pool.h"

#include <algorithm>

namespace quick::bench {

QuickPool::QuickPool(const ConsumerConfig& config, int consumers, const std::vector<std::string>& job_types,
                     Handler handler) {
  for (int i = 0; i < consumers; ++i) {
    ConsumerConfig own = config;
    own.consumer_id = "bench-" + std::to_string(i + 1);
    consumers_.push_back(std::make_unique<Consumer>(own));
    for (const auto& job_type : job_types) consumers_.back()->handle(job_type, handler);
  }
}

void QuickPool::start() {
  for (auto& consumer : consumers_) consumer->start();
}

void QuickPool::stop() {
  for (auto& consumer : consumers_) consumer->stop();
}

std::uint64_t QuickPool::done() const {
  std::uint64_t total = 0;
  for (const auto& consumer : consumers_) total += consumer->stats().items_done;
  return total;
}

ConsumerStats QuickPool::total_stats() const {
  std::vector<ConsumerStats> stats;
  for (const auto& consumer : consumers_) stats.push_back(consumer->stats());
  return sum_consumer_stats(stats);
}

ConsumerStats sum_consumer_stats(const std::vector<ConsumerStats>& stats) {
  ConsumerStats total;
  if (stats.empty()) return total;
  total = stats.front();  // the latency summaries and job_types stay the first consumer's
  for (std::size_t i = 1; i < stats.size(); ++i) {
    const ConsumerStats& s = stats[i];
    total.scans += s.scans;
    total.pointers_peeked += s.pointers_peeked;
    total.pointers_selected += s.pointers_selected;
    total.in_order_scans += s.in_order_scans;
    total.pulls_applied += s.pulls_applied;
    total.pointers_left_to_owners += s.pointers_left_to_owners;
    total.wakeups += s.wakeups;
    total.visits += s.visits;
    total.pointer_lease_attempts += s.pointer_lease_attempts;
    total.pointer_leases_won += s.pointer_leases_won;
    total.pointer_leases_lost += s.pointer_leases_lost;
    total.pointer_conflicts_locked += s.pointer_conflicts_locked;
    total.pointer_conflicts_not_vested += s.pointer_conflicts_not_vested;
    total.pointer_conflicts_gone += s.pointer_conflicts_gone;
    total.pointers_requeued += s.pointers_requeued;
    total.pointers_parked += s.pointers_parked;
    total.pointers_collected += s.pointers_collected;
    total.pointers_released_busy += s.pointers_released_busy;
    total.items_dequeued += s.items_dequeued;
    total.items_throttled += s.items_throttled;
    total.items_done += s.items_done;
    total.items_retried += s.items_retried;
    total.items_inline_retries += s.items_inline_retries;
    total.items_dead += s.items_dead;
    total.items_unhandled += s.items_unhandled;
    total.items_lease_lost += s.items_lease_lost;
    total.items_released += s.items_released;
    total.items_execution_bound += s.items_execution_bound;
    total.lease_extensions += s.lease_extensions;
    total.handler_exceptions += s.handler_exceptions;
    total.database_errors += s.database_errors;
    total.reconnects += s.reconnects;
    total.in_doubt_commits += s.in_doubt_commits;
    total.items_buffered += s.items_buffered;
    total.items_running += s.items_running;
    total.pointers_per_visit = std::max(total.pointers_per_visit, s.pointers_per_visit);
    total.live_consumers = std::max(total.live_consumers, s.live_consumers);
    total.in_order_role = total.in_order_role || s.in_order_role;
  }
  return total;
}

int connections_per_consumer(const ConsumerConfig& config) {
  return static_cast<int>(config.databases.size()) * (1 + config.manager.threads + 1);
}

}  // namespace quick::bench
