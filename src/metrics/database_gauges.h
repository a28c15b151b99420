// The database-level gauges of one database (quick.queue_metrics), queried at most once per
// min_query_interval whatever the scrape rate: a scrape in between gets the last round's values.
// A failed round is logged and remembered as "down" for the same interval, so an unreachable
// database is not hammered by scrapes either.
//
// Each database's rounds run on a thread of its own, so that Metrics::render() queries its
// databases at once (start_round_if_due() on each, then add_to() on each), and no render waits for
// a round longer than query_timeout after the round's start: a round still running then (a server
// that does not answer, a connection that takes its whole connect_timeout) is reported down for
// that render, and the next render does not wait for it again. It carries on in the background,
// and its result counts once it ends.
//
// Thread safety: every method may be called from several threads.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
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
  // Waits for a round in progress to end (a hung connection: up to its connect_timeout, or until
  // TCP gives up on it).
  ~DatabaseGauges();
  DatabaseGauges(const DatabaseGauges&) = delete;
  DatabaseGauges& operator=(const DatabaseGauges&) = delete;

  // Starts a round on this database's thread, unless one is running or the last one ended less
  // than min_query_interval ago. Returns at once.
  void start_round_if_due();
  // The last round's values, after waiting for the round in progress, if any, until
  // query_timeout after its start; {up = false} if it is still running then.
  DatabaseRound current();
  std::uint64_t rounds() const { return rounds_.load(); }
  const std::string& name() const { return database_.name; }

  // This database's samples (database="<name>"), from start_round_if_due() and current().
  void add_to(Exposition& out);

 private:
  void run();
  DatabaseRound query();

  DatabaseConfig database_;
  MetricsOptions options_;
  core::DatabaseSession session_;  // used by thread_ only
  std::mutex mutex_;
  std::condition_variable wake_;                   // thread_: a round is requested, or stopping_
  std::condition_variable ended_;                  // a round ended
  bool requested_ = false;                         // guarded by mutex_
  bool running_ = false;                           // guarded by mutex_: from the request to the round's end
  bool late_logged_ = false;                       // guarded by mutex_: the running round was reported late
  bool stopping_ = false;                          // guarded by mutex_
  std::chrono::steady_clock::time_point started_;  // guarded by mutex_
  std::optional<std::chrono::steady_clock::time_point> queried_;  // guarded by mutex_: last round's end
  DatabaseRound last_;                                            // guarded by mutex_
  std::atomic<std::uint64_t> rounds_{0};
  std::thread thread_;  // last: started once the rest is set up
};

}  // namespace quick::metrics
