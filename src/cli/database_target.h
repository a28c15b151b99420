// Which database a command works on: --database, else $QUICK_DATABASE_URL, else the local
// cluster under --state-dir (started on demand and migrated automatically, since the tool owns
// it). A configured database is never migrated implicitly: `quick migrate` does that.
#pragma once

#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <pqxx/pqxx>

namespace quick::cli {

struct DatabaseOptions {
  std::string database_url;  // --database
  std::string state_dir;     // --state-dir (local cluster)
};

void add_database_options(CLI::App& command, DatabaseOptions& options);

struct DatabaseTarget {
  std::string url;
  bool local = false;  // the tool's own cluster
};

// Resolves the database to use; the local cluster is started on demand, and migrated unless
// `migrate_local` is false.
DatabaseTarget resolve_database(const DatabaseOptions& options, bool migrate_local = true);

// How the tool connects: connect() (quick/database.h) with a connect_timeout of 5 s unless `url`
// sets one (the user's wins), so that a database that does not answer fails the command with
// "timeout expired" rather than hanging it. Throws pqxx::broken_connection.
std::unique_ptr<pqxx::connection> connect_with_timeout(const std::string& url);

// Connects to the resolved database and checks that it runs this build's schema
// (require_current_schema): a command on a database without the quick schema, or with an older
// one, is refused with a message saying to run `quick migrate`, rather than failing on a missing
// view or function. Throws SchemaError.
std::unique_ptr<pqxx::connection> connect_at_current_schema(const DatabaseOptions& options);

}  // namespace quick::cli
