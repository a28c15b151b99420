// Turns the database's rejections of bad input into quick::InvalidArgument.
#pragma once

#include <string>
#include <utility>

#include <pqxx/pqxx>

#include "quick/errors.h"

namespace quick::store {

// The primary message of a Postgres error ("ERROR:  x\nCONTEXT: ..." -> "x").
std::string primary_message(const std::exception& error);

// The primary message followed by the error's HINT, when it has one ("x (hint: y)"): for errors
// whose hint says what to do, such as a migration that needs an administrator's grant.
std::string message_with_hint(const std::exception& error);

// Throws TenantMoved for an error with SQLSTATE QM001 (the placement fence), with the tenant and
// its new database from the error's DETAIL; returns for any other error.
void throw_if_tenant_moved(const pqxx::sql_error& error);

// The message of an InvalidArgument for a value out of range (SQLSTATE 22003). Numeric input
// reaches quick's SQL functions only in JSON payloads, where jsonb stores numbers as numeric:
// "value overflows numeric format" is a number in the payload numeric cannot hold (more than
// 16383 digits after the decimal point, such as 1e-20000; a double takes it for 0).
std::string out_of_range_message(const std::exception& error);

// Calls `action`; an error whose SQLSTATE says the input was invalid (22023 from the SQL API's
// argument checks, 22P02 from a malformed value, 22007 / 22008 / 22015 from a date or interval, 22003
// from a number out of range) is rethrown as InvalidArgument with the database's message, its
// transaction_aborted() true (Postgres aborted the transaction), and the placement fence's QM001
// as TenantMoved. Everything else passes through unchanged.
template <typename Action>
auto translating_input_errors(Action&& action) -> decltype(action()) {
  try {
    return action();
  } catch (const pqxx::sql_error& error) {
    throw_if_tenant_moved(error);
    const std::string& state = error.sqlstate();
    if (state == "22023" || state == "22P02" || state == "22007" || state == "22008" || state == "22015") {
      throw InvalidArgument(primary_message(error), /*transaction_aborted=*/true);
    }
    if (state == "22003") throw InvalidArgument(out_of_range_message(error), /*transaction_aborted=*/true);
    throw;
  }
}

}  // namespace quick::store
