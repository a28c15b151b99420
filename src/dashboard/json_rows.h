// Query results as JSON for the page: one object per row, keyed by column name; numbers and
// booleans as JSON numbers and booleans, json/jsonb parsed, NULL as null, the rest as text.
#pragma once

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

namespace quick::dashboard {

nlohmann::json rows_to_json(const pqxx::result& result);

}  // namespace quick::dashboard
