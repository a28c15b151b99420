// How the dashboard's handlers answer: JSON bodies, and every exception turned into a status
// with a JSON error ({"error": "..."}) so that none escapes into the server's threads.
//
//   BadRequest, quick::InvalidArgument, a rejected value (22023, 22P02, 22007)  400
//   NotFound                                                                      404
//   pqxx::insufficient_privilege (the database login lacks quick_admin)          403
//   the database unreachable, or a statement that ran out of statement_timeout    503
//   anything else                                                                 500, logged
#pragma once

#include <exception>
#include <functional>
#include <stdexcept>
#include <string>

#include <httplib.h>
#include <nlohmann/json.hpp>

namespace quick::dashboard {

// Input the request got wrong; the message names the field.
class BadRequest : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What the request names does not exist (404).
class NotFound : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

void send_json(httplib::Response& response, int status, const nlohmann::json& body);
void send_error(httplib::Response& response, int status, const std::string& message);

// The status and message an exception maps to (above); logs those that say the server is wrong.
struct ErrorAnswer {
  int status;
  std::string message;
};
ErrorAnswer error_answer(const std::exception_ptr& thrown);

// Runs `handler`, sends its JSON with 200, or the error its exception maps to (above).
void answer(httplib::Response& response, const std::function<nlohmann::json()>& handler);

}  // namespace quick::dashboard
