// Algorithm 3: a Worker thread. Takes items fairly from the WorkQueue, re-checks that the lease
// is still held, runs the job type's handler under its execution_bound (the LeaseKeeper extends
// the lease meanwhile), and then: completes the item (in the handler's own transaction when it
// opened one: exactly once), retries it in line, requeues it with exponential backoff, or gives
// it up to quick.dead_items, following the job type's retry policy. A handler that throws failed
// transiently; it never takes the Worker down.
#pragma once

#include <memory>

#include "core/consumer_core.h"

namespace quick::worker {

// The thread body. Returns once the WorkQueue is closed and empty; never throws.
void run_worker(std::shared_ptr<core::ConsumerCore> core, int worker_index);

}  // namespace quick::worker
