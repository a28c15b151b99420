#include "core/counters.h"

namespace quick::core {

JobTypeStats JobTypeCounters::snapshot() const {
  JobTypeStats stats;
  stats.items_done = items_done.load(std::memory_order_relaxed);
  stats.items_retried = items_retried.load(std::memory_order_relaxed);
  stats.items_dead = items_dead.load(std::memory_order_relaxed);
  stats.items_lease_lost = items_lease_lost.load(std::memory_order_relaxed);
  stats.pickup_latency = pickup_latency.summary();
  stats.handler_duration = handler_duration.summary();
  return stats;
}

JobTypeCounterSet::JobTypeCounterSet() {
  auto other = std::make_unique<JobTypeCounters>();
  other_ = other.get();
  by_type_.emplace(kOtherJobTypes, std::move(other));
}

void JobTypeCounterSet::track(const std::string& job_type) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!by_type_.count(job_type)) by_type_.emplace(job_type, std::make_unique<JobTypeCounters>());
}

JobTypeCounters& JobTypeCounterSet::of(const std::string& job_type) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto found = by_type_.find(job_type);
  return found == by_type_.end() ? *other_ : *found->second;
}

std::map<std::string, JobTypeStats> JobTypeCounterSet::snapshot() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::map<std::string, JobTypeStats> stats;
  for (const auto& [job_type, counters] : by_type_) stats.emplace(job_type, counters->snapshot());
  return stats;
}

void Counters::count(ItemEvent event, const std::string& job_type) {
  JobTypeCounters& type = job_types.of(job_type);
  const auto pick = [&](std::atomic<std::uint64_t> Counters::*consumer_counter,
                        std::atomic<std::uint64_t> JobTypeCounters::*type_counter) {
    add(this->*consumer_counter);
    add(type.*type_counter);
  };
  switch (event) {
    case ItemEvent::kDone: pick(&Counters::items_done, &JobTypeCounters::items_done); break;
    case ItemEvent::kRetried: pick(&Counters::items_retried, &JobTypeCounters::items_retried); break;
    case ItemEvent::kDead: pick(&Counters::items_dead, &JobTypeCounters::items_dead); break;
    case ItemEvent::kLeaseLost: pick(&Counters::items_lease_lost, &JobTypeCounters::items_lease_lost); break;
  }
}

void Counters::record_pickup(const std::string& job_type, std::chrono::microseconds latency) {
  pickup_latency.record(latency);
  job_types.of(job_type).pickup_latency.record(latency);
}

void Counters::record_handler_duration(const std::string& job_type, std::chrono::microseconds duration) {
  handler_duration.record(duration);
  job_types.of(job_type).handler_duration.record(duration);
}

ConsumerStats Counters::snapshot() const {
  ConsumerStats stats;
#define QUICK_COPY_COUNTER(name) stats.name = name.load(std::memory_order_relaxed);
  QUICK_CONSUMER_COUNTERS(QUICK_COPY_COUNTER)
#undef QUICK_COPY_COUNTER
  stats.pickup_latency = pickup_latency.summary();
  stats.pointer_pickup_latency = pointer_pickup_latency.summary();
  stats.handler_duration = handler_duration.summary();
  stats.job_types = job_types.snapshot();
  return stats;
}

}  // namespace quick::core
