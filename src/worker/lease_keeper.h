// Keeps the leases of every item this consumer holds (buffered or running) alive, extending them
// in one statement per database every lease_extend_interval (Algorithm 3, lines 10-12). An item
// whose extension fails has lost its lease: it is flagged so that its Worker skips it or its
// handler is asked to stop. A running item past its execution_bound is no longer extended, so its
// lease runs out and the item is retried even if the handler never returns.
//
// Thread safety: hold()/let_go()/held_count() from any thread; run() on its own thread.
#pragma once

#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "consumer/held_item.h"

namespace quick::consumer {

struct ConsumerCore;

class LeaseKeeper {
 public:
  explicit LeaseKeeper(ConsumerCore& core) : core_(core) {}

  void hold(const std::vector<HeldItemPtr>& items);
  void let_go(const HeldItemPtr& item);
  std::size_t held_count() const;

  // The thread body: until core.stop_background. Never throws.
  void run(std::shared_ptr<ConsumerCore> core_owner);

 private:
  std::vector<HeldItemPtr> snapshot() const;
  bool is_held(const HeldItemPtr& item) const;

  ConsumerCore& core_;
  mutable std::mutex mutex_;
  std::unordered_map<const HeldItem*, HeldItemPtr> held_;  // guarded by mutex_
};

}  // namespace quick::consumer
