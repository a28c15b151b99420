// Keeps the leases of every item this consumer holds (buffered or running) alive, extending them
// in one statement per database every lease_extend_interval (Algorithm 3, lines 10-12). An item
// whose extension fails has lost its lease: it is flagged so that its Worker skips it or its
// handler is asked to stop. A running item past its execution_bound is no longer extended, so its
// lease runs out and the item is retried even if the handler never returns.
//
// The lease thread (worker/lease_extender.h) calls extend() when due(), on connections of its own,
// so that nothing else the consumer writes can delay an extension.
//
// An item leased again while this consumer still holds it under an older lease (core/
// superseded_leases.h) is flagged at once: its older copy stops.
//
// Thread safety: hold()/let_go()/held_count()/check_soon() from any thread; due()/start_round()/
// extend() from the lease thread.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include <pqxx/pqxx>

#include "core/held_item.h"
#include "core/superseded_leases.h"

namespace quick::core {

struct ConsumerCore;

class LeaseKeeper {
 public:
  explicit LeaseKeeper(ConsumerCore& core);

  void hold(const std::vector<HeldItemPtr>& items);
  void let_go(const HeldItemPtr& item);
  std::size_t held_count() const;

  // Whether lease_extend_interval has passed since the last extension round began, or a round
  // was asked for by check_soon() since the last call.
  bool due();
  // Asks for an extension round at the lease thread's next look (a few milliseconds): after a
  // broken connection, which may mean that the server restarted and lost the last visits, and
  // with them leases this consumer still holds (docs/protocol.md#durability-of-a-consumers-commits).
  void check_soon();
  // Marks the start of an extension round (call once per round, before extend()).
  void start_round();
  // Extends the leases of the items of `database` in one statement; flags the lost ones.
  // Throws on database errors (the caller classifies them and retries next round).
  void extend(int database, pqxx::connection& conn);

 private:
  std::vector<HeldItemPtr> snapshot() const;
  bool is_held(const HeldItemPtr& item) const;

  ConsumerCore& core_;
  mutable std::mutex mutex_;
  HeldItems held_;                                    // guarded by mutex_
  std::chrono::steady_clock::time_point next_round_;  // the lease thread only
  std::atomic<bool> check_soon_{false};
};

}  // namespace quick::core
