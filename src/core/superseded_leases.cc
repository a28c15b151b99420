#include "core/superseded_leases.h"

#include <map>
#include <optional>
#include <string>
#include <utility>

namespace quick::core {

std::vector<HeldItemPtr> superseded_leases(const HeldItems& held, const std::vector<HeldItemPtr>& incoming) {
  // (database, item id) -> the new lease id.
  std::map<std::pair<int, std::int64_t>, const std::optional<std::string>*> leased_again;
  for (const auto& item : incoming)
    leased_again.emplace(std::make_pair(item->database, item->item.id), &item->item.lease_id);
  std::vector<HeldItemPtr> superseded;
  for (const auto& [key, item] : held) {
    const auto newer = leased_again.find({item->database, item->item.id});
    if (newer != leased_again.end() && *newer->second != item->item.lease_id) superseded.push_back(item);
  }
  return superseded;
}

}  // namespace quick::core
