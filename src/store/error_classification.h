// How a background loop should react to an exception from the database layer.
//
//   connection lost  reconnect with backoff, then carry on (server restart, terminated backend,
//                    network trouble, too many connections at connect time);
//   in doubt         a COMMIT's outcome is unknown; consumer writes are lease-conditional, so
//                    repeating them is safe (the repeat reports lease_lost/item_gone);
//   transient        retry after a backoff (serialization failure, deadlock, lock timeout,
//                    statement cancelled, out of resources, ...);
//   permanent        retrying as is will not help (missing schema, bad SQL, bad data): log as an
//                    error and back off for longer; an operator has to act.
#pragma once

#include <exception>
#include <string>

namespace quick::store {

enum class ErrorKind { kConnectionLost, kInDoubt, kTransient, kPermanent };

struct ErrorClassification {
  ErrorKind kind = ErrorKind::kPermanent;
  std::string sqlstate;  // empty when not known
  std::string message;   // the primary message
  bool connection_unusable() const { return kind == ErrorKind::kConnectionLost || kind == ErrorKind::kInDoubt; }
};

const char* to_string(ErrorKind kind);

ErrorClassification classify_error(const std::exception& error);

// For use in catch (...) blocks: classifies the exception in flight.
ErrorClassification classify_current_exception();

}  // namespace quick::store
