// Prometheus metrics of a consumer and of the databases it serves, in the Prometheus text
// format (version 0.0.4). Off unless you create one of these: the library serves nothing by
// itself; `quick worker` serves them on 127.0.0.1:9464 by default (--metrics-address).
//
//   quick::Consumer consumer(config);
//   ...
//   consumer.start();
//   quick::MetricsServer metrics(consumer, {});   // MetricsOptions: address, top_tenants, ...
//   metrics.start();                              // GET http://127.0.0.1:9464/metrics
//   ...
//   metrics.stop();                               // before the consumer goes away
//
// An application with its own HTTP server uses quick::Metrics instead and serves render()'s text
// (Content-Type kMetricsContentType) on its own route.
//
// What is exported (names, labels, meanings, alert rules): docs/operations.md#metrics. In short:
// the consumer's counters, per job type where it makes sense (a job type without a handler in this
// consumer counts under job_type="(other)"), handler-duration and pickup-latency histograms, and
// per database the queue's depth, vested and leased items, oldest vested item age and max pointer
// lag (paused tenants and job types left out), paused tenants and job types, dead items, and the
// same for the top_tenants deepest and oldest zones only: at most 2 x top_tenants tenants per
// scrape, but the tenants change from round to round, so the series a scraper stores over time
// grow with the number of tenants (top_tenants 0 turns them off; docs/operations.md#metrics).
//
// Database queries: one round (one quick.queue_metrics call per database) at most every
// min_query_interval, however often Prometheus scrapes; a scrape in between gets the values of
// the last round. Their cost is bounded by count_limit and top_tenants, not by the number of
// tenants (docs/operations.md#metrics has a measurement at 1,000,000 tenants). The databases are
// queried at once, each on a thread of its own, and a render waits for a round at most
// query_timeout after its start, however many databases hang. A database that cannot be queried,
// or has not answered by then, is logged (logger quick.metrics) and reported as
// quick_database_up 0; it never fails the scrape nor stops the consumer.
//
// Lifetime: the Consumer must outlive the Metrics or MetricsServer made from it. Destroying one
// waits for its databases' rounds in progress: at once normally; against a database that does
// not answer, up to its connect_timeout (5 s unless its URL sets one), or for a connection that
// went silent mid-query until TCP gives up on it (about 30 s).
// Thread safety: all methods may be called from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "quick/consumer.h"

namespace quick {

inline constexpr const char* kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";
// The largest MetricsOptions::count_limit.
inline constexpr int kMaxCountLimit = 1'000'000;

struct MetricsOptions {
  // host:port (or [ipv6]:port) MetricsServer listens on; port 0 picks a free port (see port()).
  std::string address = "127.0.0.1:9464";
  std::string path = "/metrics";  // the route MetricsServer serves
  // Per-tenant series: this many deepest zones and this many oldest vested zones per database.
  int top_tenants = 5;
  // A database is queried at most once per interval, whatever the scrape rate.
  std::chrono::milliseconds min_query_interval{5000};
  // Counts above this many rows are estimated (docs/operations.md#metrics): bounds a query's cost.
  // 1 to kMaxCountLimit.
  int count_limit = 10000;
  // statement_timeout of the metrics' own connection to each database, and the longest a render
  // waits for a database's round: a round still running then is reported down (quick_database_up
  // 0). Keep it below the scraper's timeout (Prometheus: scrape_timeout, 10 s by default).
  std::chrono::milliseconds query_timeout{5000};
};

class Metrics {
 public:
  // Validates `options` (throws InvalidArgument); connects to nothing until the first render().
  Metrics(const Consumer& consumer, MetricsOptions options);
  ~Metrics();
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  // The metrics in the Prometheus text format. Queries the databases if their last round is
  // older than min_query_interval; never throws for a database error.
  std::string render();
  // Rounds of database queries so far (summed over the databases): for tests and for the
  // quick_metrics_database_queries_total counter.
  std::uint64_t database_query_rounds() const;
  const MetricsOptions& options() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

class MetricsServer {
 public:
  MetricsServer(const Consumer& consumer, MetricsOptions options);  // throws InvalidArgument
  ~MetricsServer();                                                 // stop()
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // Binds options.address and serves GET options.path on a thread; returns once it listens.
  // Throws Error when the address cannot be bound. Calls after the first do nothing.
  void start();
  // Stops serving; prompt (a scrape in progress finishes) and idempotent, safe before start().
  void stop();
  // The bound port (the one picked when the address said port 0); 0 before start().
  int port() const;
  Metrics& metrics();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace quick
