// The database-level gauges of one database (quick.queue_metrics), queried at most once per
// min_query_interval whatever the scrape rate: a scrape in between gets the last round's values.
// A failed round is logged and remembered as "down" for the same interval, so an unreachable
// database is not hammered by scrapes either.
//
// Thread safety: current() may be called from several threads (one round at a time; the others
// wait for it and share its result).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/database_session.h"
#include "metrics/exposition.h"
#include "quick/config.h"
#include "quick/metrics.h"
#include "store/queue_metrics.h"

namespace quick::metrics {

struct DatabaseRound {
  bool up = false;  // the last round succeeded
  std::vector<store::QueueMetric> values;
  double seconds = 0;  // how long the last round's query took
};

class DatabaseGauges {
 public:
  DatabaseGauges(DatabaseConfig database, const std::string& consumer_id, const MetricsOptions& options);

  // The last round's values, after a new round if that one is older than min_query_interval.
  DatabaseRound current();
  std::uint64_t rounds() const { return rounds_.load(); }
  const std::string& name() const { return database_.name; }

  // This database's samples (database="<name>"), from current().
  void add_to(Exposition& out);

 private:
  DatabaseRound query();

  DatabaseConfig database_;
  MetricsOptions options_;
  std::mutex mutex_;
  core::DatabaseSession session_;                                 // guarded by mutex_
  DatabaseRound last_;                                            // guarded by mutex_
  std::optional<std::chrono::steady_clock::time_point> queried_;  // guarded by mutex_
  std::atomic<std::uint64_t> rounds_{0};
};

}  // namespace quick::metrics
