#include "store/pointer_store.h"

#include <algorithm>
#include <stdexcept>

#include "embedded_sql.h"
#include "store/named_statement.h"
#include "store/pg_values.h"

namespace quick::store {
namespace {

std::vector<PointerLease> leases_from(const pqxx::result& result) {
  std::vector<PointerLease> leases;
  leases.reserve(result.size());
  for (const auto& row : result) {
    leases.push_back(PointerLease{row[0].as<std::string>(), row[1].as<std::string>(),
                                  db_time_from_micros(row[2].as<std::int64_t>())});
  }
  return leases;
}


std::vector<PeekedPointer> peeked_from(const pqxx::result& result) {
  std::vector<PeekedPointer> pointers;
  pointers.reserve(result.size());
  for (const auto& row : result) {
    pointers.push_back(PeekedPointer{row[0].as<std::string>(), db_time_from_micros(row[1].as<std::int64_t>())});
  }
  return pointers;
}

}  // namespace

SettleAction parse_settle_action(const std::string& text) {
  if (text == "requeued") return SettleAction::kRequeued;
  if (text == "parked") return SettleAction::kParked;
  if (text == "collected") return SettleAction::kCollected;
  if (text == "released_busy") return SettleAction::kReleasedBusy;
  if (text == "skipped") return SettleAction::kSkipped;
  if (text == "lease_lost") return SettleAction::kLeaseLost;
  throw std::logic_error("unexpected quick.settle_pointers action: " + text);
}

const char* to_string(SettleAction action) {
  switch (action) {
    case SettleAction::kRequeued: return "requeued";
    case SettleAction::kParked: return "parked";
    case SettleAction::kCollected: return "collected";
    case SettleAction::kReleasedBusy: return "released_busy";
    case SettleAction::kSkipped: return "skipped";
    case SettleAction::kLeaseLost: return "lease_lost";
  }
  return "unknown";
}

std::vector<PeekedPointer> peek_pointers(pqxx::transaction_base& txn, int max_pointers) {
  return peeked_from(exec_named(txn, QUICK_QUERY(peek_pointers), max_pointers));
}

Scan scan_pointers(pqxx::transaction_base& txn, int max_pointers, int max_pulls, const ScanFloors& floors,
                   std::optional<std::chrono::microseconds> next_vesting_within) {
  const auto micros = [](const std::optional<DbTime>& time) -> std::int64_t {
    return time ? micros_from_db_time(*time) : 0;  // 0: no floor
  };
  const auto result = exec_named(txn, QUICK_QUERY(scan_pointers), max_pointers, max_pulls,
                                 micros(floors.requested_from), micros(floors.vested_from),
                                 next_vesting_within ? std::max<std::int64_t>(0, next_vesting_within->count())
                                                     : std::int64_t{-1});  // -1: no bound
  Scan scan;
  scan.pointers.reserve(result.size());
  for (const auto& row : result) {
    scan.database_now = db_time_from_micros(row[3].as<std::int64_t>());
    if (row[0].is_null()) {
      scan.pulled = row[2].as<int>();
      if (!row[1].is_null()) scan.next_vesting = db_time_from_micros(row[1].as<std::int64_t>());
      continue;
    }
    scan.pointers.push_back(PeekedPointer{row[0].as<std::string>(), db_time_from_micros(row[1].as<std::int64_t>())});
  }
  return scan;
}


std::vector<PointerLease> lease_pointers(pqxx::transaction_base& txn, const std::vector<std::string>& tenants,
                                         std::chrono::milliseconds lease_duration) {
  if (tenants.empty()) return {};
  return leases_from(
      exec_named(txn, QUICK_QUERY(lease_pointers), array_literal(tenants), interval_text(lease_duration)));
}

std::vector<PointerLease> lease_next_pointers(pqxx::transaction_base& txn, int max_pointers,
                                              std::chrono::milliseconds lease_duration) {
  return leases_from(exec_named(txn, QUICK_QUERY(lease_next_pointers), max_pointers, interval_text(lease_duration)));
}

std::vector<SettledPointer> settle_pointers(pqxx::transaction_base& txn, const std::vector<PointerVisit>& visits,
                                            std::chrono::milliseconds min_inactive) {
  if (visits.empty()) return {};
  std::vector<std::string> tenants, lease_ids;
  std::vector<bool> found;
  tenants.reserve(visits.size());
  lease_ids.reserve(visits.size());
  found.reserve(visits.size());
  for (const auto& visit : visits) {
    tenants.push_back(visit.tenant);
    lease_ids.push_back(visit.lease_id);
    found.push_back(visit.items_found);
  }
  const auto result = exec_named(txn, QUICK_QUERY(settle_pointers), array_literal(tenants), array_literal(lease_ids),
                                 array_literal(found), interval_text(min_inactive));
  std::vector<SettledPointer> settled;
  settled.reserve(result.size());
  for (const auto& row : result) {
    SettledPointer pointer{row[0].as<std::string>(), parse_settle_action(row[1].as<std::string>()), std::nullopt};
    if (!row[2].is_null()) pointer.next_vesting_time = db_time_from_micros(row[2].as<std::int64_t>());
    settled.push_back(std::move(pointer));
  }
  return settled;
}

int apply_pointer_pulls(pqxx::transaction_base& txn, int max_requests) {
  return exec_named(txn, QUICK_QUERY(apply_pointer_pulls), max_requests).at(0)[0].as<int>();
}

}  // namespace quick::store
