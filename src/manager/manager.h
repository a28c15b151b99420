// Algorithm 2: a Manager thread. For each batch of pointers the Scanner selected, in one
// statement it leases the vested ones, dequeues up to dequeue_max items from each zone (skipping
// job types this consumer is throttling) and requeues the pointers of zones that still have work;
// it hands the items to the Workers, then settles the other pointers in a second statement:
// requeue to the zone's earliest vesting time, park, or garbage-collect after min_inactive
// (quick.settle_pointers; docs/protocol.md). Losing a pointer to another consumer is a counted
// conflict, not an error.
#pragma once

#include <memory>

#include "consumer/consumer_core.h"

namespace quick::manager {

// The thread body. Returns once the Scanner stopped and the batch queue is drained; never throws.
void run_manager(std::shared_ptr<consumer::ConsumerCore> core, int manager_index);

}  // namespace quick::manager
