// Schema migrations: the numbered files of migrations/ and the SQL definitions of sql/functions/
// and sql/views.sql, compiled into the library.
//
// migrate() applies the pending migrations in order, each in its own transaction, while holding
// the advisory lock that the migration files themselves take, so concurrent migrators (this
// function, or psql -f on the files) apply each version exactly once. It then re-applies every
// SQL function and the operator views (CREATE OR REPLACE) in one transaction, so a database
// always runs this build's functions after it. A database whose schema is newer than this build
// is refused with SchemaError and left untouched.
//
// Thread safety: uses the connection passed in; one thread per connection.
#pragma once

#include <string>
#include <vector>

#include <pqxx/pqxx>

namespace quick {

struct MigrationReport {
  int version_before = 0;       // 0 when the quick schema did not exist
  int version_after = 0;
  std::vector<std::string> applied;  // "0001_queue_zones", ... in order
};

MigrationReport migrate(pqxx::connection& conn);

// The highest migration version recorded in the database (0 if none).
int applied_schema_version(pqxx::connection& conn);

// The highest migration version compiled into this build.
int latest_schema_version();

// Throws SchemaError, saying to run `quick migrate`, unless the database is at exactly
// latest_schema_version() and defines every SQL function as this build does.
void require_current_schema(pqxx::connection& conn);

}  // namespace quick
