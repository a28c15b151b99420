// Which live consumer "owns" a tenant's pointer, so that Scanners under light load stop racing
// for the same few vested pointers.
//
// When only a handful of pointers are vested, every consumer's peek returns the same ones, and
// Algorithm 1's random selection makes several consumers pick the same pointer: all but one lose
// the lease (a wasted visit, and the paper's contention). Instead, each tenant has one owner among
// the database's live consumers, by rendezvous hashing (highest hash of consumer and tenant wins:
// when a consumer joins or leaves, only its own share of tenants moves). A Scanner takes its own
// pointers at once and anybody's once they have been vested for scanner.partition_grace, so a
// slow, busy or dead owner delays nobody for long. Ownership is a preference, never a lock: the
// leases (SKIP LOCKED) stay what makes visits exclusive.
//
// Pure code: members come in from ConsumerMembership.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace quick::scanner {

class TenantPartition {
 public:
  explicit TenantPartition(std::string self);

  // The live consumers' ids; `self` counts as a member whether or not it is listed.
  void set_members(const std::vector<std::string>& members);

  // True when this consumer owns the tenant (always, while it is the only member).
  bool owns(const std::string& tenant) const;

  std::size_t member_count() const { return members_.size(); }

 private:
  std::string self_;
  std::vector<std::string> members_;  // sorted, distinct, includes self_
  std::vector<std::uint64_t> seeds_;  // hash of each member id, same order
  std::size_t self_index_ = 0;
};

// The owner of `tenant` among `members` (non-empty): the rendezvous-hash winner. Stable across
// processes, builds and platforms (FNV-1a and splitmix64, not std::hash).
std::string owner_of(const std::vector<std::string>& members, const std::string& tenant);

}  // namespace quick::scanner
