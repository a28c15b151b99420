// Applies the embedded migrations (see include/quick/migrate.h for the contract).
#include <pqxx/pqxx>

#include "embedded_sql.h"
#include "quick/errors.h"
#include "quick/migrate.h"
#include "schema/sql_definitions.h"
#include "store/sql_errors.h"

namespace quick {
namespace {

// The same key the migration files take with pg_advisory_xact_lock ('quick' in ASCII), so that a
// psql -f of a file and this migrator exclude each other.
constexpr long long kMigrationLockKey = 487085218667LL;

int read_applied_version(pqxx::connection& conn) {
  pqxx::nontransaction session(conn);
  const auto exists = session.exec("SELECT to_regclass('quick.schema_migrations') IS NOT NULL").at(0)[0];
  if (!exists.as<bool>()) return 0;
  return session.exec("SELECT coalesce(max(version), 0) FROM quick.schema_migrations").at(0)[0].as<int>();
}

void run_script(pqxx::connection& conn, const char* sql) {
  pqxx::nontransaction session(conn);
  session.exec(sql);
}

// Leaves the connection outside any transaction after a script failed half-way through its
// BEGIN ... COMMIT.
void rollback_quietly(pqxx::connection& conn) {
  try {
    pqxx::nontransaction session(conn);
    session.exec("ROLLBACK");
  } catch (const std::exception&) {
    // The connection is unusable anyway; the server rolled the transaction back.
  }
}

class SessionAdvisoryLock {
 public:
  explicit SessionAdvisoryLock(pqxx::connection& conn) : conn_(conn) {
    pqxx::nontransaction session(conn_);
    session.exec_params("SELECT pg_advisory_lock($1)", kMigrationLockKey);
  }
  ~SessionAdvisoryLock() {
    try {
      pqxx::nontransaction session(conn_);
      session.exec_params("SELECT pg_advisory_unlock($1)", kMigrationLockKey);
    } catch (const std::exception&) {
      // A broken connection has released the lock already.
    }
  }
  SessionAdvisoryLock(const SessionAdvisoryLock&) = delete;
  SessionAdvisoryLock& operator=(const SessionAdvisoryLock&) = delete;

 private:
  pqxx::connection& conn_;
};

// Runs the migration as the role that owns schema quick (quick_admin since migration 0015)
// whenever the login is a member of it, so that any such member may migrate and what it creates
// belongs to the owner, not to the login (docs/security.md#who-owns-the-schema). A login that may
// not act as the owner is refused up front, with what to grant, instead of failing half-way on a
// "must be owner" error. Restores the session's role when the migration is over.
class ActingAsSchemaOwner {
 public:
  explicit ActingAsSchemaOwner(pqxx::connection& conn) : conn_(conn) {
    pqxx::nontransaction session(conn_);
    previous_role_ = session.exec("SELECT pg_catalog.current_setting('role')").at(0)[0].as<std::string>();
  }
  ~ActingAsSchemaOwner() {
    try {
      pqxx::nontransaction session(conn_);
      session.exec_params("SELECT pg_catalog.set_config('role', $1, false)", previous_role_);
    } catch (const std::exception&) {
      // A broken connection has no role left to restore.
    }
  }
  ActingAsSchemaOwner(const ActingAsSchemaOwner&) = delete;
  ActingAsSchemaOwner& operator=(const ActingAsSchemaOwner&) = delete;

  // Called before the migrations and again before the definitions: migration 0015 hands the
  // schema to quick_admin on the way. The session becomes the owner when it is not the owner
  // already and may act as it; a superuser only becomes quick_admin (before 0015 it has the
  // rights it needs as itself).
  void become_owner() {
    pqxx::nontransaction session(conn_);
    const auto row = session.exec(
        "SELECT pg_catalog.pg_get_userbyid(o.oid), pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(o.oid)), "
        "       pg_catalog.quote_ident(current_user), o.oid = me.oid, me.rolsuper, "
        "       pg_catalog.pg_has_role(current_user, o.oid, 'MEMBER') "
        "  FROM pg_catalog.pg_namespace n JOIN pg_catalog.pg_roles o ON o.oid = n.nspowner, "
        "       pg_catalog.pg_roles me "
        " WHERE n.nspname = 'quick' AND me.rolname = current_user");
    if (row.empty() || row[0][3].as<bool>()) return;  // no schema yet, or the session owns it
    const auto owner = row[0][0].as<std::string>();
    const auto owner_quoted = row[0][1].as<std::string>();
    const auto login_quoted = row[0][2].as<std::string>();
    const bool superuser = row[0][4].as<bool>();
    const bool member = row[0][5].as<bool>();
    const std::string where = "schema quick in database " + std::string(conn_.dbname()) + " belongs to ";
    if (owner == "quick_admin") {
      if (!member) {
        throw SchemaError(where + "quick_admin, and " + login_quoted + " is not a member of it: migrate as a member " +
                          "(as an administrator: GRANT quick_admin TO " + login_quoted +
                          "; docs/security.md#who-owns-the-schema)");
      }
    } else if (superuser) {
      // Before migration 0015 another login owns the schema: a superuser has every right, and
      // migrates as itself until 0015 gives the schema to quick_admin.
      return;
    } else if (!member) {
      throw SchemaError(where + owner_quoted + ", not to " + login_quoted + ": migrate as " + owner_quoted +
                        " or a superuser (migration 0015 then gives the schema to quick_admin, whose members may "
                        "migrate from then on; docs/security.md#who-owns-the-schema)");
    }
    session.exec_params("SELECT pg_catalog.set_config('role', $1, false)", owner);
  }

