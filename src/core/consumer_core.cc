#include "core/consumer_core.h"

#include "core/lease_keeper.h"

namespace quick::core {

void DatabaseRuntime::mark_in_progress(const std::vector<std::string>& tenants) {
  std::lock_guard<std::mutex> lock(in_progress_mutex_);
  in_progress_.insert(tenants.begin(), tenants.end());
}

void DatabaseRuntime::unmark_in_progress(const std::vector<std::string>& tenants) {
  std::lock_guard<std::mutex> lock(in_progress_mutex_);
  for (const auto& tenant : tenants) {
    in_progress_.erase(tenant);
    settled_since_peek_.insert(tenant);
  }
}

void DatabaseRuntime::begin_peek() {
  std::lock_guard<std::mutex> lock(in_progress_mutex_);
  settled_since_peek_.clear();
}

DatabaseRuntime::ZoneActivity DatabaseRuntime::activity(const std::string& tenant) const {
  std::lock_guard<std::mutex> lock(in_progress_mutex_);
  if (in_progress_.count(tenant) > 0) return ZoneActivity::kInProgress;
  if (settled_since_peek_.count(tenant) > 0) return ZoneActivity::kSettledSincePeek;
  return ZoneActivity::kIdle;
}

void ConsumerCore::notify_visit_finished() {
  {
    std::lock_guard<std::mutex> lock(visit_mutex);
    ++visits_finished;
  }
  visit_finished.notify_all();
  wakeups.signal();
}

void ConsumerCore::wait_for_visit(std::chrono::steady_clock::duration timeout) {
  std::unique_lock<std::mutex> lock(visit_mutex);
  const auto seen = visits_finished;
  visit_finished.wait_for(lock, timeout, [&] { return visits_finished != seen || stop_scanning.requested(); });
}

ConsumerCore::ConsumerCore(ConsumerConfig consumer_config) : config(std::move(consumer_config)) {
  for (const auto& database : config.databases) {
    databases.push_back(std::make_unique<DatabaseRuntime>(database));
  }
  lease_keeper = std::make_unique<LeaseKeeper>(*this);
  work_queue.set_workers(config.worker.threads);
}

}  // namespace quick::core
