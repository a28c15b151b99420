// The repeatable half of the schema: sql/functions/*.sql and sql/views.sql, compiled into the
// library. Unlike a migration, such a file holds the one live definition of what it defines
// (CREATE OR REPLACE) and is applied again by every `quick migrate`.
//
// Thread safety: uses the connection passed in; one thread per connection.
#pragma once

#include <string>
#include <vector>

#include <pqxx/pqxx>

namespace quick::schema {

// One function of sql/functions/ as this build defines it.
struct FunctionSource {
  std::string name;  // without the schema: "visit_zones"
  std::string file;  // "sql/functions/visit_zones.sql"
  std::string body;  // the text between its $$ quotes, as pg_proc.prosrc stores it
};

// Every function the embedded sql/functions/ files define, in file order. Throws std::logic_error
// if a file holds a definition it cannot read (tests/schema/ keep that from shipping).
std::vector<FunctionSource> embedded_functions();

// Applies every file of sql/functions/ and then sql/views.sql in one transaction, so that a
// failure leaves the previous definitions in place. Throws SchemaError naming the file.
void apply_definitions(pqxx::connection& conn);

// The functions of this build whose definition in the database is missing or differs ("quick.x"),
// i.e. the database needs `quick migrate`.
std::vector<std::string> stale_functions(pqxx::connection& conn);

// The revision of the SQL definitions (sql/functions/definitions_revision.sql): this build's, and
// the one the database runs (0 when it has none: migrated before revisions were counted, or not
// at all). Reading the database's needs no privilege beyond reading pg_proc.
int definitions_revision();
int applied_definitions_revision(pqxx::connection& conn);

// A fingerprint (FNV-1a, 64 bits, in hex) of every embedded definition file but the revision's
// own, in order: what tests/schema/definitions_revision_test.cc holds the revision to.
std::string definitions_fingerprint();

}  // namespace quick::schema
