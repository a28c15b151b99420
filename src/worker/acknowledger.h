// The consumer's writer thread, one connection per database. It acknowledges processed items in
// batches: complete, retry (requeue with backoff), release, dead, delete, one statement per
// database per flush (quick.ack_items). Lease extensions have a thread of their own
// (lease_extender.h), so a slow acknowledgment never delays them. A flush happens when
// ack_interval has passed since the oldest pending acknowledgment, or ack_batch_max are pending.
// A batch that failed is retried; every action is conditional on the item's lease, so repeating
// one after an in-doubt commit is harmless.
//
// Thread safety: producers push to ConsumerCore::ack_queue; run() on its own thread.
#pragma once

#include <memory>

#include "core/consumer_core.h"

namespace quick::worker {

// The thread body: until core.stop_background, then a final flush. Never throws.
void run_acknowledger(std::shared_ptr<core::ConsumerCore> core);

}  // namespace quick::worker
