// Reading a request's fields: query-string parameters and JSON bodies. Every reader throws
// BadRequest naming the field and what it must be, so that the answer is a 400 the page shows.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

namespace quick::dashboard {

// A query-string parameter; absent or empty: nothing.
std::optional<std::string> query_text(const httplib::Request& request, const std::string& name);
// An integer query-string parameter in [min, max]; absent or empty: `fallback`.
int query_int(const httplib::Request& request, const std::string& name, int fallback, int min, int max);

// The body as a JSON object ({} when empty).
nlohmann::json body_object(const httplib::Request& request);
// A string field that must be present and non-empty.
std::string required_text(const nlohmann::json& body, const std::string& name);
// A string field that may be absent, null or empty (then: nothing).
std::optional<std::string> optional_text(const nlohmann::json& body, const std::string& name);
// An item id: a positive integer, as a JSON number or a string of digits.
std::int64_t required_id(const nlohmann::json& body, const std::string& name);
// A non-empty array of item ids.
std::vector<std::int64_t> required_ids(const nlohmann::json& body, const std::string& name);
// A duration ("30m", "2h", "1.5s": util/duration.h) as a Postgres interval literal; nothing when
// `text` is.
std::optional<std::string> interval_of(const std::optional<std::string>& text, const std::string& name);

}  // namespace quick::dashboard
