// Connecting to a quick-pg database.
//
// Thread safety: the functions keep no state and may be called from any thread. A
// pqxx::connection, and everything made from it, belongs to one thread at a time.
#pragma once

#include <memory>
#include <string>

#include <pqxx/pqxx>

namespace quick {

// Throws InvalidArgument, quoting libpq's reason, unless `conninfo` is a well-formed libpq
// connection string ("host=... dbname=...") or URI ("postgresql://..."). Never echoes passwords.
// Checks the syntax only; connects to nothing.
void validate_connection_string(const std::string& conninfo);

// Validates `conninfo`, then connects. Adds no connect_timeout: unless `conninfo` (or the
// environment's PGCONNECT_TIMEOUT) sets one, libpq waits indefinitely; see
// with_default_connect_timeout. Throws InvalidArgument for a malformed string; connection
// failures arrive as pqxx::broken_connection, with any password hidden from the message.
std::unique_ptr<pqxx::connection> connect(const std::string& conninfo);

// `conninfo` pointing at database `dbname` instead (works for keyword/value strings and URIs).
// Throws InvalidArgument if `conninfo` is malformed.
std::string with_database_name(const std::string& conninfo, const std::string& dbname);

// `conninfo` with connect_timeout=`seconds` unless it sets one already (keyword/value string or
// URI), so that connecting to an unreachable server fails instead of hanging. `seconds` is
// passed to libpq unchecked, with libpq's meaning (0 or less: wait indefinitely). The consumer
// uses 5. Does not validate `conninfo`.
std::string with_default_connect_timeout(const std::string& conninfo, int seconds);

// The connection string from the environment variable QUICK_DATABASE_URL, or "" when unset.
std::string database_url_from_environment();

}  // namespace quick
