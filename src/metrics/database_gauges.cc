#include "metrics/database_gauges.h"

#include <map>

#include "store/error_classification.h"
#include "util/logging.h"

namespace quick::metrics {
namespace {

struct GaugeName {
  const char* name;
  const char* help;
};

// quick.queue_metrics's names -> the exported ones (sql/functions/queue_metrics.sql says how each
// is computed). Names it may add later are skipped until they are listed here.
const std::map<std::string, GaugeName>& gauge_names() {
  static const std::map<std::string, GaugeName> names{
      {"items", {"quick_database_items", "Items queued (depth); estimated above count_limit, see exact_items."}},
      {"vested_items", {"quick_database_vested_items", "Items vested (ready to run now)."}},
      {"leased_items", {"quick_database_leased_items", "Items leased by a consumer."}},
      {"exact_items", {"quick_database_exact_items", "1 when the item counts are exact, 0 when sampled."}},
      {"oldest_vested_item_age_seconds",
       {"quick_database_oldest_vested_item_age_seconds",
        "How long the oldest vested item not paused has waited (0 if none)."}},
      {"max_pointer_lag_seconds",
       {"quick_database_max_pointer_lag_seconds",
        "How long the oldest vested pointer of a tenant not paused has waited for a visit."}},
      {"paused_tenants", {"quick_database_paused_tenants", "Tenants paused (rows of quick.paused_tenants)."}},
      {"paused_job_types", {"quick_database_paused_job_types", "Job types paused (rows of quick.paused_job_types)."}},
      {"zones", {"quick_database_zones", "Non-empty queue zones (pointers); estimated above count_limit."}},
      {"exact_zones", {"quick_database_exact_zones", "1 when quick_database_zones is exact."}},
      {"dead_items", {"quick_database_dead_items", "Items in quick.dead_items; estimated above count_limit."}},
      {"exact_dead_items", {"quick_database_exact_dead_items", "1 when quick_database_dead_items is exact."}},
      {"tenant_items",
       {"quick_tenant_items", "Items of one of the top_tenants deepest or oldest zones (up to count_limit)."}},
      {"tenant_pointer_lag_seconds",
       {"quick_tenant_pointer_lag_seconds",
        "How long that zone's vested pointer has waited (0 if not vested or the tenant is paused)."}},
  };
  return names;
}

}  // namespace

DatabaseGauges::DatabaseGauges(DatabaseConfig database, const std::string& consumer_id, const MetricsOptions& options)
    : database_(std::move(database)),
      options_(options),
      session_(database_.url, "quick/" + consumer_id + "/metrics", options.query_timeout),
      thread_([this] { run(); }) {}

DatabaseGauges::~DatabaseGauges() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void DatabaseGauges::start_round_if_due() {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto now = std::chrono::steady_clock::now();
  if (running_ || (queried_ && now - *queried_ < options_.min_query_interval)) return;
  running_ = true;
  requested_ = true;
  late_logged_ = false;
  started_ = now;
  rounds_.fetch_add(1);
  wake_.notify_one();
}

DatabaseRound DatabaseGauges::current() {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!ended_.wait_until(lock, started_ + options_.query_timeout, [this] { return !running_; })) {
    const auto waited = std::chrono::steady_clock::now() - started_;
    if (!late_logged_) {
      late_logged_ = true;
      util::component_logger("quick.metrics")
          ->warn("database {}: queue metrics unavailable: no answer within query_timeout ({} ms); reported down",
                 database_.name, options_.query_timeout.count());
    }
    DatabaseRound late;
    late.seconds = std::chrono::duration<double>(waited).count();
    return late;
  }
  return last_;
}

void DatabaseGauges::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return stopping_ || requested_; });
    if (stopping_) return;
    requested_ = false;
    lock.unlock();
    DatabaseRound round = query();
    lock.lock();
    last_ = std::move(round);
    queried_ = std::chrono::steady_clock::now();
    running_ = false;
    ended_.notify_all();
  }
}

DatabaseRound DatabaseGauges::query() {
  DatabaseRound round;
  const auto started = std::chrono::steady_clock::now();
  try {
    pqxx::read_transaction txn(session_.connection());
    round.values = store::queue_metrics(txn, options_.top_tenants, options_.count_limit);
    txn.commit();
    round.up = true;
  } catch (...) {
    const auto error = store::classify_current_exception();
    if (error.connection_unusable()) session_.reset();
    util::component_logger("quick.metrics")
        ->warn("database {}: queue metrics unavailable: {}", database_.name, error.message);
    round.values.clear();
  }
  round.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return round;
}

void DatabaseGauges::add_to(Exposition& out) {
  start_round_if_due();
  const DatabaseRound round = current();
  const Labels database{{"database", database_.name}};
  out.add("quick_database_up", MetricType::kGauge, "1 when the last round of queue metrics queries succeeded.",
          database, round.up ? 1 : 0);
  if (round.up) {
    out.add("quick_database_query_seconds", MetricType::kGauge,
            "How long the last round of queue metrics queries took.", database, round.seconds);
  }
  out.add("quick_metrics_database_queries_total", MetricType::kCounter,
          "Rounds of queue metrics queries (at most one per min_query_interval).", database,
          static_cast<double>(rounds()));
  for (const auto& value : round.values) {
    const auto name = gauge_names().find(value.metric);
    if (name == gauge_names().end()) continue;
    Labels labels = database;
    if (value.tenant) labels.emplace_back("tenant", *value.tenant);
    out.add(name->second.name, MetricType::kGauge, name->second.help, labels, value.value);
  }
}

}  // namespace quick::metrics
