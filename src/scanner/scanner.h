// Algorithm 1: the Scanner thread. Visits the databases in shuffled round-robin; in each, while
// fewer than processing_bound pointers were processed and the Managers and Workers have room, it
// applies pending pointer pulls, peeks up to peek_max vested pointers, leaves out those its own
// Managers are processing, selects some (at random, or in order when this consumer holds the
// in-order role) and hands them to the Managers in batches of pointers_per_batch (or of
// pointers_per_batch_alone while it is its database's only live consumer, visit_size.h). Scans of
// one database start at least min_scan_interval apart, so that under load each takes what vested
// since the last in one visit. A short peek ends the database's turn; a round that selected
// nothing sleeps (idle_wait.h).
#pragma once

#include <memory>

#include "core/consumer_core.h"

namespace quick::scanner {

// The thread body. Returns when core.stop_scanning is requested; never throws.
void run_scanner(std::shared_ptr<core::ConsumerCore> core);

}  // namespace quick::scanner
