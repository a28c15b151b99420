#include "core/lease_keeper.h"

#include <set>

#include "core/consumer_core.h"
#include "core/superseded_leases.h"
#include "store/consumer_store.h"
#include "util/logging.h"
#include "util/printable.h"

namespace quick::core {

LeaseKeeper::LeaseKeeper(ConsumerCore& core)
    : core_(core), next_round_(std::chrono::steady_clock::now() + core.config.effective_lease_extend_interval()) {}

void LeaseKeeper::hold(const std::vector<HeldItemPtr>& items) {
  std::vector<HeldItemPtr> superseded;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    superseded = superseded_leases(held_, items);
    for (const auto& item : items) held_.emplace(item.get(), item);
  }
  for (const auto& item : superseded) {
    if (item->acknowledging.load() || item->lease_lost.exchange(true)) continue;
    util::component_logger("quick.lease_keeper")
        ->warn(
            "item {} of tenant {} was leased again: its earlier lease is gone (a visit lost in a server crash, "
            "or a lease that ran out), and its earlier copy is asked to stop",
            item->item.id, util::escape_unprintable(item->item.tenant));
  }
}

void LeaseKeeper::check_soon() { check_soon_.store(true); }

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

bool LeaseKeeper::due() { return check_soon_.exchange(false) || std::chrono::steady_clock::now() >= next_round_; }

void LeaseKeeper::start_round() {
  next_round_ = std::chrono::steady_clock::now() + core_.config.effective_lease_extend_interval();
}

void LeaseKeeper::extend(int database, pqxx::connection& conn) {
  const auto now_ns = std::chrono::steady_clock::now().time_since_epoch().count();
  std::vector<std::pair<std::int64_t, std::string>> leases;
  std::vector<HeldItemPtr> asked;
  for (const auto& item : snapshot()) {
    if (item->database != database || item->lease_lost.load()) continue;
    // A handler past its execution_bound: let the lease run out, and the item is retried. Not
    // one that returned in time and whose acknowledgment waits to be written: its lease is kept
    // until then (held_item.h), however long the writer takes.
    const bool overran = item->running.load() && !item->acknowledging.load() && item->deadline_ns.load() < now_ns;
    if (overran) continue;
    leases.emplace_back(item->item.id, *item->item.lease_id);
    asked.push_back(item);
  }
  if (leases.empty()) return;
  pqxx::nontransaction statement(conn);  // autocommit: one round trip
  const auto result = store::extend_item_leases(statement, leases, core_.config.worker.item_lease_duration);
  add(core_.counters.lease_extensions, result.extended.size());
  std::set<std::int64_t> kept(result.extended.begin(), result.extended.end());
  kept.insert(result.busy.begin(), result.busy.end());  // locked right now: tried again next round
  for (const auto& item : asked) {
    // An item finished (and let go) while the extension ran is not a lost lease, nor is one whose
    // acknowledgment is queued: that reports it.
    if (kept.count(item->item.id) == 0 && is_held(item) && !item->acknowledging.load() &&
        !item->lease_lost.exchange(true)) {
      util::component_logger("quick.lease_keeper")
          ->warn("item {} of tenant {} lost its lease", item->item.id, util::escape_unprintable(item->item.tenant));
    }
  }
}

}  // namespace quick::core
