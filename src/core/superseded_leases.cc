#include "core/superseded_leases.h"

#include <set>
#include <utility>

namespace quick::core {

std::vector<HeldItemPtr> superseded_leases(const HeldItems& held, const std::vector<HeldItemPtr>& incoming) {
  std::set<std::pair<int, std::int64_t>> leased_again;
  for (const auto& item : incoming) leased_again.emplace(item->database, item->item.id);
  std::vector<HeldItemPtr> superseded;
  for (const auto& [key, item] : held) {
    if (leased_again.count({item->database, item->item.id}) == 0) continue;
    for (const auto& newer : incoming) {
      if (newer->database == item->database && newer->item.id == item->item.id &&
          newer->item.lease_id != item->item.lease_id) {
        superseded.push_back(item);
        break;
      }
    }
  }
  return superseded;
}

}  // namespace quick::core
