#include "scanner/in_order_election.h"

#include "store/consumer_store.h"
#include "util/logging.h"

namespace quick::scanner {

InOrderElection::InOrderElection(core::DatabaseRuntime& database, std::string holder,
                                 std::chrono::milliseconds lease_duration, bool enabled)
    : database_(database), holder_(std::move(holder)), lease_duration_(lease_duration), enabled_(enabled) {}

void InOrderElection::tick(pqxx::connection& conn) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now < next_claim_) return;
  const bool had_role = holds();
  try {
    pqxx::nontransaction statement(conn);
    const std::string current = store::claim_role(statement, kRole, holder_, lease_duration_);
    database_.in_order_role.store(current == holder_);
  } catch (...) {
    database_.in_order_role.store(false);
    next_claim_ = now + lease_duration_ / 3;
    throw;
  }
  next_claim_ = now + lease_duration_ / 3;
  if (holds() != had_role) {
    util::component_logger("quick.election")
        ->info("{} the in-order Scanner role on database {}", holds() ? "took" : "lost", database_.config.name);
  }
}

void InOrderElection::release(pqxx::connection& conn) {
  if (!enabled_ || !holds()) return;
  try {
    pqxx::nontransaction statement(conn);
    store::release_role(statement, kRole, holder_);
  } catch (const std::exception& error) {
    util::component_logger("quick.election")
        ->warn("could not release the in-order role on database {}: {}", database_.config.name, error.what());
  }
  database_.in_order_role.store(false);
}

}  // namespace quick::scanner
