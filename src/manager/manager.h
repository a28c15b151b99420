// Algorithm 2: a Manager thread. For each batch of pointers the Scanner selected it runs one
// visit, quick.visit_zones, a single transaction: lease the zones that are still vested (another
// consumer's are skipped and counted as conflicts, not errors), dequeue up to dequeue_max items
// from each (skipping job types this consumer is throttling), then requeue each pointer to the
// zone's earliest vesting time, park it, or garbage-collect it after min_inactive, with the
// protocol of docs/protocol.md. The items then go to the Workers.
//
// On FoundationDB the paper's Manager spreads a visit over several transactions and keeps the
// zone with a pointer lease of p_duration meanwhile; here the transaction's row lock is the lease
// and p_duration bounds the visit (the Manager sessions' statement_timeout).
#pragma once

#include <memory>

#include "core/consumer_core.h"

namespace quick::manager {

// The thread body. Returns once the Scanner stopped and the batch queue is drained; never throws.
void run_manager(std::shared_ptr<core::ConsumerCore> core, int manager_index);

}  // namespace quick::manager
