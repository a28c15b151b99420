// Per database, the retention of dead items (quick.limits.dead_item_max_age, docs/operations.md):
// the consumer that holds the database's in-order role deletes the expired ones, one bounded
// batch a minute, or at once again while batches come back full. One consumer per database does
// it, so retention costs no more with many consumers.
//
// Thread safety: used by the Scanner thread only.
#pragma once

#include <chrono>
#include <string>

#include <pqxx/pqxx>

namespace quick::scanner {

class DeadItemRetention {
 public:
  static constexpr int kBatchRows = 10000;
  static constexpr std::chrono::seconds kInterval{60};

  explicit DeadItemRetention(std::string database_name) : database_name_(std::move(database_name)) {}

  // Deletes a batch when due and `holds_in_order_role`. Never throws: an error is logged and the
  // next attempt waits a full interval (retention is never urgent).
  void tick(pqxx::connection& conn, bool holds_in_order_role) noexcept;

 private:
  std::string database_name_;
  std::chrono::steady_clock::time_point next_run_{};
};

}  // namespace quick::scanner
