// The zone API of include/quick/zone.h: thin calls of the SQL functions in sql/functions/
// (quick.peek, quick.dequeue, ...), which hold the semantics for every client language.
#include "quick/zone.h"

#include "embedded_sql.h"
#include "quick/errors.h"
#include "quick/item.h"
#include "store/item_rows.h"
#include "store/named_statement.h"
#include "store/pg_values.h"
#include "store/sql_errors.h"
#include "util/text.h"

namespace quick {
namespace {

void require_positive(const char* name, long long value, const char* unit) {
  if (value <= 0) {
    throw InvalidArgument(std::string(name) + " must be positive, got " + std::to_string(value) + unit);
  }
}

void require_not_negative(const char* name, std::chrono::milliseconds value) {
  if (value.count() < 0) {
    throw InvalidArgument(std::string(name) + " must be zero or positive, got " + std::to_string(value.count()) +
                          " ms");
  }
}

// Checked here so that a malformed id cannot abort the caller's transaction (and with it, in
// the complete-with-effects pattern, the handler's own writes).
void require_lease_id(const std::string& lease_id) {
  if (!util::is_canonical_uuid(lease_id)) {
    throw InvalidArgument("lease_id must be a UUID like 123e4567-e89b-12d3-a456-426614174000, got \"" +
                          lease_id.substr(0, 64) + "\"");
  }
}

Outcome outcome_of(const pqxx::result& result) { return store::parse_outcome(result.at(0)[0].as<std::string>()); }

}  // namespace

std::vector<Item> peek_in(pqxx::transaction_base& txn, const std::string& tenant, const PeekOptions& options) {
  require_positive("max_items", options.max_items, "");
  return store::translating_input_errors([&] {
    return store::items_from_result(
        store::exec_named(txn, QUICK_QUERY(peek_items), tenant, options.max_items, store::nullable(options.job_type)));
  });
}

std::vector<Item> dequeue_in(pqxx::transaction_base& txn, const std::string& tenant, const DequeueOptions& options) {
  require_positive("max_items", options.max_items, "");
  require_positive("lease_duration", options.lease_duration.count(), " ms");
  return store::translating_input_errors([&] {
    return store::items_from_result(store::exec_named(txn, QUICK_QUERY(dequeue_items), tenant, options.max_items,
                                                      store::interval_text(options.lease_duration),
                                                      store::nullable(options.job_type)));
  });
}

LeaseResult obtain_lease_in(pqxx::transaction_base& txn, std::int64_t item_id,
                            std::chrono::milliseconds lease_duration) {
  require_positive("lease_duration", lease_duration.count(), " ms");
  return store::translating_input_errors([&] {
    const auto row =
        store::exec_named(txn, QUICK_QUERY(obtain_item_lease), item_id, store::interval_text(lease_duration)).at(0);
    LeaseResult result;
    result.outcome = store::parse_outcome(row[0].as<std::string>());
    if (result.outcome == Outcome::kDone) {
      result.lease = ItemLease{item_id, row[1].as<std::string>(),
                               store::db_time_from_micros(row[2].as<std::int64_t>())};
    }
    return result;
  });
}

ExtendResult extend_lease_in(pqxx::transaction_base& txn, std::int64_t item_id, const std::string& lease_id,
                             std::chrono::milliseconds lease_duration) {
  require_positive("lease_duration", lease_duration.count(), " ms");
  require_lease_id(lease_id);
  return store::translating_input_errors([&] {
    const auto row = store::exec_named(txn, QUICK_QUERY(extend_item_lease), item_id, lease_id,
                                       store::interval_text(lease_duration))
                         .at(0);
    ExtendResult result;
    result.outcome = store::parse_outcome(row[0].as<std::string>());
    if (result.outcome == Outcome::kDone) {
      result.expires_at = store::db_time_from_micros(row[1].as<std::int64_t>());
    }
    return result;
  });
}

Outcome complete_in(pqxx::transaction_base& txn, std::int64_t item_id, const std::string& lease_id) {
  require_lease_id(lease_id);
  return store::translating_input_errors(
      [&] { return outcome_of(store::exec_named(txn, QUICK_QUERY(complete_item), item_id, lease_id)); });
}

Outcome cancel_in(pqxx::transaction_base& txn, std::int64_t item_id) {
  return outcome_of(store::exec_named(txn, QUICK_QUERY(complete_item), item_id, nullptr));
}

Outcome requeue_in(pqxx::transaction_base& txn, std::int64_t item_id, const std::optional<std::string>& lease_id,
                   std::chrono::milliseconds vesting_delay, const std::optional<std::string>& error) {
  require_not_negative("vesting_delay", vesting_delay);
  if (lease_id) require_lease_id(*lease_id);
  return store::translating_input_errors([&] {
    return outcome_of(store::exec_named(txn, QUICK_QUERY(requeue_item), item_id, store::nullable(lease_id),
                                        store::interval_text(vesting_delay), store::nullable(error)));
  });
}

Outcome release_lease_in(pqxx::transaction_base& txn, std::int64_t item_id, const std::string& lease_id,
                         std::chrono::milliseconds vesting_delay) {
  require_not_negative("vesting_delay", vesting_delay);
  require_lease_id(lease_id);
  return store::translating_input_errors([&] {
    return outcome_of(store::exec_named(txn, QUICK_QUERY(release_item_lease), item_id, lease_id,
                                        store::interval_text(vesting_delay)));
  });
}

// Declared in include/quick/item.h beside Outcome; the zone operations are what return one.
const char* to_string(Outcome outcome) {
  switch (outcome) {
    case Outcome::kDone: return "done";
    case Outcome::kLeaseLost: return "lease_lost";
    case Outcome::kItemGone: return "item_gone";
  }
  return "unknown";
}

}  // namespace quick
