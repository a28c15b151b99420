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
// was written. It comes from one of two places, which transaction_aborted() tells apart:
//
// - This library, before any statement was sent (transaction_aborted() false): the caller's
//   transaction is as it was and stays usable. Most bad input is refused here (producer.h,
//   item.h say what is checked).
// - The database (transaction_aborted() true): a value only the database checks, such as a
//   payload over quick.limits.max_payload_bytes, a vesting_delay over
//   quick.limits.max_vesting_delay, or a JSON number Postgres cannot store. Postgres aborted the
//   transaction the statement ran in, as for any error, and the caller's earlier work in it with
//   it: roll it back. Do not commit it: Postgres answers that COMMIT with a rollback, and
//   libpqxx 6.4's commit() returns normally all the same (after an error in exec_params or
//   exec_prepared, which quick's statements use).
class InvalidArgument : public Error {
 public:
  using Error::Error;  // refused before any statement was sent
  // `transaction_aborted`: the database refused the value (see above).
  InvalidArgument(const std::string& message, bool transaction_aborted)
      : Error(message), transaction_aborted_(transaction_aborted) {}
  bool transaction_aborted() const { return transaction_aborted_; }

 private:
  bool transaction_aborted_ = false;
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
