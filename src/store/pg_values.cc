#include "store/pg_values.h"

#include <stdexcept>

namespace quick::store {

std::string interval_text(std::chrono::microseconds duration) {
  return std::to_string(duration.count()) + " microseconds";
}

std::string interval_text(std::chrono::milliseconds duration) {
  return std::to_string(duration.count()) + " milliseconds";
}

std::string array_literal(const std::vector<std::string>& elements) {
  std::string out = "{";
  for (std::size_t i = 0; i < elements.size(); ++i) {
    if (i > 0) out += ',';
    out += '"';
    for (char c : elements[i]) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  out += '}';
  return out;
}

std::string array_literal(const std::vector<bool>& elements) {
  std::string out = "{";
  for (std::size_t i = 0; i < elements.size(); ++i) {
    if (i > 0) out += ',';
    out += elements[i] ? 't' : 'f';
  }
  out += '}';
  return out;
}

DbTime db_time_from_micros(std::int64_t micros) {
  return DbTime{std::chrono::duration_cast<DbTime::duration>(std::chrono::microseconds{micros})};
}

std::int64_t micros_from_db_time(DbTime time) {
  return std::chrono::duration_cast<std::chrono::microseconds>(time.time_since_epoch()).count();
}

std::optional<std::string> optional_text(const pqxx::field& field) {
  if (field.is_null()) return std::nullopt;
  return field.as<std::string>();
}

Outcome parse_outcome(const std::string& text) {
  if (text == "done") return Outcome::kDone;
  if (text == "lease_lost") return Outcome::kLeaseLost;
  if (text == "item_gone") return Outcome::kItemGone;
  throw std::logic_error("unexpected quick.outcome value: " + text);
}

}  // namespace quick::store
