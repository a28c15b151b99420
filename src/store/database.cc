#include "quick/database.h"

#include <cstdlib>

#include <libpq-fe.h>

#include "quick/errors.h"

namespace quick {

void validate_connection_string(const std::string& conninfo) {
  char* error_message = nullptr;
  PQconninfoOption* options = PQconninfoParse(conninfo.c_str(), &error_message);
  if (options == nullptr) {
    std::string reason = error_message != nullptr ? error_message : "out of memory";
    PQfreemem(error_message);
    while (!reason.empty() && (reason.back() == '\n' || reason.back() == ' ')) reason.pop_back();
    // libpq's reason names the offending keyword or URI part, never the password's value.
    throw InvalidArgument("malformed connection string: " + reason);
  }
  PQconninfoFree(options);
}

std::unique_ptr<pqxx::connection> connect(const std::string& conninfo) {
  validate_connection_string(conninfo);
  return std::make_unique<pqxx::connection>(conninfo);
}

std::string database_url_from_environment() {
  const char* url = std::getenv("QUICK_DATABASE_URL");
  return url != nullptr ? url : "";
}

}  // namespace quick
