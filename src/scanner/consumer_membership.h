// Per database, this consumer's membership of the group of live consumers, which the Scanner
// uses to partition tenants (tenant_partition.h). Membership is a lease in quick.consumer_roles
// (role 'member:<consumer_id>'), renewed every third of in_order_lease_duration together with a
// read of the other live members; a clean stop deletes it, a crash lets it run out.
//
// Thread safety: used by the Scanner thread only; the member count is published through
// DatabaseRuntime::live_consumers for stats().
#pragma once

#include <chrono>
#include <string>

#include <pqxx/pqxx>

#include "core/consumer_core.h"
#include "scanner/tenant_partition.h"
#include "scanner/visit_size.h"

namespace quick::scanner {

class ConsumerMembership {
 public:
  static constexpr const char* kRolePrefix = "member:";

  ConsumerMembership(core::DatabaseRuntime& database, std::string consumer_id, std::chrono::milliseconds lease_duration,
                     bool enabled);

  // Renews the membership and re-reads the members when due. On error the last known members
  // stay in use and the exception propagates.
  void tick(pqxx::connection& conn);

  // Whether this consumer should take the tenant's pointer at once (see TenantPartition).
  bool owns(const std::string& tenant) const { return partition_.owns(tenant); }
  bool enabled() const { return enabled_; }
  // Whether the last membership reads found no other live consumer (visit_size.h); never
  // while disabled.
  bool alone() const { return lone_.alone(); }

  // Leaves the group (clean stop), best effort.
  void release(pqxx::connection& conn);

 private:
  core::DatabaseRuntime& database_;
  std::string consumer_id_;
  std::chrono::milliseconds lease_duration_;
  bool enabled_;
  TenantPartition partition_;
  LoneConsumerTracker lone_;
  std::chrono::steady_clock::time_point next_renewal_{};
};

}  // namespace quick::scanner
