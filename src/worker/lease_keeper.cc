#include "worker/lease_keeper.h"

#include <set>

#include "consumer/consumer_core.h"
#include "consumer/database_session.h"
#include "consumer/loop_errors.h"
#include "store/consumer_store.h"
#include "util/logging.h"

namespace quick::consumer {

void LeaseKeeper::hold(const std::vector<HeldItemPtr>& items) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& item : items) held_.emplace(item.get(), item);
}

void LeaseKeeper::let_go(const HeldItemPtr& item) {
  std::lock_guard<std::mutex> lock(mutex_);
  held_.erase(item.get());
}

std::size_t LeaseKeeper::held_count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return held_.size();
}

bool LeaseKeeper::is_held(const HeldItemPtr& item) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return held_.count(item.get()) > 0;
}

std::vector<HeldItemPtr> LeaseKeeper::snapshot() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<HeldItemPtr> items;
  items.reserve(held_.size());
  for (const auto& [key, item] : held_) items.push_back(item);
  return items;
}

void LeaseKeeper::run(std::shared_ptr<ConsumerCore> core_owner) {
  ConsumerCore& core = *core_owner;
  auto log = util::component_logger("quick.lease_keeper");
  std::vector<DatabaseSession> sessions;
  std::vector<util::RetryDelay> retry_delays;
  for (const auto& runtime : core.databases) {
    sessions.emplace_back(runtime->config.url, "quick/" + core.config.consumer_id + "/lease_keeper");
    retry_delays.emplace_back(std::chrono::milliseconds(50), core.config.reconnect_delay_max);
  }
  const auto interval = core.config.effective_lease_extend_interval();
  const auto lease = core.config.worker.item_lease_duration;

  while (!core.stop_background.wait_for(interval)) {
    const auto items = snapshot();
    const auto now_ns = std::chrono::steady_clock::now().time_since_epoch().count();
    for (std::size_t db = 0; db < sessions.size(); ++db) {
      std::vector<std::pair<std::int64_t, std::string>> leases;
      std::vector<HeldItemPtr> asked;
      for (const auto& item : items) {
        if (item->database != static_cast<int>(db) || item->lease_lost.load()) continue;
        const bool overran = item->running.load() && item->deadline_ns.load() < now_ns;
        if (overran) continue;  // let the lease run out: the item will be retried
        leases.emplace_back(item->item.id, *item->item.lease_id);
        asked.push_back(item);
      }
      if (leases.empty()) continue;
      try {
        pqxx::nontransaction statement(sessions[db].connection());  // autocommit: one round trip
        const auto extended = store::extend_item_leases(statement, leases, lease);
        retry_delays[db].reset();
        add(core.counters.lease_extensions, extended.size());
        const std::set<std::int64_t> kept(extended.begin(), extended.end());
        for (const auto& item : asked) {
          // An item finished (and let go) while the extension ran is not a lost lease.
          if (kept.count(item->item.id) == 0 && is_held(item) && !item->lease_lost.exchange(true)) {
            log->warn("item {} of tenant {} lost its lease", item->item.id, item->item.tenant);
          }
        }
      } catch (...) {
        handle_loop_error(core, *log, "lease extension", core.databases[db]->config.name, &sessions[db],
                          retry_delays[db], core.stop_background);
      }
    }
  }
}

}  // namespace quick::consumer
