#include "scanner/consumer_membership.h"

#include <vector>

#include "store/consumer_store.h"
#include "util/logging.h"

namespace quick::scanner {

ConsumerMembership::ConsumerMembership(core::DatabaseRuntime& database, std::string consumer_id,
                                       std::chrono::milliseconds lease_duration, bool enabled)
    : database_(database),
      consumer_id_(std::move(consumer_id)),
      lease_duration_(lease_duration),
      enabled_(enabled),
      partition_(consumer_id_) {}

void ConsumerMembership::tick(pqxx::connection& conn) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now < next_renewal_) return;
  // Whatever happens, try again a third of a lease later, not on every scan.
  next_renewal_ = now + lease_duration_ / 3;
  pqxx::nontransaction statement(conn);
  store::claim_role(statement, kRolePrefix + consumer_id_, consumer_id_, lease_duration_);
  const std::vector<std::string> members = store::live_consumers(statement);
  const auto before = partition_.member_count();
  partition_.set_members(members);
  database_.live_consumers.store(static_cast<int>(partition_.member_count()));
  lone_.observe(partition_.member_count());
  if (partition_.member_count() != before) {
    util::component_logger("quick.scanner")
        ->info("{} live consumer(s) share the tenants of database {}", partition_.member_count(),
               database_.config.name);
  }
}

void ConsumerMembership::release(pqxx::connection& conn) {
  if (!enabled_) return;
  try {
    pqxx::nontransaction statement(conn);
    store::release_role(statement, kRolePrefix + consumer_id_, consumer_id_);
  } catch (const std::exception& error) {
    util::component_logger("quick.scanner")
        ->warn("could not leave the consumer group of database {}: {}", database_.config.name, error.what());
  }
}

}  // namespace quick::scanner
