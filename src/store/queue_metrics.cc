#include "store/queue_metrics.h"

#include "embedded_sql.h"
#include "store/named_statement.h"

namespace quick::store {

std::vector<QueueMetric> queue_metrics(pqxx::transaction_base& txn, int top_tenants, int count_limit) {
  std::vector<QueueMetric> metrics;
  for (const auto& row : exec_named(txn, QUICK_QUERY(queue_metrics), top_tenants, count_limit)) {
    QueueMetric metric;
    metric.metric = row[0].as<std::string>();
    if (!row[1].is_null()) metric.tenant = row[1].as<std::string>();
    metric.value = row[2].as<double>();
    metrics.push_back(std::move(metric));
  }
  return metrics;
}

}  // namespace quick::store
