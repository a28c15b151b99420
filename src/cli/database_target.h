// Which database a command works on: --database, else $QUICK_DATABASE_URL, else the local
// cluster under --state-dir (started on demand and migrated automatically, since the tool owns
// it). A configured database is never migrated implicitly: `quick migrate` does that.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

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

}  // namespace quick::cli
