#include "store/error_classification.h"

#include <pqxx/pqxx>

#include "store/sql_errors.h"
#include "util/redact.h"

namespace quick::store {
namespace {

ErrorKind kind_of_sqlstate(const std::string& state) {
  if (state.size() != 5) return ErrorKind::kPermanent;
  const std::string error_class = state.substr(0, 2);
  if (error_class == "08") return ErrorKind::kConnectionLost;  // connection exception
  if (error_class == "40") return ErrorKind::kTransient;       // serialization failure, deadlock
  if (error_class == "53") return ErrorKind::kTransient;       // insufficient resources
  if (error_class == "57") {                                   // operator intervention
    return state == "57014" ? ErrorKind::kTransient : ErrorKind::kConnectionLost;
  }
  if (error_class == "58" || error_class == "XX") return ErrorKind::kTransient;
  if (state == "55P03" || state == "55006") return ErrorKind::kTransient;  // lock not available, object in use
  return ErrorKind::kPermanent;
}

}  // namespace

const char* to_string(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kConnectionLost: return "connection lost";
    case ErrorKind::kInDoubt: return "commit in doubt";
    case ErrorKind::kTransient: return "transient";
    case ErrorKind::kPermanent: return "permanent";
  }
  return "unknown";
}

ErrorClassification classify_error(const std::exception& error) {
  ErrorClassification result;
  // Logged and stored as an item's last_error: never with a password a message may quote.
  result.message = util::redact_passwords(primary_message(error));
  if (dynamic_cast<const pqxx::in_doubt_error*>(&error) != nullptr) {
    result.kind = ErrorKind::kInDoubt;
  } else if (dynamic_cast<const pqxx::broken_connection*>(&error) != nullptr) {
    result.kind = ErrorKind::kConnectionLost;
  } else if (dynamic_cast<const pqxx::transaction_rollback*>(&error) != nullptr) {
    // serialization_failure, deadlock_detected, ...: libpqxx 6.4 gives these no SQLSTATE.
    result.kind = ErrorKind::kTransient;
  } else if (const auto* sql = dynamic_cast<const pqxx::sql_error*>(&error)) {
    result.sqlstate = sql->sqlstate();
    result.kind = kind_of_sqlstate(result.sqlstate);
  } else {
    result.kind = ErrorKind::kPermanent;
  }
  return result;
}

ErrorClassification classify_current_exception() {
  try {
    throw;
  } catch (const std::exception& error) {
    return classify_error(error);
  } catch (...) {
    ErrorClassification result;
    result.message = "unknown exception";
    return result;
  }
}

}  // namespace quick::store
