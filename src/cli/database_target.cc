#include "cli/database_target.h"

#include <spdlog/spdlog.h>

#include "util/logging.h"

#include "local_postgres/local_cluster.h"
#include "quick/database.h"
#include "quick/migrate.h"

namespace quick::cli {
namespace {
std::shared_ptr<spdlog::logger> logger() { return util::component_logger("quick.cli"); }
}  // namespace

void add_database_options(CLI::App& command, DatabaseOptions& options) {
  command.add_option("--database", options.database_url,
                     "libpq connection string or URI (default: $QUICK_DATABASE_URL, else the "
                     "local cluster)");
  command.add_option("--state-dir", options.state_dir,
                     "where the local cluster lives (default: $QUICK_STATE_DIR or ./.quick)");
}

DatabaseTarget resolve_database(const DatabaseOptions& options, bool migrate_local) {
  std::string url = options.database_url;
  if (url.empty()) url = database_url_from_environment();
  if (!url.empty()) {
    validate_connection_string(url);
    return DatabaseTarget{url, false};
  }
  local_postgres::LocalCluster cluster(options.state_dir.empty() ? local_postgres::default_state_dir()
                                                                 : std::filesystem::path(options.state_dir));
  DatabaseTarget target{cluster.start(), true};
  if (!migrate_local) return target;
  auto conn = connect_with_timeout(target.url);
  const auto report = migrate(*conn);
  for (const auto& applied : report.applied) logger()->info("applied migration {}", applied);
  return target;
}

std::unique_ptr<pqxx::connection> connect_with_timeout(const std::string& url) {
  return connect(with_default_connect_timeout(url, 5));
}

std::unique_ptr<pqxx::connection> connect_at_current_schema(const DatabaseOptions& options) {
  auto conn = connect_with_timeout(resolve_database(options).url);
  require_current_schema(*conn);
  return conn;
}

}  // namespace quick::cli
