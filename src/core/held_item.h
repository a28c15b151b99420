// An item this consumer holds a lease on: dequeued by a Manager, waiting in the WorkQueue or
// running on a Worker, until it is acknowledged or released.
//
// Thread safety: the immutable part is written by the Manager before the item is shared; the
// atomics are written by the LeaseKeeper (lease_lost) and the Worker (running, deadline) and read
// by both.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>

#include "quick/item.h"

namespace quick::core {

using SteadyTime = std::chrono::steady_clock::time_point;

struct HeldItem {
  int database = 0;  // index into ConsumerConfig::databases
  Item item;         // item.lease_id is our lease
  SteadyTime dequeued_at;
  std::chrono::microseconds ready_lag{0};  // vested -> dequeued, on the database clock
  std::chrono::microseconds age_at_dequeue{0};
  // When a Worker took it from the WorkQueue (the epoch while it waits there); the WorkQueue
  // measures the zone's processing time from it.
  SteadyTime popped_at{};

  // Set by the LeaseKeeper when an extension found the lease gone: the Worker must not (or must
  // stop) processing the item.
  std::atomic<bool> lease_lost{false};
  // Set by the Worker while the handler runs; the LeaseKeeper stops extending the lease once
  // `deadline_ns` (steady clock) has passed, so an overrunning handler loses the item to a retry.
  std::atomic<bool> running{false};
  std::atomic<std::int64_t> deadline_ns{0};
  // Set when its outcome is queued for the Acknowledger: the item stays held, and its lease
  // extended, until the acknowledgment is written (or given up), so that an acknowledgment that
  // waits cannot let the lease run out and the item run again. A lease it loses meanwhile is not
  // news: the acknowledgment reports it.
  std::atomic<bool> acknowledging{false};

  std::chrono::microseconds age_now() const {
    return age_at_dequeue +
           std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - dequeued_at);
  }
};

using HeldItemPtr = std::shared_ptr<HeldItem>;

}  // namespace quick::core
