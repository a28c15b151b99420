// The consumer's lease thread, one connection per database: every lease_extend_interval it
// extends the leases of the items the consumer holds, buffered or running (core::LeaseKeeper, one
// statement per database: Algorithm 3, lines 10-12, "periodically extend the lease").
//
// It has its own thread and connections so that nothing else can hold it up: an acknowledgment
// waiting on a lock (the Acknowledger's), or a slow database, never delays the extension of the
// other items' leases, which would let them run out while their handlers still run.
//
// Thread safety: run_lease_extender() on its own thread.
#pragma once

#include <memory>

#include "core/consumer_core.h"

namespace quick::worker {

// The thread body: until core.stop_background. Never throws.
void run_lease_extender(std::shared_ptr<core::ConsumerCore> core);

}  // namespace quick::worker
