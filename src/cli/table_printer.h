// Prints query results as aligned text tables, the way psql does, for the tool's reports. Every
// cell is shown through util::escape_unprintable: a tenant named with a newline or an ANSI
// escape cannot forge rows or drive the terminal.
#pragma once

#include <ostream>
#include <string>

#include <pqxx/pqxx>

namespace quick::cli {

void print_result(const std::string& title, const pqxx::result& result);
void print_result(std::ostream& out, const std::string& title, const pqxx::result& result);
void print_query(pqxx::transaction_base& txn, const std::string& title, const std::string& sql);

}  // namespace quick::cli
