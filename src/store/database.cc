#include "quick/database.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>

#include <libpq-fe.h>

#include "quick/errors.h"
#include "util/redact.h"

namespace quick {

void validate_connection_string(const std::string& conninfo) {
  char* error_message = nullptr;
  PQconninfoOption* options = PQconninfoParse(conninfo.c_str(), &error_message);
  if (options == nullptr) {
    std::string reason = error_message != nullptr ? error_message : "out of memory";
    PQfreemem(error_message);
    while (!reason.empty() && (reason.back() == '\n' || reason.back() == ' ')) reason.pop_back();
    // libpq's reason may quote the offending URI part, the password included.
    throw InvalidArgument("malformed connection string: " + util::redact_passwords(reason, conninfo));
  }
  PQconninfoFree(options);
}

std::unique_ptr<pqxx::connection> connect(const std::string& conninfo) {
  validate_connection_string(conninfo);
  try {
    return std::make_unique<pqxx::connection>(conninfo);
  } catch (const pqxx::broken_connection& error) {
    throw pqxx::broken_connection(util::redact_passwords(error.what(), conninfo));
  }
}

std::string with_database_name(const std::string& conninfo, const std::string& dbname) {
  validate_connection_string(conninfo);
  if (conninfo.rfind("postgresql://", 0) == 0 || conninfo.rfind("postgres://", 0) == 0) {
    // A URI: a dbname query parameter, last so that it wins, overrides the path's database.
    std::string encoded;
    for (unsigned char c : dbname) {
      if (std::isalnum(c) || c == '_' || c == '-' || c == '.') {
        encoded += static_cast<char>(c);
      } else {
        char hex[4];
        std::snprintf(hex, sizeof hex, "%%%02X", c);
        encoded += hex;
      }
    }
    return conninfo + (conninfo.find('?') == std::string::npos ? "?" : "&") + "dbname=" + encoded;
  }
  // Keyword/value: a later keyword wins. Quote the value as libpq wants.
  std::string quoted = "'";
  for (char c : dbname) {
    if (c == '\\' || c == '\'') quoted += '\\';
    quoted += c;
  }
  return conninfo + " dbname=" + quoted + "'";
}

std::string with_default_connect_timeout(const std::string& conninfo, int seconds) {
  if (conninfo.find("connect_timeout") != std::string::npos) return conninfo;
  const std::string setting = "connect_timeout=" + std::to_string(seconds);
  if (conninfo.rfind("postgresql://", 0) == 0 || conninfo.rfind("postgres://", 0) == 0) {
    return conninfo + (conninfo.find('?') == std::string::npos ? "?" : "&") + setting;
  }
  return setting + " " + conninfo;  // first, so that a later keyword of the caller's still wins
}

std::string database_url_from_environment() {
  const char* url = std::getenv("QUICK_DATABASE_URL");
  return url != nullptr ? url : "";
}

}  // namespace quick
