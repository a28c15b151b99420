#include "dashboard/request_fields.h"

#include <stdexcept>

#include "dashboard/http_answers.h"
#include "store/pg_values.h"
#include "util/duration.h"

namespace quick::dashboard {
namespace {

// A positive id from its decimal text, or nothing.
std::optional<std::int64_t> parse_id(const std::string& text) {
  if (text.empty() || text.size() > 18) return std::nullopt;
  std::int64_t id = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    id = id * 10 + (c - '0');
  }
  if (id <= 0) return std::nullopt;
  return id;
}

std::optional<std::int64_t> id_of(const nlohmann::json& value) {
  if (value.is_number_integer() && value.get<std::int64_t>() > 0) return value.get<std::int64_t>();
  if (value.is_string()) return parse_id(value.get<std::string>());
  return std::nullopt;
}

}  // namespace

std::optional<std::string> query_text(const httplib::Request& request, const std::string& name) {
  if (!request.has_param(name.c_str())) return std::nullopt;
  std::string value = request.get_param_value(name.c_str());
  if (value.empty()) return std::nullopt;
  return value;
}

int query_int(const httplib::Request& request, const std::string& name, int fallback, int min, int max) {
  const auto text = query_text(request, name);
  if (!text) return fallback;
  const auto value = parse_id(*text);
  if (!value || *value < min || *value > max) {
    throw BadRequest(name + " must be an integer from " + std::to_string(min) + " to " + std::to_string(max) +
                     ", got '" + *text + "'");
  }
  return static_cast<int>(*value);
}

nlohmann::json body_object(const httplib::Request& request) {
  if (request.body.empty()) return nlohmann::json::object();
  auto body = nlohmann::json::parse(request.body, nullptr, false);
  if (body.is_discarded() || !body.is_object()) throw BadRequest("the request body must be a JSON object");
  return body;
}

std::string required_text(const nlohmann::json& body, const std::string& name) {
  auto value = optional_text(body, name);
  if (!value) throw BadRequest(name + " is required: a non-empty string");
  return *value;
}

std::optional<std::string> optional_text(const nlohmann::json& body, const std::string& name) {
  const auto found = body.find(name);
  if (found == body.end() || found->is_null()) return std::nullopt;
  if (!found->is_string()) throw BadRequest(name + " must be a string");
  if (found->get<std::string>().empty()) return std::nullopt;
  return found->get<std::string>();
}

std::int64_t required_id(const nlohmann::json& body, const std::string& name) {
  const auto found = body.find(name);
  const auto id = found == body.end() ? std::nullopt : id_of(*found);
  if (!id) throw BadRequest(name + " must be a positive integer item id");
  return *id;
}

std::vector<std::int64_t> required_ids(const nlohmann::json& body, const std::string& name) {
  const auto found = body.find(name);
  if (found == body.end() || !found->is_array() || found->empty()) {
    throw BadRequest(name + " must be a non-empty array of item ids");
  }
  std::vector<std::int64_t> ids;
  for (std::size_t i = 0; i < found->size(); ++i) {
    const auto id = id_of((*found)[i]);
    if (!id) throw BadRequest(name + "[" + std::to_string(i) + "] must be a positive integer item id");
    ids.push_back(*id);
  }
  return ids;
}

std::optional<std::string> interval_of(const std::optional<std::string>& text, const std::string& name) {
  if (!text) return std::nullopt;
  try {
    return store::interval_text(util::parse_duration(*text));
  } catch (const std::invalid_argument& error) {
    throw BadRequest(name + " must be a duration such as 30m, 2h or 90s: " + error.what());
  }
}

}  // namespace quick::dashboard
