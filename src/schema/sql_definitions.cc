#include "schema/sql_definitions.h"

#include <cstdint>
#include <cstdio>
#include <map>
#include <regex>
#include <stdexcept>

#include "embedded_sql.h"
#include "quick/errors.h"
#include "store/sql_errors.h"

namespace quick::schema {
namespace {

// Every definition file writes its functions as
//   CREATE OR REPLACE FUNCTION quick.<name>(...) ... AS $$<body>$$;
// (the shape tests/schema/sql_definitions_test.cc holds every file to).
const std::regex kFunctionHead(R"(CREATE OR REPLACE FUNCTION quick\.([a-z_][a-z0-9_]*)\()");

std::vector<FunctionSource> functions_in(const std::string& file, const std::string& sql) {
  std::vector<FunctionSource> found;
  for (auto it = std::sregex_iterator(sql.begin(), sql.end(), kFunctionHead); it != std::sregex_iterator(); ++it) {
    const auto head_end = static_cast<std::size_t>(it->position(0) + it->length(0));
    const auto open = sql.find("$$", head_end);
    const auto close = open == std::string::npos ? open : sql.find("$$", open + 2);
    if (close == std::string::npos) {
      throw std::logic_error(file + ": quick." + (*it)[1].str() + " has no $$-quoted body");
    }
    found.push_back({(*it)[1].str(), file, sql.substr(open + 2, close - open - 2)});
  }
  return found;
}

constexpr const char* kRevisionFunction = "definitions_revision";

// The number in quick.definitions_revision()'s body, " SELECT <n> ".
int revision_in_body(const std::string& body, const std::string& where) {
  static const std::regex number(R"(^\s*SELECT\s+([0-9]+)\s*;?\s*$)");
  std::smatch match;
  if (!std::regex_match(body, match, number)) {
    throw std::logic_error(where + ": quick.definitions_revision() does not read SELECT <number>: " + body);
  }
  return std::stoi(match[1].str());
}

}  // namespace

std::vector<FunctionSource> embedded_functions() {
  std::vector<FunctionSource> all;
  for (std::size_t i = 0; i < embedded::kDefinitionCount; ++i) {
    const auto& definition = embedded::kDefinitions[i];
    for (auto& function : functions_in(definition.path, definition.sql)) all.push_back(std::move(function));
  }
  return all;
}

void apply_definitions(pqxx::connection& conn) {
  pqxx::work txn(conn);
  for (std::size_t i = 0; i < embedded::kDefinitionCount; ++i) {
    const auto& definition = embedded::kDefinitions[i];
    try {
      txn.exec(definition.sql);
    } catch (const pqxx::broken_connection&) {
      throw;  // a libpqxx exception, as migrate.h says, like one from the commit below
    } catch (const std::exception& error) {
      throw SchemaError(std::string(definition.path) + " failed and was rolled back: " + store::primary_message(error));
    }
  }
  txn.commit();
}

std::vector<std::string> stale_functions(pqxx::connection& conn) {
  pqxx::nontransaction session(conn);
  std::multimap<std::string, std::string> live;  // name -> prosrc
  for (const auto& row : session.exec("SELECT p.proname, p.prosrc FROM pg_proc p "
                                      "JOIN pg_namespace n ON n.oid = p.pronamespace "
                                      "WHERE n.nspname = 'quick'")) {
    live.emplace(row[0].as<std::string>(), row[1].as<std::string>());
  }
  std::vector<std::string> stale;
  for (const auto& function : embedded_functions()) {
    const auto [first, last] = live.equal_range(function.name);
    bool current = false;
    for (auto it = first; it != last; ++it) current = current || it->second == function.body;
    if (!current) stale.push_back("quick." + function.name);
  }
  return stale;
}

int definitions_revision() {
  for (const auto& function : embedded_functions()) {
    if (function.name == kRevisionFunction) return revision_in_body(function.body, function.file);
  }
  throw std::logic_error("this build has no quick.definitions_revision()");
}

int applied_definitions_revision(pqxx::connection& conn) {
  pqxx::nontransaction session(conn);
  const auto rows = session.exec_params(
      "SELECT p.prosrc FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace "
      "WHERE n.nspname = 'quick' AND p.proname = $1",
      kRevisionFunction);
  if (rows.empty()) return 0;
  return revision_in_body(rows[0][0].as<std::string>(), "database " + std::string(conn.dbname()));
}

std::string definitions_fingerprint() {
  std::uint64_t hash = 14695981039346656037ULL;
  const auto add = [&hash](const std::string& text) {
    for (unsigned char c : text) {
      hash ^= c;
      hash *= 1099511628211ULL;
    }
    hash ^= 0xFF;  // a separator no text contains, so that moving text between files counts
    hash *= 1099511628211ULL;
  };
  for (std::size_t i = 0; i < embedded::kDefinitionCount; ++i) {
    const auto& definition = embedded::kDefinitions[i];
    const std::string path = definition.path;
    if (path.find(std::string(kRevisionFunction) + ".sql") != std::string::npos) continue;
    add(path);
    add(definition.sql);
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  return hex;
}

}  // namespace quick::schema
