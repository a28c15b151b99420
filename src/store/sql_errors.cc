#include "store/sql_errors.h"

#include <nlohmann/json.hpp>

namespace quick::store {

std::string primary_message(const std::exception& error) {
  std::string text = error.what();
  const auto line_end = text.find('\n');
  if (line_end != std::string::npos) text.resize(line_end);
  for (const char* prefix : {"ERROR:  ", "FATAL:  "}) {
    const std::string p = prefix;
    if (text.compare(0, p.size(), p) == 0) text.erase(0, p.size());
  }
  return text;
}

namespace {

// The line of a field of a Postgres error's text ("\nHINT:  ...", "\nDETAIL:  ..."); empty when
// the error has none.
std::string error_field(const std::exception& error, const std::string& field) {
  const std::string text = error.what();
  const std::string marker = "\n" + field + ":  ";
  const auto at = text.find(marker);
  if (at == std::string::npos) return "";
  const auto start = at + marker.size();
  const auto end = text.find('\n', start);
  return text.substr(start, end == std::string::npos ? end : end - start);
}

}  // namespace

std::string message_with_hint(const std::exception& error) {
  const std::string hint = error_field(error, "HINT");
  return hint.empty() ? primary_message(error) : primary_message(error) + " (hint: " + hint + ")";
}

std::string out_of_range_message(const std::exception& error) {
  const std::string message = primary_message(error);
  if (message != "value overflows numeric format") return message;
  return "payload has a JSON number that Postgres cannot store (" + message +
         ": numeric holds at most 16383 digits after the decimal point); send it as a string";
}

void throw_if_tenant_moved(const pqxx::sql_error& error) {
  if (error.sqlstate() != "QM001") return;
  // DETAIL is a JSON object written by quick.check_tenants_here / quick.move_out_begin.
  std::string tenant;
  std::string moved_to;
  const auto detail = nlohmann::json::parse(error_field(error, "DETAIL"), nullptr, /*allow_exceptions=*/false);
  if (detail.is_object()) {
    tenant = detail.value("tenant", "");
    moved_to = detail.value("moved_to", "");
  }
  throw TenantMoved(primary_message(error), tenant, moved_to);
}

}  // namespace quick::store
