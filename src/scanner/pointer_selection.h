// Algorithm 1, lines 7-8: which of the peeked pointers a Scanner hands to its Managers.
//
// Of the `candidates` (vested pointers in vesting order, minus those this consumer is already
// processing) select min(selection_max, ceil(n * selection_frac)): uniformly at random, which
// spreads concurrent consumers over different zones; or, for the in-order Scanner, the first
// ones, which guarantees that the oldest pointers are reached (no starvation).
//
// Pure function; randomness comes in through `random`, so tests control it.
#pragma once

#include <random>
#include <string>
#include <vector>

namespace quick::scanner {

// How many pointers a scan selects out of `candidates`.
int selection_size(std::size_t candidates, double selection_frac, int selection_max);

std::vector<std::string> select_pointers(const std::vector<std::string>& candidates,
                                         double selection_frac, int selection_max, bool in_order,
                                         std::mt19937_64& random);

}  // namespace quick::scanner
