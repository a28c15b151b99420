#include "scanner/vested_since.h"

#include <algorithm>

namespace quick::scanner {

DbTime VestedSince::observe(const std::string& tenant, DbTime vesting_time) {
  DbTime since = vesting_time;
  if (const auto seen = previous_.find(tenant); seen != previous_.end()) since = std::min(since, seen->second);
  current_[tenant] = since;
  return since;
}

void VestedSince::end_peek() {
  previous_.swap(current_);
  current_.clear();
}

}  // namespace quick::scanner
