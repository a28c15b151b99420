#include "scanner/dead_item_retention.h"

#include "store/consumer_store.h"
#include "store/error_classification.h"
#include "util/logging.h"

namespace quick::scanner {

void DeadItemRetention::tick(pqxx::connection& conn, bool holds_in_order_role) noexcept {
  const auto now = std::chrono::steady_clock::now();
  if (!holds_in_order_role || now < next_run_) return;
  next_run_ = now + kInterval;
  try {
    pqxx::nontransaction statement(conn);
    const auto expired = store::expire_dead_items(statement, kBatchRows);
    if (expired > 0) {
      util::component_logger("quick.retention")
          ->info("deleted {} dead items past quick.limits.dead_item_max_age on database {}", expired, database_name_);
    }
    if (expired >= kBatchRows) next_run_ = now;  // a backlog: the next batch on the next round
  } catch (...) {
    const auto error = store::classify_current_exception();
    util::component_logger("quick.retention")
        ->warn("dead-item retention on database {}: {} (next attempt in {} s)", database_name_, error.message,
               kInterval.count());
  }
}

}  // namespace quick::scanner
