// quick worker --config FILE: runs a consumer whose job types map to commands (see
// command_handler.h and docs/configuration.md) until SIGINT or SIGTERM, printing its counters
// every --stats-interval and when it stops, and serving Prometheus metrics on --metrics-address.

#include <iostream>
#include <memory>

#include "cli/command_handler.h"
#include "cli/commands.h"
#include "cli/duration_flags.h"
#include "cli/stop_signals.h"
#include "quick/consumer.h"
#include "quick/database.h"
#include "quick/errors.h"
#include "quick/metrics.h"
#include "quick/migrate.h"
#include "util/logging.h"

namespace quick::cli {
namespace {

struct WorkerOptions {
  std::string config_file;
  std::string stats_interval = "10s";
  std::string metrics_address = MetricsOptions{}.address;  // "off": no metrics
  int metrics_top_tenants = MetricsOptions{}.top_tenants;
};

// Metrics are an aid, not the worker's job: an address already in use (a second worker on the
// host with the default port, say) is logged as an error and the worker runs without them.
std::unique_ptr<MetricsServer> start_metrics(const WorkerOptions& options, const Consumer& consumer,
                                             spdlog::logger& log) {
  if (options.metrics_address == "off") return nullptr;
  MetricsOptions metrics_options;
  metrics_options.address = options.metrics_address;
  metrics_options.top_tenants = options.metrics_top_tenants;
  auto server = std::make_unique<MetricsServer>(consumer, metrics_options);  // bad options throw
  try {
    server->start();
  } catch (const Error& error) {
    log.error("no metrics: {}; the worker runs without them (--metrics-address sets another address)", error.what());
    return nullptr;
  }
  const auto colon = options.metrics_address.rfind(':');
  log.info("metrics on http://{}:{}{}", options.metrics_address.substr(0, colon), server->port(), metrics_options.path);
  return server;
}

int run_worker_command(const WorkerOptions& options) {
  ConsumerConfig config = load_config_file(options.config_file);
  // A worker serves only the listed job types: with none, it would only put every item aside.
  if (config.job_types.empty()) {
    throw InvalidArgument(options.config_file +
                          ": job_types must list at least one job type, each with its command: `quick worker` runs "
                          "only the job types listed there");
  }
  for (const auto& [job_type, settings] : config.job_types) {
    if (settings.command.empty()) {
      throw InvalidArgument("job_types." + job_type + ".command is required by `quick worker`");
    }
  }
  for (const auto& database : config.databases) {
    auto conn = connect(database.url);
    require_current_schema(*conn);  // a configured database is migrated explicitly
  }
  const auto interval = flag_duration(options.stats_interval);

  StopSignals stop_signals;  // before any thread starts
  Consumer consumer(config);
  for (const auto& [job_type, settings] : config.job_types) {
    consumer.handle(job_type, make_command_handler(job_type, settings));
  }
  auto log = util::component_logger("quick.cli");
  // Before the consumer starts, so that a malformed address stops the command before any work.
  auto metrics = start_metrics(options, consumer, *log);
  consumer.start();
  log->info("worker running ({} job types); SIGINT or SIGTERM stops it", config.job_types.size());
  while (!stop_signals.wait_for(interval)) std::cerr << consumer.stats().to_string() << std::endl;
  log->info("received {}, stopping", stop_signals.signal_name());
  if (metrics) metrics->stop();
  consumer.stop();
  if (const int killed = kill_remaining_commands(); killed > 0) {
    log->warn("killed {} command(s) that were still running after the stop deadline", killed);
  }
  std::cout << consumer.stats().to_string() << std::endl;
  return 0;
}

}  // namespace

void add_worker_command(CLI::App& app) {
  auto options = std::make_shared<WorkerOptions>();
  auto* command = app.add_subcommand("worker", "Run a consumer: each job type runs a command (payload on stdin)");
  command->add_option("--config", options->config_file, "YAML configuration (docs/configuration.md)")
      ->required()
      ->check(CLI::ExistingFile);
  command->add_option("--stats-interval", options->stats_interval, "how often to print counters")
      ->capture_default_str()
      ->check(positive_interval());
  command
      ->add_option("--metrics-address", options->metrics_address,
                   "host:port serving Prometheus metrics at /metrics (port 0: any free port), or off")
      ->capture_default_str();
  command
      ->add_option("--metrics-top-tenants", options->metrics_top_tenants,
                   "per-tenant metrics for this many deepest and this many oldest zones")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000));
  on_selected(*command, [options] { return run_worker_command(*options); });
}

}  // namespace quick::cli
