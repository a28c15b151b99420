// Per database, elects the one consumer whose Scanner processes pointers in vesting order (paper
// section 6). The role is a lease row in quick.consumer_roles: the holder renews it every third
// of its duration; when the holder dies, the lease runs out and the next consumer to ask takes
// the role, within in_order_lease_duration.
//
// Thread safety: used by the Scanner thread only; holds() is also read by stats() through
// DatabaseRuntime::in_order_role.
#pragma once

#include <chrono>
#include <string>

#include <pqxx/pqxx>

#include "core/consumer_core.h"

namespace quick::scanner {

class InOrderElection {
 public:
  static constexpr const char* kRole = "in_order_scanner";

  InOrderElection(core::DatabaseRuntime& database, std::string holder, std::chrono::milliseconds lease_duration,
                  bool enabled);

  // Claims or renews the role when due. On error the role is considered lost (so two consumers
  // rarely both act in order) and the exception propagates.
  void tick(pqxx::connection& conn);

  bool holds() const { return database_.in_order_role.load(); }

  // Gives the role up (clean stop), best effort.
  void release(pqxx::connection& conn);

 private:
  core::DatabaseRuntime& database_;
  std::string holder_;
  std::chrono::milliseconds lease_duration_;
  bool enabled_;
  std::chrono::steady_clock::time_point next_claim_{};
};

}  // namespace quick::scanner
