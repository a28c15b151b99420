#include "support/quick_pool.h"

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
  ConsumerStats total;
  bool first = true;
  for (const auto& consumer : consumers_) {
    const ConsumerStats s = consumer->stats();
    if (first) {
      total = s;
      first = false;
      continue;
    }
    total.scans += s.scans;
    total.pointers_peeked += s.pointers_peeked;
    total.pointers_selected += s.pointers_selected;
    total.pointer_lease_attempts += s.pointer_lease_attempts;
    total.pointer_leases_won += s.pointer_leases_won;
    total.pointer_leases_lost += s.pointer_leases_lost;
    total.pointer_conflicts_locked += s.pointer_conflicts_locked;
    total.pointer_conflicts_not_vested += s.pointer_conflicts_not_vested;
    total.pointer_conflicts_gone += s.pointer_conflicts_gone;
    total.pointers_requeued += s.pointers_requeued;
    total.pointers_parked += s.pointers_parked;
    total.pointers_collected += s.pointers_collected;
    total.items_dequeued += s.items_dequeued;
    total.items_done += s.items_done;
    total.items_retried += s.items_retried;
    total.items_lease_lost += s.items_lease_lost;
    total.database_errors += s.database_errors;
  }
  return total;
}

int connections_per_consumer(const ConsumerConfig& config) {
  return static_cast<int>(config.databases.size()) * (1 + config.manager.threads + 1);
}

}  // namespace quick::bench
