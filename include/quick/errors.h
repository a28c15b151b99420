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
#include <utility>

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

// The database refused to enqueue for a tenant because a move took the tenant to another
// database (SQLSTATE QM001; docs/scaling.md#fencing). Nothing was enqueued there; Postgres aborted
// the transaction, as for any error. quick::Router catches it and runs the work again where the
// tenant is now.
class TenantMoved : public Error {
 public:
  TenantMoved(const std::string& message, std::string tenant, std::string moved_to)
      : Error(message), tenant_(std::move(tenant)), moved_to_(std::move(moved_to)) {}
  const std::string& tenant() const { return tenant_; }
  const std::string& moved_to() const { return moved_to_; }

 private:
  std::string tenant_;
  std::string moved_to_;
};

// A tenant move was decided (committed in the directory) but a database failed before both of its
// prepared transactions were committed. The move will complete: resolve_moves, `quick doctor` or
// the next move of the tenant commits what is left.
class MoveInDoubt : public Error {
 public:
  using Error::Error;
};

}  // namespace quick
