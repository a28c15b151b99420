// quick db start | stop | status | url: the local development cluster. Its connection string
// carries no password (it names the password file, passfile=, that only the user who started the
// cluster can read); it is printed through util::redact_passwords all the same, like everything
// the tool prints.
#include <iostream>

#include "cli/commands.h"
#include "local_postgres/local_cluster.h"
#include "util/redact.h"

namespace quick::cli {
namespace {

struct DbOptions {
  std::string state_dir;
};

local_postgres::LocalCluster cluster_for(const DbOptions& options) {
  return local_postgres::LocalCluster(options.state_dir.empty() ? local_postgres::default_state_dir()
                                                                : std::filesystem::path(options.state_dir));
}

}  // namespace

void add_db_commands(CLI::App& app) {
  auto options = std::make_shared<DbOptions>();
  auto* db = app.add_subcommand("db",
                                "Manage the local PostgreSQL cluster the tool starts when no "
                                "database is configured");
  db->require_subcommand(1);
  db->add_option("--state-dir", options->state_dir, "where the cluster lives (default: $QUICK_STATE_DIR or ./.quick)");

  auto* start = db->add_subcommand("start", "Create (first time) and start the cluster; print its URL");
  on_selected(*start, [options] {
    std::cout << util::redact_passwords(cluster_for(*options).start()) << std::endl;
    return 0;
  });
  auto* stop = db->add_subcommand("stop", "Stop the cluster (no-op when it is not running)");
  on_selected(*stop, [options] {
    const bool was_running = cluster_for(*options).stop();
    std::cerr << (was_running ? "stopped" : "not running") << std::endl;
    return 0;
  });
  auto* status = db->add_subcommand("status", "Say whether the cluster runs (exit status 0 if so)");
  on_selected(*status, [options] {
    auto cluster = cluster_for(*options);
    const bool running = cluster.is_running();
    // Before the cluster is created it has no data directory: the state directory is named.
    std::cout << (running            ? "running on port " + std::to_string(cluster.port())
                  : cluster.exists() ? "stopped"
                                     : "not created")
              << " ("
              << (cluster.data_dir().empty() ? "state directory " + cluster.state_dir().string()
                                             : cluster.data_dir().string())
              << ")" << std::endl;
    return running ? 0 : 3;
  });
  auto* url = db->add_subcommand("url", "Print the cluster's connection string");
  on_selected(*url, [options] {
    std::cout << util::redact_passwords(cluster_for(*options).connection_string()) << std::endl;
    return 0;
  });
  // Accept --state-dir after the subcommand too: `quick db start --state-dir DIR`.
  for (auto* command : {start, stop, status, url}) command->fallthrough();
}

}  // namespace quick::cli
