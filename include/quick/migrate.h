// Schema migrations: the numbered files of migrations/ and the SQL definitions of sql/functions/
// and sql/views.sql, compiled into the library.
//
// migrate() applies the pending migrations in order, each in its own transaction, while holding
// the advisory lock that the migration files themselves take, so concurrent migrators (this
// function, or psql -f on the files) apply each version exactly once; a second migrator waits
// for the first. Databases of one cluster may be migrated at the same time: the roles they share
// (migration 0006) are created by whichever gets there first, and a migration that lost that
// race is run again. It then re-applies every SQL function and the operator views
// (docs/inspecting.md) with CREATE OR REPLACE, in one transaction, so a database runs this
// build's functions afterwards. A database whose schema is newer than this build is refused with
// SchemaError and left untouched.
//
// It acts as the schema's owner: once migration 0015 has given schema quick to the role
// quick_admin, any member of quick_admin may migrate, and the session switches to that role for
// the run (SET ROLE; restored afterwards), so what it creates belongs to quick_admin. A login that
// is not a member is refused with SchemaError before anything runs (docs/security.md).
//
// Unlike producer.h and zone.h, migrate() commits: it runs its own transactions on `conn`, which
// must have none open.
//
// Thread safety: uses the connection passed in; one thread per connection.
#pragma once

#include <string>
#include <vector>

#include <pqxx/pqxx>

namespace quick {

struct MigrationReport {
  int version_before = 0;            // 0 when the quick schema did not exist
  int version_after = 0;             // latest_schema_version() after a successful run
  std::vector<std::string> applied;  // "0004_baseline", ... in order; empty when up to date
};

struct MigrateOptions {
  // Replace SQL functions of a newer revision than this build's (a database a newer quick-pg
  // migrated) with this build's own: going back on purpose. Without it, such a database is
  // refused with SchemaError after its migrations, with its functions left as they are, so an
  // older build's `quick migrate` (an old image still deployed) cannot undo an upgrade.
  bool allow_older_definitions = false;
};

// Throws SchemaError when the database is newer than this build, or when a migration or the
// definitions fail (that migration, or every definition, is rolled back; the migrations before
// it stay applied). Connection errors arrive as libpqxx exceptions unchanged
// (pqxx::broken_connection, pqxx::in_doubt_error): the migration or definitions running then may
// have been applied (the connection lost during their COMMIT); applied_schema_version() on a new
// connection tells, and migrate() again finishes the work.
MigrationReport migrate(pqxx::connection& conn, const MigrateOptions& options = {});

// The highest migration version recorded in the database (0 if none). Reads only.
int applied_schema_version(pqxx::connection& conn);

// The highest migration version compiled into this build.
int latest_schema_version();

// Throws SchemaError unless the database is at exactly latest_schema_version() and defines every
// SQL function as this build does; the message says whether to run `quick migrate` or upgrade
// quick-pg (its functions are of a newer revision than this build's). Reads only.
void require_current_schema(pqxx::connection& conn);

}  // namespace quick
