// How many zones one visit handles (one Manager statement and one commit): a consumer that is
// its database's only live consumer visits up to manager.pointers_per_batch_alone zones at a
// time, any other manager.pointers_per_batch.
//
// Why two sizes. Postgres' cost of a visit is largely per statement and per commit, so bigger
// visits make each zone cheaper, which a lone consumer under a heavy load of many small zones
// needs. Several consumers of one database lose by it: each visit locks more pointers for
// longer, and the others skip them. So only a consumer that knows it is alone uses the bigger
// size (the measurements: docs/benchmarks-history.md#bigger-visits).
//
// "Alone" comes from tenant partitioning's membership (consumer_membership.h: a read of the live
// consumers every third of scanner.in_order_lease_duration). Consumers started together each
// see only themselves in their first read, so it takes two reads in a row that found no other
// live consumer; one read that finds another ends it at once. Without the membership
// (scanner.partition_grace = 0) a consumer never counts as alone, and it does not register
// either, so the others cannot count it: a database's consumers should agree on that setting.
//
// Pure code: the membership feeds it, the Scanner asks it.
#pragma once

#include <cstddef>

#include "quick/config.h"

namespace quick::scanner {

class LoneConsumerTracker {
 public:
  // One membership read: how many live consumers it found, this one included.
  void observe(std::size_t live_consumers);
  bool alone() const { return alone_reads_ >= kReadsNeeded; }

 private:
  static constexpr int kReadsNeeded = 2;
  int alone_reads_ = 0;  // consecutive reads that found no other live consumer (capped)
};

// Zones per visit: pointers_per_batch, or, when `alone`, pointers_per_batch_alone if that is
// larger (0 turns the larger size off).
int pointers_per_visit(const ManagerConfig& manager, bool alone);

}  // namespace quick::scanner
