#include "support/enqueue_paths.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "support/commands.h"
#include "support/interleaving.h"

namespace quick::testing {
namespace {

std::string json_string(const std::string& text) { return nlohmann::json(text).dump(); }

}  // namespace

const std::vector<EnqueuePath>& every_enqueue_path() {
  static const std::vector<EnqueuePath> paths = {EnqueuePath::kSqlFunction, EnqueuePath::kFastPath,
                                                 EnqueuePath::kBatchFastPath};
  return paths;
}

std::string enqueue_path_name(EnqueuePath path) {
  switch (path) {
    case EnqueuePath::kSqlFunction: return "SqlFunction";
    case EnqueuePath::kFastPath: return "FastPath";
    case EnqueuePath::kBatchFastPath: return "BatchFastPath";
  }
  return "Unknown";
}

std::string enqueue_statement(EnqueuePath path, const std::string& tenant, const std::string& job_type) {
  switch (path) {
    case EnqueuePath::kSqlFunction:
      return "SELECT item_id FROM quick.enqueue(" + sql_literal(tenant) + ", " + sql_literal(job_type) + ")";
    case EnqueuePath::kFastPath:
      return query_file_with_literals("enqueue_into_existing_zone", {{"$1", sql_literal(tenant)},
                                                                     {"$2", sql_literal(job_type)},
                                                                     {"$3", "'{}'"},
                                                                     {"$4", "'0'"},
                                                                     {"$5", "0"},
                                                                     {"$6", "false"}});
    case EnqueuePath::kBatchFastPath:
      return query_file_with_literals("enqueue_batch_into_existing_zones",
                                      {{"$1", sql_literal(R"([{"tenant":)" + json_string(tenant) + R"(,"job_type":)" +
                                                          json_string(job_type) + "}]")},
                                       {"$2", "false"}});
  }
  throw std::logic_error("unknown enqueue path");
}

std::string query_file_with_literals(const std::string& name,
                                     const std::vector<std::pair<std::string, std::string>>& parameters) {
  const auto file = source_dir() / "sql" / "queries" / (name + ".sql");
  std::ifstream in(file);
  if (!in) throw std::runtime_error("cannot read " + file.string());
  std::stringstream text;
  text << in.rdbuf();
  std::string sql = text.str();
  // Longest parameter first would matter from $10 on; the statements have at most $6.
  for (const auto& [parameter, literal] : parameters) {
    for (auto at = sql.find(parameter); at != std::string::npos; at = sql.find(parameter, at + literal.size())) {
      sql.replace(at, parameter.size(), literal);
    }
  }
  return sql;
}

}  // namespace quick::testing
