// Since when each of other consumers' vested pointers has been vested, as this Scanner's peeks
// have seen it: the earlier of the pointer's vesting time and the first peek in a row that showed
// it vested. Tenant partitioning (tenant_partition.h) times partition_grace from this.
//
// Why not from the vesting time alone: an owner whose visits take nothing from a zone (its job
// types are throttled at max_in_flight) requeues the pointer to vest "now" on every visit, so the
// pointer would never look older than a few milliseconds, and no other consumer would ever take
// that tenant while the owner stays throttled. Seen from outside, the pointer has simply been
// vested all along.
//
// Thread safety: the Scanner thread only.
#pragma once

#include <string>
#include <unordered_map>

#include "quick/item.h"

namespace quick::scanner {

class VestedSince {
 public:
  // Records that this peek showed `tenant`'s pointer vested at `vesting_time`; returns since when
  // it has been vested.
  DbTime observe(const std::string& tenant, DbTime vesting_time);

  // Ends a peek: pointers it did not observe are forgotten (their next vested spell starts anew).
  void end_peek();

  std::size_t tracked() const { return previous_.size(); }

 private:
  std::unordered_map<std::string, DbTime> previous_;  // observed by the last peek
  std::unordered_map<std::string, DbTime> current_;   // observed by this peek so far
};

}  // namespace quick::scanner
