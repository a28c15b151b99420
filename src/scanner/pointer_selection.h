// Algorithm 1, lines 7-8: which of the peeked pointers a Scanner hands to its Managers.
//
// Of the `candidates` (vested pointers in vesting order, minus those this consumer is already
// processing) select min(selection_max, ceil(n * selection_frac)): uniformly at random, which
// spreads concurrent consumers over different zones; or, for the in-order Scanner, the first
// ones, which guarantees that the oldest pointers are reached (no starvation). The in-order
// Scanner takes at least `in_order_min` (one Manager batch): it contends with nobody over the
// oldest pointers, and a visit costs Postgres about as much for one zone as for a few dozen.
//
// split_into_batches divides a selection into the fewest batches of at most `batch_max`, of
// nearly equal sizes (20 with batch_max 16 gives 10 + 10, not 16 + 4).
//
// Pure function; randomness comes in through `random`, so tests control it.
#pragma once

#include <random>
#include <string>
#include <vector>

namespace quick::scanner {

// How many pointers a scan selects out of `candidates`.
int selection_size(std::size_t candidates, double selection_frac, int selection_max);

std::vector<std::string> select_pointers(const std::vector<std::string>& candidates, double selection_frac,
                                         int selection_max, bool in_order, std::mt19937_64& random,
                                         int in_order_min = 1);

// The same selection when tenants are partitioned between consumers (tenant_partition.h): the
// count is computed over all `visible` candidates, as if alone (the partition, not the fraction,
// keeps consumers apart), and drawn from the `eligible` ones only (in vesting order: this
// consumer's own pointers and others' vested beyond the grace period; owned[i] tells which).
// Random selection prefers its own pointers and takes others' only to make up the count, so that
// on a saturated queue, where every pointer is past its grace, consumers still mostly keep to
// their own shares. The in-order Scanner takes the oldest eligible, whoever owns them.
std::vector<std::string> select_eligible_pointers(const std::vector<std::string>& eligible,
                                                  const std::vector<bool>& owned, std::size_t visible,
                                                  double selection_frac, int selection_max, bool in_order,
                                                  std::mt19937_64& random, int in_order_min = 1);

std::vector<std::vector<std::string>> split_into_batches(const std::vector<std::string>& selected, int batch_max);

}  // namespace quick::scanner