 private:
  pqxx::connection& conn_;
  std::string previous_role_;
};

// The advisory lock above is the database's own, but roles are the cluster's: two databases of
// one cluster migrated at the same time can both find a role missing (migration 0006) or a login
// not yet a member of quick_admin (0015), and the second to create it fails on the catalog's
// unique index once the first commits. Run again, the migration finds it there, so such a failure
// is retried (a few times: a third migrator may win the next race).
constexpr int kAttemptsOnClusterConflict = 3;

bool lost_cluster_wide_race(const std::exception& error) {
  const auto* sql = dynamic_cast<const pqxx::sql_error*>(&error);
  if (sql == nullptr) return false;
  const std::string& state = sql->sqlstate();
  return state == "23505" || state == "42710";  // unique_violation, duplicate_object
}

// A database whose SQL functions a newer build installed: replacing them with this build's would
// take back that build's fixes, and it would then refuse to start (its functions stale) until
// migrated again, back and forth.
SchemaError newer_definitions(pqxx::connection& conn, int revision) {
  return SchemaError(
      "database " + std::string(conn.dbname()) + " runs SQL functions of revision " + std::to_string(revision) +
      ", newer than this build's (" + std::to_string(schema::definitions_revision()) +
      "): a newer quick-pg migrated it. Upgrade quick-pg; to go back to this build's functions on "
      "purpose, `quick migrate --allow-older-definitions` (docs/operations.md#upgrading-and-going-back)");
}

std::string migration_label(const embedded::Migration& migration) {
  char version[16];
  std::snprintf(version, sizeof version, "%04d", migration.version);
  return std::string(version) + "_" + migration.name;
}

}  // namespace

int latest_schema_version() {
  return embedded::kMigrationCount == 0 ? 0 : embedded::kMigrations[embedded::kMigrationCount - 1].version;
}

int applied_schema_version(pqxx::connection& conn) { return read_applied_version(conn); }

void require_current_schema(pqxx::connection& conn) {
  const int applied = read_applied_version(conn);
  const int latest = latest_schema_version();
  if (applied == latest) {
    const auto stale = schema::stale_functions(conn);
    if (stale.empty()) return;
    const int revision = schema::applied_definitions_revision(conn);
    if (revision > schema::definitions_revision()) throw newer_definitions(conn, revision);
    throw SchemaError("database " + std::string(conn.dbname()) + " has an older definition of " + stale.front() +
                      (stale.size() > 1 ? " and " + std::to_string(stale.size() - 1) + " more functions" : "") +
                      " than this build: run `quick migrate`");
  }
  if (applied == 0) {
    throw SchemaError("database " + std::string(conn.dbname()) + " has no quick schema: run `quick migrate` first");
  }
  if (applied < latest) {
    throw SchemaError("database " + std::string(conn.dbname()) + " is at quick schema version " +
                      std::to_string(applied) + ", this build needs " + std::to_string(latest) +
                      ": run `quick migrate`");
  }
  throw SchemaError("database " + std::string(conn.dbname()) + " is at quick schema version " +
                    std::to_string(applied) + ", newer than this build (" + std::to_string(latest) +
                    "): upgrade quick-pg");
}

MigrationReport migrate(pqxx::connection& conn, const MigrateOptions& options) {
  SessionAdvisoryLock lock(conn);
  ActingAsSchemaOwner owner(conn);
  owner.become_owner();
  MigrationReport report;
  report.version_before = read_applied_version(conn);
  const int latest = latest_schema_version();
  if (report.version_before > latest) {
    throw SchemaError("database " + std::string(conn.dbname()) + " is at quick schema version " +
                      std::to_string(report.version_before) + ", newer than the newest this build knows (" +
                      std::to_string(latest) + "); refusing to touch it: upgrade quick-pg");
  }
  for (std::size_t i = 0; i < embedded::kMigrationCount; ++i) {
    const auto& migration = embedded::kMigrations[i];
    if (migration.version <= report.version_before) continue;
    const std::string label = migration_label(migration);
    for (int attempt = 1;; ++attempt) {
      try {
        run_script(conn, migration.sql);
        break;
      } catch (const pqxx::broken_connection&) {
        throw;  // lost during its COMMIT, the migration may have been applied: no one can say here
      } catch (const pqxx::in_doubt_error&) {
        throw;
      } catch (const std::exception& error) {
        rollback_quietly(conn);
        if (attempt < kAttemptsOnClusterConflict && lost_cluster_wide_race(error)) continue;
        throw SchemaError("migration " + label + " failed and was rolled back: " + store::message_with_hint(error));
      }
    }
    if (read_applied_version(conn) != migration.version) {
      throw SchemaError("migration " + label + " ran but did not record version " + std::to_string(migration.version) +
                        " in quick.schema_migrations");
    }
    report.applied.push_back(label);
  }
  owner.become_owner();
  const int revision = schema::applied_definitions_revision(conn);
  if (revision > schema::definitions_revision() && !options.allow_older_definitions) {
    throw newer_definitions(conn, revision);
  }
  schema::apply_definitions(conn);
  report.version_after = read_applied_version(conn);
  return report;
}

}  // namespace quick
