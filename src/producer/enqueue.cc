// Enqueue inside the caller's transaction. The protocol that keeps "every non-empty zone has a
// pointer" lives in the SQL functions quick.enqueue / quick.enqueue_batch; see docs/protocol.md.
// Enqueue protocol: its files change together (docs/protocol.md#where-the-enqueue-protocol-lives).
#include <algorithm>

#include <nlohmann/json.hpp>

#include "embedded_sql.h"
#include "quick/errors.h"
#include "quick/producer.h"
#include "store/named_statement.h"
#include "store/pg_values.h"
#include "store/sql_errors.h"
#include "util/logging.h"

namespace quick {
namespace {

// One element of quick.enqueue_batch's JSON array. The payload was validated as JSON by
// validate_new_item, so it can be spliced in as it is instead of being parsed and re-serialized.
// A zero vesting delay and priority are left out: absent keys take those defaults, and parsing
// an interval per item was a measurable share of a batch
// (sql/functions/enqueue_batch_into_existing_zones.sql).
void append_batch_element(std::string& out, const NewItem& item) {
  out += "{\"tenant\":";
  out += nlohmann::json(item.tenant).dump();
  out += ",\"job_type\":";
  out += nlohmann::json(item.job_type).dump();
  out += ",\"payload\":";
  out += item.payload;
  if (item.vesting_delay.count() != 0) {
    out += ",\"vesting_delay\":\"";
    out += store::interval_text(item.vesting_delay);
    out += '"';
  }
  if (item.priority != 0) {
    out += ",\"priority\":";
    out += std::to_string(item.priority);
  }
  if (item.client_item_id) {
    out += ",\"client_item_id\":";
    out += nlohmann::json(*item.client_item_id).dump();
  }
  out += '}';
}

// The JSON array quick.enqueue_batch and its fast path read; validates every item first.
std::string batch_json(const std::vector<NewItem>& items) {
  std::string json = "[";
  for (std::size_t i = 0; i < items.size(); ++i) {
    try {
      validate_new_item(items[i]);
    } catch (const InvalidArgument& error) {
      throw InvalidArgument("item " + std::to_string(i + 1) + ": " + error.what());
    }
    if (i > 0) json += ',';
    append_batch_element(json, items[i]);
  }
  json += ']';
  return json;
}

bool any_client_item_id(const std::vector<NewItem>& items) {
  return std::any_of(items.begin(), items.end(), [](const NewItem& item) { return item.client_item_id.has_value(); });
}

// NULL only for a duplicate whose existing item was completed between the conflict and the
// lookup: it existed, so nothing was inserted, but it has no id any more.
std::int64_t item_id_of(const pqxx::field& field) { return field.is_null() ? 0 : field.as<std::int64_t>(); }

// A batch fast path's rows, the id in column `id_column`. It returns every id or none; anything
// else means it wrote, and the fallback must not write the batch a second time. The ids ascend in
// input order (the statement inserts in that order and each row draws its id as it is inserted);
// sorting them makes that the only assumption.
std::vector<EnqueueResult> fast_path_results(const pqxx::result& rows, int id_column, std::size_t items,
                                             const char* caller) {
  if (rows.size() != items) {
    throw Error(std::string(caller) + ": the batch statement returned " + std::to_string(rows.size()) + " ids for " +
                std::to_string(items) + " items");
  }
  std::vector<std::int64_t> ids;
  ids.reserve(rows.size());
  for (const auto& row : rows) ids.push_back(row[id_column].as<std::int64_t>());
  std::sort(ids.begin(), ids.end());
  std::vector<EnqueueResult> results;
  results.reserve(ids.size());
  for (const auto id : ids) results.push_back(EnqueueResult{id, false});
  return results;
}

// quick.enqueue_batch's rows (ordinal, item_id, duplicate), placed by their 1-based ordinal.
std::vector<EnqueueResult> general_batch_results(const pqxx::result& rows, std::size_t items) {
  std::vector<EnqueueResult> results(items);
  for (const auto& row : rows) {
    results.at(static_cast<std::size_t>(row[0].as<int>() - 1)) = EnqueueResult{item_id_of(row[1]), row[2].as<bool>()};
  }
  return results;
}

// The one-call enqueues' wake-up (sql/queries/enqueue_now.sql): their statement committed an item
// that vests before the Scanners know, and left the notification to be sent now, in a
// transaction of its own, so that its commit did not wait for the server-wide lock a notifying
// commit holds (sql/functions/notify_consumers.sql). The item is committed whatever happens here:
// an error is logged, not thrown (the caller would take it for a failed enqueue and enqueue
// again), and the consumers find the item by their fallback poll
// (scanner.listening_poll_interval).
void wake_consumers_after_commit(pqxx::connection_base& conn) {
  try {
    pqxx::nontransaction autocommit(conn);
    store::exec_named(autocommit, QUICK_QUERY(wake_up_after_commit));
  } catch (const std::exception& error) {
    util::component_logger("quick.producer")
        ->warn("enqueue committed, but its wake-up notification failed (consumers find the item by polling): {}",
               error.what());
  }
}

// quick.enqueue's row (item_id, duplicate).
EnqueueResult general_result(const pqxx::row& row) { return EnqueueResult{item_id_of(row[0]), row[1].as<bool>()}; }

}  // namespace

EnqueueResult enqueue_in(pqxx::transaction_base& txn, const NewItem& item, const EnqueueOptions& options) {
  validate_new_item(item);
  return store::translating_input_errors([&] {
    const std::string delay = store::interval_text(item.vesting_delay);
    // The common case in one call: the tenant's pointer exists and there is no client item id to
    // check (quick.enqueue_into_existing_zone). It implements the same protocol as quick.enqueue,
    // without the cost of its general case, and records or applies the pull itself.
    if (!item.client_item_id) {
      const auto fast = store::exec_named(txn, QUICK_QUERY(enqueue_into_existing_zone), item.tenant, item.job_type,
                                          item.payload, delay, item.priority, options.pull_in_transaction);
      if (!fast.empty()) return EnqueueResult{fast[0][0].as<std::int64_t>(), false};
    }
    // Everything else (a new zone, a client item id, a payload the database refuses): the SQL
    // function, which creates the pointer, checks duplicates, or raises the error.
    return general_result(store::exec_named(txn, QUICK_QUERY(enqueue), item.tenant, item.job_type, item.payload, delay,
                                            item.priority, store::nullable(item.client_item_id))
                              .at(0));
  });
}

std::vector<EnqueueResult> enqueue_batch_in(pqxx::transaction_base& txn, const std::vector<NewItem>& items,
                                            const EnqueueOptions& options) {
  if (items.empty()) return {};
  const std::string json = batch_json(items);
  return store::translating_input_errors([&] {
    // The common case in one call, as for a single item: every tenant already has a pointer and no
    // item has a client item id to check (quick.enqueue_batch_into_existing_zones). It implements
    // quick.enqueue_batch's protocol without that function's per-column arrays, for less processor
    // time per item (docs/benchmarks-history.md#what-an-enqueue-costs-on-postgres). No rows: a
    // pointer to create, or an item the database refuses; quick.enqueue_batch then does it all.
    if (!any_client_item_id(items)) {
      const auto fast = store::exec_named(txn, QUICK_QUERY(enqueue_batch_into_existing_zones), json,
                                          options.pull_in_transaction);
      if (!fast.empty()) return fast_path_results(fast, 0, items.size(), "enqueue_batch_in");
    }
    return general_batch_results(store::exec_named(txn, QUICK_QUERY(enqueue_batch), json), items.size());
  });
}

EnqueueResult enqueue(pqxx::connection_base& conn, const NewItem& item) {
  validate_new_item(item);
  bool wakeup_due = false;
  const EnqueueResult result = store::translating_input_errors([&] {
    pqxx::nontransaction autocommit(conn);
    const std::string delay = store::interval_text(item.vesting_delay);
    if (item.client_item_id) {  // the duplicate check is quick.enqueue's alone
      return general_result(store::exec_named(autocommit, QUICK_QUERY(enqueue), item.tenant, item.job_type,
                                              item.payload, delay, item.priority, *item.client_item_id)
                                .at(0));
    }
    const auto row = store::exec_named(autocommit, QUICK_QUERY(enqueue_now), item.tenant, item.job_type, item.payload,
                                       delay, item.priority)
                         .at(0);
    wakeup_due = row[1].as<bool>();
    return EnqueueResult{row[0].as<std::int64_t>(), false};
  });
  if (wakeup_due) wake_consumers_after_commit(conn);  // the statement's nontransaction has ended
  return result;
}

std::vector<EnqueueResult> enqueue_batch(pqxx::connection_base& conn, const std::vector<NewItem>& items) {
  if (items.empty()) return {};
  const std::string json = batch_json(items);
  bool wakeup_due = false;
  auto results = store::translating_input_errors([&] {
    pqxx::nontransaction autocommit(conn);
    const auto result = store::exec_named(autocommit, QUICK_QUERY(enqueue_batch_now), json, any_client_item_id(items));
    wakeup_due = !result.empty() && result[0][3].as<bool>();
    // The fast path's rows carry no ordinal, quick.enqueue_batch's do.
    if (!result.empty() && result[0][0].is_null()) return fast_path_results(result, 1, items.size(), "enqueue_batch");
    return general_batch_results(result, items.size());
  });
  if (wakeup_due) wake_consumers_after_commit(conn);  // the statement's nontransaction has ended
  return results;
}

}  // namespace quick
