#include "cli/table_printer.h"

#include <algorithm>
#include <iostream>
#include <vector>

#include "util/printable.h"
#include "util/text.h"

namespace quick::cli {
namespace {

// Every cell is untrusted text (tenants and job types come from producers): escaped, so that it
// cannot forge rows or drive the terminal, and measured in characters for the alignment.
std::string cell(const char* text) { return util::escape_unprintable(text); }

std::string padded(const std::string& text, std::size_t width) {
  const std::size_t length = util::utf8_length(text);
  return text + std::string(width > length ? width - length : 0, ' ');
}

}  // namespace

void print_result(const std::string& title, const pqxx::result& result) { print_result(std::cout, title, result); }

void print_result(std::ostream& out, const std::string& title, const pqxx::result& result) {
  const auto columns = static_cast<std::size_t>(result.columns());
  std::vector<std::string> names(columns);
  std::vector<std::vector<std::string>> rows;
  std::vector<std::size_t> widths(columns);
  for (std::size_t c = 0; c < columns; ++c) {
    names[c] = cell(result.column_name(static_cast<pqxx::row::size_type>(c)));
    widths[c] = util::utf8_length(names[c]);
  }
  for (const auto& row : result) {
    rows.emplace_back(columns);
    for (std::size_t c = 0; c < columns; ++c) {
      rows.back()[c] = cell(row[static_cast<pqxx::row::size_type>(c)].c_str());
      widths[c] = std::max(widths[c], util::utf8_length(rows.back()[c]));
    }
  }
  out << "== " << util::escape_unprintable(title) << " (" << result.size() << " rows)\n";
  for (std::size_t c = 0; c < columns; ++c) out << (c ? " | " : " ") << padded(names[c], widths[c]);
  out << "\n";
  for (std::size_t c = 0; c < columns; ++c) out << (c ? "-+-" : "-") << std::string(widths[c], '-');
  out << "\n";
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < columns; ++c) out << (c ? " | " : " ") << padded(row[c], widths[c]);
    out << "\n";
  }
  out << std::endl;
}

void print_query(pqxx::transaction_base& txn, const std::string& title, const std::string& sql) {
  print_result(title, txn.exec(sql));
}

}  // namespace quick::cli
