// quick::Metrics (include/quick/metrics.h): the consumer's metrics and its databases' gauges as
// one page of Prometheus text.
#include "quick/metrics.h"

#include <vector>

#include "metrics/consumer_metrics.h"
#include "metrics/database_gauges.h"
#include "quick/errors.h"

namespace quick {
namespace {

void validate(const MetricsOptions& options) {
  if (options.top_tenants < 0 || options.top_tenants > 1000) {
    throw InvalidArgument("MetricsOptions::top_tenants must be from 0 to 1000, got " +
                          std::to_string(options.top_tenants));
  }
  // Above a million rows a sample costs more than a metrics round should (100,000 already spills
  // to a temporary file: docs/operations.md#metrics).
  if (options.count_limit < 1 || options.count_limit > kMaxCountLimit) {
    throw InvalidArgument("MetricsOptions::count_limit must be from 1 to " + std::to_string(kMaxCountLimit) + ", got " +
                          std::to_string(options.count_limit));
  }
  if (options.min_query_interval.count() < 0) throw InvalidArgument("MetricsOptions::min_query_interval is negative");
  if (options.query_timeout.count() <= 0) throw InvalidArgument("MetricsOptions::query_timeout must be positive");
  if (options.path.empty() || options.path.front() != '/') {
    throw InvalidArgument("MetricsOptions::path must start with /, got \"" + options.path + "\"");
  }
}

}  // namespace

class Metrics::Impl {
 public:
  Impl(const Consumer& consumer, MetricsOptions options) : consumer_(consumer), options_(std::move(options)) {
    validate(options_);
    for (const auto& database : consumer_.config().databases) {
      databases_.push_back(
          std::make_unique<metrics::DatabaseGauges>(database, consumer_.config().consumer_id, options_));
    }
  }

  std::string render() {
    metrics::Exposition out;
    metrics::add_consumer_metrics(out, consumer_.config().consumer_id, consumer_.stats());
    // Every database's round first, so that they run at once: the render then waits at most
    // query_timeout, however many databases do not answer.
    for (auto& database : databases_) database->start_round_if_due();
    for (auto& database : databases_) database->add_to(out);
    return out.text();
  }

  std::uint64_t database_query_rounds() const {
    std::uint64_t rounds = 0;
    for (const auto& database : databases_) rounds += database->rounds();
    return rounds;
  }

  const MetricsOptions& options() const { return options_; }

 private:
  const Consumer& consumer_;
  MetricsOptions options_;
  std::vector<std::unique_ptr<metrics::DatabaseGauges>> databases_;
};

Metrics::Metrics(const Consumer& consumer, MetricsOptions options)
    : impl_(std::make_unique<Impl>(consumer, std::move(options))) {}
Metrics::~Metrics() = default;
std::string Metrics::render() { return impl_->render(); }
std::uint64_t Metrics::database_query_rounds() const { return impl_->database_query_rounds(); }
const MetricsOptions& Metrics::options() const { return impl_->options(); }

}  // namespace quick
