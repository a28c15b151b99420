// Connecting to a quick-pg database.
//
// Thread safety: a pqxx::connection, and everything made from it, belongs to one thread.
#pragma once

#include <memory>
#include <string>

#include <pqxx/pqxx>

namespace quick {

// Throws InvalidArgument, quoting libpq's reason, unless `conninfo` is a well-formed libpq
// connection string ("host=... dbname=...") or URI ("postgresql://..."). Never echoes passwords.
void validate_connection_string(const std::string& conninfo);

// Validates `conninfo`, then connects. Connection failures arrive as pqxx::broken_connection.
std::unique_ptr<pqxx::connection> connect(const std::string& conninfo);

// `conninfo` pointing at database `dbname` instead (works for keyword/value strings and URIs).
std::string with_database_name(const std::string& conninfo, const std::string& dbname);

// `conninfo` with connect_timeout=`seconds` unless it sets one already (keyword/value string or
// URI), so that connecting to an unreachable server fails instead of hanging.
std::string with_default_connect_timeout(const std::string& conninfo, int seconds);

// The connection string from the environment variable QUICK_DATABASE_URL, or "" when unset.
std::string database_url_from_environment();

}  // namespace quick
