// quick worker --config FILE: runs a consumer whose job types map to commands (see
// command_handler.h and docs/configuration.md) until SIGINT or SIGTERM, printing its counters
// every --stats-interval and when it stops, and serving Prometheus metrics on --metrics-address,
// with the web dashboard of its databases on the same address when --dashboard is given.

#include <iostream>
#include <memory>

#include "cli/command_handler.h"
#include "cli/commands.h"
#include "cli/dashboard_token.h"
#include "cli/database_target.h"
#include "cli/duration_flags.h"
#include "cli/stop_signals.h"
#include "dashboard/dashboard.h"
#include "http/http_server.h"
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
  bool dashboard = false;        // serve the dashboard at / on the metrics address
  std::string admin_token_file;  // enables the dashboard's actions (dashboard_token.h)
};

// The worker's HTTP server: /metrics, and the dashboard at / when asked for.
struct WorkerHttp {
  std::unique_ptr<Metrics> metrics;
  std::unique_ptr<http::HttpServer> server;
};

// Metrics and the dashboard are an aid, not the worker's job: an address already in use (a second
// worker on the host with the default port, say) is logged as an error and the worker runs
// without them. Bad options (a malformed address, an empty token file) throw before any work.
WorkerHttp start_http(const WorkerOptions& options, const ConsumerConfig& config, const Consumer& consumer,
                      spdlog::logger& log) {
  WorkerHttp http;
  if (options.metrics_address == "off") {
    if (options.dashboard) throw InvalidArgument("--dashboard is served on --metrics-address, which is off");
    return http;
  }
  MetricsOptions metrics_options;
  metrics_options.address = options.metrics_address;
  metrics_options.top_tenants = options.metrics_top_tenants;
  http.metrics = std::make_unique<Metrics>(consumer, metrics_options);  // bad options throw
  http.server = std::make_unique<http::HttpServer>(http::parse_address(options.metrics_address));
  Metrics& metrics = *http.metrics;
  http.server->routes().Get(metrics_options.path, [&metrics](const httplib::Request&, httplib::Response& response) {
    response.set_content(metrics.render(), kMetricsContentType);
  });
  if (options.dashboard) {
    dashboard::DashboardOptions dashboard_options;
    for (const auto& database : config.databases) dashboard_options.databases.push_back({database.name, database.url});
    dashboard_options.admin_token = dashboard_admin_token(options.admin_token_file);
    dashboard::mount_dashboard(http.server->routes(), dashboard_options);
  }
  try {
    http.server->start();
  } catch (const Error& error) {
    log.error("no metrics{}: {}; the worker runs without them (--metrics-address sets another address)",
              options.dashboard ? " and no dashboard" : "", error.what());
    return WorkerHttp{};
  }
  const std::string base = "http://" + http.server->host() + ":" + std::to_string(http.server->port());
  log.info("metrics on {}{}", base, metrics_options.path);
  if (options.dashboard) log.info("dashboard on {}/", base);
  return http;
}

int run_worker_command(const WorkerOptions& options) {
  // The token enables the dashboard's actions: without the dashboard it would be ignored, and the
  // operator left believing the actions are enabled somewhere.
  if (!options.admin_token_file.empty() && !options.dashboard) {
    throw InvalidArgument("--admin-token-file needs --dashboard: the token enables the dashboard's actions");
  }
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
    auto conn = connect_with_timeout(database.url);
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
  auto http = start_http(options, config, consumer, *log);
  consumer.start();
  log->info("worker running ({} job types); SIGINT or SIGTERM stops it", config.job_types.size());
  while (!stop_signals.wait_for(interval)) std::cerr << consumer.stats().to_string() << std::endl;
  log->info("received {}, stopping", stop_signals.signal_name());
  if (http.server) http.server->stop();
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
  command->add_flag("--dashboard", options->dashboard,
                    "also serve the web dashboard of its databases at / on --metrics-address");
  command
      ->add_option("--admin-token-file", options->admin_token_file,
                   "with --dashboard: file whose first line is the token that enables its actions (default: "
                   "$QUICK_DASHBOARD_TOKEN; neither: read-only)")
      ->check(CLI::ExistingFile);
  on_selected(*command, [options] { return run_worker_command(*options); });
}

}  // namespace quick::cli
