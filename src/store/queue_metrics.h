// The database-level gauges of the metrics: one call of quick.queue_metrics
// (sql/functions/queue_metrics.sql says what each value is and what it costs).
//
// Thread safety: as for the transaction passed in.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <pqxx/pqxx>

namespace quick::store {

struct QueueMetric {
  std::string metric;                 // "items", "max_pointer_lag_seconds", "tenant_items", ...
  std::optional<std::string> tenant;  // for the per-tenant values ("tenant_...")
  double value = 0;
};

std::vector<QueueMetric> queue_metrics(pqxx::transaction_base& txn, int top_tenants, int count_limit);

}  // namespace quick::store
