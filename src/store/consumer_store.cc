#include "store/consumer_store.h"

#include "embedded_sql.h"
#include "store/named_statement.h"
#include "store/pg_values.h"

namespace quick::store {
namespace {

std::string interval_array(const std::vector<Ack>& acks) {
  std::vector<std::string> delays;
  delays.reserve(acks.size());
  for (const auto& ack : acks) delays.push_back(interval_text(ack.delay));
  return array_literal(delays);
}

}  // namespace

const char* to_string(AckAction action) {
  switch (action) {
    case AckAction::kComplete: return "complete";
    case AckAction::kRetry: return "retry";
    case AckAction::kRelease: return "release";
    case AckAction::kDead: return "dead";
    case AckAction::kDelete: return "delete";
  }
  return "unknown";
}

ZoneVisit visit_zones(pqxx::transaction_base& txn, const std::vector<std::string>& tenants, int dequeue_max,
                      std::chrono::milliseconds item_lease_duration, std::chrono::milliseconds min_inactive,
                      const std::vector<std::string>& excluded_job_types, std::int64_t max_bytes) {
  ZoneVisit visit;
  if (tenants.empty()) return visit;
  const auto result = exec_named(txn, QUICK_QUERY(visit_zones), array_literal(tenants), dequeue_max,
                                 interval_text(item_lease_duration), interval_text(min_inactive),
                                 array_literal(excluded_job_types), max_bytes);
  // Columns by position (see sql/queries/visit_zones.sql): this runs for every item.
  enum Column {
    kKind,
    kTenant,
    kAction,
    kItemId,
    kJobType,
    kPriority,
    kLeaseId,
    kErrorCount,
    kPayload,
    kClientItemId,
    kLastError,
    kEnqueuedAt,
    kReadyLag,
    kAge,
    kPointerLag
  };
  visit.items.reserve(result.size());
  for (const auto& row : result) {
    const char kind = row[kKind].c_str()[0];  // 'i'tem, 'p'ointer, 'c'onflict
    if (kind == 'c') {
      const std::string reason = row[kAction].c_str();
      if (reason == "locked") ++visit.conflicts_locked;
      else if (reason == "not_vested") ++visit.conflicts_not_vested;
      else ++visit.conflicts_gone;
      continue;
    }
    if (kind == 'p') {
      visit.zones.push_back(VisitedZone{row[kTenant].c_str(), parse_settle_action(row[kAction].c_str()),
                                        std::chrono::microseconds(row[kPointerLag].as<std::int64_t>())});
      continue;
    }
    DequeuedItem dequeued;
    Item& item = dequeued.item;
    item.id = row[kItemId].as<std::int64_t>();
    item.tenant = row[kTenant].c_str();
    item.job_type = row[kJobType].c_str();
    item.priority = row[kPriority].as<int>();
    item.lease_id = std::string(row[kLeaseId].c_str());
    item.error_count = row[kErrorCount].as<int>();
    item.payload = row[kPayload].c_str();
    item.client_item_id = optional_text(row[kClientItemId]);
    item.last_error = optional_text(row[kLastError]);
    item.enqueued_at = db_time_from_micros(row[kEnqueuedAt].as<std::int64_t>());
    dequeued.ready_lag = std::chrono::microseconds(row[kReadyLag].as<std::int64_t>());
    dequeued.age = std::chrono::microseconds(row[kAge].as<std::int64_t>());
    visit.items.push_back(std::move(dequeued));
  }
  return visit;
}

ExtendedLeases extend_item_leases(pqxx::transaction_base& txn,
                                  const std::vector<std::pair<std::int64_t, std::string>>& leases,
                                  std::chrono::milliseconds lease_duration) {
  if (leases.empty()) return {};
  std::vector<std::string> ids, lease_ids;
  for (const auto& [id, lease] : leases) {
    ids.push_back(std::to_string(id));
    lease_ids.push_back(lease);
  }
  const auto result = exec_named(txn, QUICK_QUERY(extend_item_leases), array_literal(ids), array_literal(lease_ids),
                                 interval_text(lease_duration));
  ExtendedLeases leases_out;
  for (const auto& row : result) {
    (row[1].as<bool>() ? leases_out.busy : leases_out.extended).push_back(row[0].as<std::int64_t>());
  }
  return leases_out;
}

std::vector<AckOutcome> ack_items(pqxx::transaction_base& txn, const std::vector<Ack>& acks) {
  if (acks.empty()) return {};
  std::vector<std::string> ids, lease_ids, actions, errors, failures;
  for (const auto& ack : acks) {
    ids.push_back(std::to_string(ack.item_id));
    lease_ids.push_back(ack.lease_id);
    actions.push_back(to_string(ack.action));
    errors.push_back(ack.error);
    failures.push_back(std::to_string(ack.failed_attempts));
  }
  const auto result = exec_named(txn, QUICK_QUERY(ack_items), array_literal(ids), array_literal(lease_ids),
                                 array_literal(actions), interval_array(acks), array_literal(errors),
                                 array_literal(failures));
  std::vector<AckOutcome> outcomes;
  outcomes.reserve(result.size());
  for (const auto& row : result) {
    outcomes.push_back(AckOutcome{row[0].as<std::int64_t>(), parse_outcome(row[1].as<std::string>())});
  }
  return outcomes;
}

std::string claim_role(pqxx::transaction_base& txn, const std::string& role, const std::string& holder,
                       std::chrono::milliseconds lease_duration) {
  return exec_named(txn, QUICK_QUERY(claim_role), role, holder, interval_text(lease_duration))
      .at(0)[0]
      .as<std::string>();
}

void release_role(pqxx::transaction_base& txn, const std::string& role, const std::string& holder) {
  exec_named(txn, QUICK_QUERY(release_role), role, holder);
}

bool scanner_sleeps(pqxx::transaction_base& txn) {
  return exec_named(txn, QUICK_QUERY(scanner_sleeps)).at(0)[0].as<bool>();
}

void scanner_wakes(pqxx::transaction_base& txn) { exec_named(txn, QUICK_QUERY(scanner_wakes)); }

std::vector<std::string> live_consumers(pqxx::transaction_base& txn) {
  std::vector<std::string> ids;
  for (const auto& row : exec_named(txn, QUICK_QUERY(live_consumers))) ids.push_back(row[0].as<std::string>());
  return ids;
}

std::int64_t expire_dead_items(pqxx::transaction_base& txn, int max_rows) {
  return exec_named(txn, QUICK_QUERY(expire_dead_items), max_rows).at(0)[0].as<std::int64_t>();
}

}  // namespace quick::store
