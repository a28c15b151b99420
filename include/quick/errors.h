// Errors raised by quick-pg.
//
// quick-pg reports bad input and schema problems with the exceptions below. Database errors it
// does not interpret (connection loss, serialization failures, ...) arrive as libpqxx exceptions
// unchanged, so callers can handle them as they handle any other statement of theirs.
//
// Thread safety: exception objects are immutable values.
#pragma once

#include <stdexcept>
#include <string>

namespace quick {

// Base class of every exception quick-pg defines.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// An argument was rejected. The message names the argument and what was wrong with it. Nothing
// was written: when raised by a function acting inside a caller's transaction, it was raised
// before any statement ran, unless the database itself rejected the value (e.g. a payload over
// the setting quick.max_payload_bytes), in which case Postgres aborts that transaction as usual.
class InvalidArgument : public Error {
 public:
  using Error::Error;
};

// The database's quick schema is missing, older or newer than this build needs, or a migration
// failed (migrate(), require_current_schema(); see migrate.h).
class SchemaError : public Error {
 public:
  using Error::Error;
};

}  // namespace quick
