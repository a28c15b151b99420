// Runs the named queries of sql/queries/ as prepared statements.
//
// libpqxx 6.4 keeps prepared-statement definitions per connection and registers them with the
// server on first use (and again after a reconnect); redefining a name with the same text is a
// no-op. So "prepare, then execute" on every call costs one map lookup, and each statement is
// parsed and planned once per connection.
#pragma once

#include <string>
#include <utility>

#include <pqxx/pqxx>

namespace quick::store {

// A statement from sql/queries/: `name` is the file's base name, `sql` its text.
struct NamedStatement {
  const char* name;
  const char* sql;
};

// Shorthand for the embedded query of that name: QUICK_QUERY(enqueue).
#define QUICK_QUERY(query_name) \
  ::quick::store::NamedStatement { "quick_" #query_name, ::quick::embedded::query::query_name }

template <typename... Args>
pqxx::result exec_named(pqxx::transaction_base& txn, const NamedStatement& statement, Args&&... args) {
  txn.conn().prepare(statement.name, statement.sql);
  return txn.exec_prepared(statement.name, std::forward<Args>(args)...);
}

}  // namespace quick::store
