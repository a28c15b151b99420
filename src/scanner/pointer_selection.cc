#include "scanner/pointer_selection.h"

#include <algorithm>
#include <cmath>
#include <iterator>

namespace quick::scanner {

int selection_size(std::size_t candidates, double selection_frac, int selection_max) {
  if (candidates == 0) return 0;
  // The epsilon keeps exact products exact: 100 * 0.07 is 7.000000000000001 in binary.
  const double wanted = std::ceil(static_cast<double>(candidates) * selection_frac - 1e-9);
  return static_cast<int>(
      std::min<double>({wanted, static_cast<double>(selection_max), static_cast<double>(candidates)}));
}

std::vector<std::string> select_pointers(const std::vector<std::string>& candidates, double selection_frac,
                                         int selection_max, bool in_order, std::mt19937_64& random, int in_order_min) {
  return select_eligible_pointers(candidates, std::vector<bool>(candidates.size(), true), candidates.size(),
                                  selection_frac, selection_max, in_order, random, in_order_min);
}

std::vector<std::string> select_eligible_pointers(const std::vector<std::string>& eligible,
                                                  const std::vector<bool>& owned, std::size_t visible,
                                                  double selection_frac, int selection_max, bool in_order,
                                                  std::mt19937_64& random, int in_order_min) {
  int count = selection_size(std::max(visible, eligible.size()), selection_frac, selection_max);
  if (in_order) count = std::max(count, std::min(in_order_min, selection_max));
  count = std::min(count, static_cast<int>(eligible.size()));
  if (in_order) return std::vector<std::string>(eligible.begin(), eligible.begin() + count);
  std::vector<std::string> own, others;
  for (std::size_t i = 0; i < eligible.size(); ++i)
    (i < owned.size() && owned[i] ? own : others).push_back(eligible[i]);
  std::vector<std::string> selected;
  selected.reserve(static_cast<std::size_t>(count));
  const int from_own = std::min(count, static_cast<int>(own.size()));
  std::sample(own.begin(), own.end(), std::back_inserter(selected), from_own, random);
  std::sample(others.begin(), others.end(), std::back_inserter(selected), count - from_own, random);
  return selected;
}

std::vector<std::vector<std::string>> split_into_batches(const std::vector<std::string>& selected, int batch_max) {
  std::vector<std::vector<std::string>> batches;
  if (selected.empty()) return batches;
  const std::size_t max = static_cast<std::size_t>(std::max(1, batch_max));
  const std::size_t count = (selected.size() + max - 1) / max;
  const std::size_t base = selected.size() / count, extra = selected.size() % count;
  std::size_t start = 0;
  for (std::size_t b = 0; b < count; ++b) {
    const std::size_t size = base + (b < extra ? 1 : 0);
    batches.emplace_back(selected.begin() + static_cast<long>(start),
                         selected.begin() + static_cast<long>(start + size));
    start += size;
  }
  return batches;
}

}  // namespace quick::scanner
