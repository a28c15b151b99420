#include "dashboard/json_rows.h"

#include <cstdint>

namespace quick::dashboard {
namespace {

// Type OIDs from pg_type.dat: fixed since Postgres 7.
constexpr pqxx::oid kBool = 16, kInt8 = 20, kInt2 = 21, kInt4 = 23, kFloat4 = 700, kFloat8 = 701, kNumeric = 1700,
                    kJson = 114, kJsonb = 3802;

nlohmann::json field_to_json(const pqxx::field& field, pqxx::oid type) {
  if (field.is_null()) return nullptr;
  switch (type) {
    case kBool: return field.as<bool>();
    case kInt2:
    case kInt4:
    case kInt8: return field.as<std::int64_t>();
    case kFloat4:
    case kFloat8:
    case kNumeric: return field.as<double>();
    case kJson:
    case kJsonb: return nlohmann::json::parse(field.c_str(), nullptr, false);
    default: return field.as<std::string>();
  }
}

}  // namespace

nlohmann::json rows_to_json(const pqxx::result& result) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : result) {
    nlohmann::json object = nlohmann::json::object();
    for (pqxx::row::size_type column = 0; column < row.size(); ++column) {
      object[result.column_name(column)] = field_to_json(row[column], result.column_type(column));
    }
    rows.push_back(std::move(object));
  }
  return rows;
}

}  // namespace quick::dashboard
