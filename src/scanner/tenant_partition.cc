#include "scanner/tenant_partition.h"

#include <algorithm>

namespace quick::scanner {
namespace {

std::uint64_t fnv1a(const std::string& text) {
  std::uint64_t hash = 1469598103934665603ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

// splitmix64's finalizer: FNV's low bits alone mix poorly for similar ids such as "c-1", "c-2".
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Index of the winning member; ties (practically impossible) go to the first in sorted order.
std::size_t winner(const std::vector<std::uint64_t>& seeds, const std::string& tenant) {
  const std::uint64_t tenant_hash = fnv1a(tenant);
  std::size_t best = 0;
  std::uint64_t best_score = 0;
  for (std::size_t i = 0; i < seeds.size(); ++i) {
    const std::uint64_t score = mix(seeds[i] ^ tenant_hash);
    if (i == 0 || score > best_score) {
      best = i;
      best_score = score;
    }
  }
  return best;
}

std::vector<std::string> sorted_distinct(std::vector<std::string> ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

std::vector<std::uint64_t> seeds_of(const std::vector<std::string>& members) {
  std::vector<std::uint64_t> seeds;
  seeds.reserve(members.size());
  for (const auto& member : members) seeds.push_back(mix(fnv1a(member)));
  return seeds;
}

}  // namespace

TenantPartition::TenantPartition(std::string self) : self_(std::move(self)) { set_members({}); }

void TenantPartition::set_members(const std::vector<std::string>& members) {
  std::vector<std::string> with_self = members;
  with_self.push_back(self_);
  members_ = sorted_distinct(std::move(with_self));
  seeds_ = seeds_of(members_);
  self_index_ = static_cast<std::size_t>(std::find(members_.begin(), members_.end(), self_) - members_.begin());
}

bool TenantPartition::owns(const std::string& tenant) const {
  return members_.size() <= 1 || winner(seeds_, tenant) == self_index_;
}

std::string owner_of(const std::vector<std::string>& members, const std::string& tenant) {
  const auto sorted = sorted_distinct(members);
  return sorted.at(winner(seeds_of(sorted), tenant));
}

}  // namespace quick::scanner
