// Prints query results as aligned text tables, the way psql does, for the tool's reports.
#pragma once

#include <string>

#include <pqxx/pqxx>

namespace quick::cli {

void print_result(const std::string& title, const pqxx::result& result);
void print_query(pqxx::transaction_base& txn, const std::string& title, const std::string& sql);

}  // namespace quick::cli
