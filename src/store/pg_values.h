// Conversions between C++ values and the text forms Postgres parameters and results use.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <pqxx/pqxx>

#include "quick/item.h"

namespace quick::store {

// "1500000 microseconds": an interval parameter for casts like $1::interval.
std::string interval_text(std::chrono::microseconds duration);
// "1500 milliseconds", in the unit given: converting milliseconds to microseconds overflows (and
// wraps) past 292,000 years, where the text lets Postgres refuse a value it cannot hold.
std::string interval_text(std::chrono::milliseconds duration);

// A Postgres array literal for text[] / uuid[] parameters: {"a","b\"c"}. Every element is quoted
// and escaped, so any string round-trips.
std::string array_literal(const std::vector<std::string>& elements);

// {t,f,...} for boolean[] parameters.
std::string array_literal(const std::vector<bool>& elements);

// A nullable text parameter: libpqxx sends a null char pointer as SQL NULL.
inline const char* nullable(const std::optional<std::string>& value) { return value ? value->c_str() : nullptr; }

// Epoch microseconds (as produced by extract(epoch ...) * 1e6) to a database-clock time point.
DbTime db_time_from_micros(std::int64_t micros);
// And back: a database-clock time point as epoch microseconds, for a bigint parameter.
std::int64_t micros_from_db_time(DbTime time);

// NULL-aware field readers.
std::optional<std::string> optional_text(const pqxx::field& field);

// Parses quick.outcome's text form; throws std::logic_error on anything else.
Outcome parse_outcome(const std::string& text);

}  // namespace quick::store
