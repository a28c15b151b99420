// quick dashboard: serves the web dashboard (src/dashboard/, docs/operations.md#dashboard) for one
// database until SIGINT or SIGTERM. Read-only unless an admin token is given.
#include <chrono>

#include <httplib.h>

#include "cli/commands.h"
#include "cli/dashboard_token.h"
#include "cli/database_target.h"
#include "cli/stop_signals.h"
#include "dashboard/dashboard.h"
#include "http/http_server.h"
#include "quick/config.h"
#include "quick/database.h"
#include "quick/errors.h"
#include "quick/migrate.h"
#include "util/logging.h"

namespace quick::cli {
namespace {

struct DashboardCommandOptions {
  DatabaseOptions database;
  std::string listen = "127.0.0.1:8080";
  std::string admin_token_file;
  std::string config_file;  // a consumer configuration: show all of its databases
};

int run_dashboard_command(const DashboardCommandOptions& options) {
  http::HttpServer server(http::parse_address(options.listen));  // a malformed --listen stops us here
  server.bind();  // and one it cannot listen on, before a local cluster is created and started for nothing
  dashboard::DashboardOptions dashboard_options;
  dashboard_options.admin_token = dashboard_admin_token(options.admin_token_file);
  if (options.config_file.empty()) {
    dashboard_options.databases.push_back({"main", resolve_database(options.database).url});
  } else {
    for (const auto& database : load_config_file(options.config_file).databases) {
      dashboard_options.databases.push_back({database.name, database.url});
    }
  }
  for (const auto& database : dashboard_options.databases) {
    require_current_schema(*connect_with_timeout(database.url));  // an old schema is refused now, not per request
  }

  StopSignals stop_signals;  // before the server's threads start
  dashboard::mount_dashboard(server.routes(), dashboard_options);
  server.start();
  auto log = util::component_logger("quick.cli");
  log->info("dashboard on http://{}:{}/ ({}); SIGINT or SIGTERM stops it", server.host(), server.port(),
            dashboard_options.admin_token.empty() ? "read-only" : "actions need the admin token");
  while (!stop_signals.wait_for(std::chrono::hours(1))) {
  }
  log->info("received {}, stopping", stop_signals.signal_name());
  server.stop();
  return 0;
}

}  // namespace

void add_dashboard_command(CLI::App& app) {
  auto options = std::make_shared<DashboardCommandOptions>();
  auto* command = app.add_subcommand("dashboard", "Serve the web dashboard (read-only unless an admin token is given)");
  add_database_options(*command, options->database);
  command->add_option("--listen", options->listen, "HOST:PORT to serve on")->capture_default_str();
  command
      ->add_option("--admin-token-file", options->admin_token_file,
                   "file whose first line is the token that enables actions (default: $QUICK_DASHBOARD_TOKEN; "
                   "neither: read-only)")
      ->check(CLI::ExistingFile);
  command
      ->add_option("--config", options->config_file,
                   "a consumer's YAML configuration (docs/configuration.md): show every database it lists")
      ->check(CLI::ExistingFile)
      ->excludes("--database")
      ->excludes("--state-dir");
  on_selected(*command, [options] { return run_dashboard_command(*options); });
}

}  // namespace quick::cli
