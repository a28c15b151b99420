#include "cli/table_printer.h"

#include <algorithm>
#include <iostream>
#include <vector>

namespace quick::cli {

void print_result(const std::string& title, const pqxx::result& result) {
  const auto columns = static_cast<std::size_t>(result.columns());
  std::vector<std::size_t> widths(columns);
  for (std::size_t c = 0; c < columns; ++c)
    widths[c] = std::string(result.column_name(static_cast<pqxx::row::size_type>(c))).size();
  for (const auto& row : result) {
    for (std::size_t c = 0; c < columns; ++c)
      widths[c] = std::max(widths[c], std::string(row[static_cast<pqxx::row::size_type>(c)].c_str()).size());
  }
  std::cout << "== " << title << " (" << result.size() << " rows)\n";
  for (std::size_t c = 0; c < columns; ++c) {
    std::string name = result.column_name(static_cast<pqxx::row::size_type>(c));
    std::cout << (c ? " | " : " ") << name << std::string(widths[c] - name.size(), ' ');
  }
  std::cout << "\n";
  for (std::size_t c = 0; c < columns; ++c) std::cout << (c ? "-+-" : "-") << std::string(widths[c], '-');
  std::cout << "\n";
  for (const auto& row : result) {
    for (std::size_t c = 0; c < columns; ++c) {
      std::string value = row[static_cast<pqxx::row::size_type>(c)].c_str();
      std::cout << (c ? " | " : " ") << value << std::string(widths[c] - value.size(), ' ');
    }
    std::cout << "\n";
  }
  std::cout << std::endl;
}

void print_query(pqxx::transaction_base& txn, const std::string& title, const std::string& sql) {
  print_result(title, txn.exec(sql));
}

}  // namespace quick::cli
