// Items this consumer still holds under a lease that a newer lease of the same item replaced.
// A visit that leases an item this consumer already holds proves the older lease gone: the
// visit that took it was lost in a server crash (visits commit without waiting for the WAL
// flush: docs/protocol.md#durability-of-a-consumers-commits), or it ran out. The older copy must
// stop; the extension round cannot tell, since it asks by item id and the newer lease answers.
//
// Thread safety: none of its own (the LeaseKeeper calls it under its mutex).
#pragma once

#include <unordered_map>
#include <vector>

#include "core/held_item.h"

namespace quick::core {

// The items held (as the LeaseKeeper keeps them, by address) whose database and item id match one
// of `incoming` under another lease id. Reads each held item once, copies none.
using HeldItems = std::unordered_map<const HeldItem*, HeldItemPtr>;
std::vector<HeldItemPtr> superseded_leases(const HeldItems& held, const std::vector<HeldItemPtr>& incoming);

}  // namespace quick::core
