#include "store/item_rows.h"

#include "store/pg_values.h"

namespace quick::store {

Item item_from_row(const pqxx::row& row) {
  Item item;
  item.id = row["id"].as<std::int64_t>();
  item.tenant = row["tenant"].as<std::string>();
  item.job_type = row["job_type"].as<std::string>();
  item.priority = row["priority"].as<int>();
  item.lease_id = optional_text(row["lease_id"]);
  item.error_count = row["error_count"].as<int>();
  item.payload = row["payload"].as<std::string>();
  item.client_item_id = optional_text(row["client_item_id"]);
  item.last_error = optional_text(row["last_error"]);
  item.vesting_time = db_time_from_micros(row["vesting_time_us"].as<std::int64_t>());
  item.enqueued_at = db_time_from_micros(row["enqueued_at_us"].as<std::int64_t>());
  return item;
}

std::vector<Item> items_from_result(const pqxx::result& result) {
  std::vector<Item> items;
  items.reserve(result.size());
  for (const auto& row : result) items.push_back(item_from_row(row));
  return items;
}

}  // namespace quick::store
