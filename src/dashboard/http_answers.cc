#include "dashboard/http_answers.h"

#include <pqxx/pqxx>

#include "quick/errors.h"
#include "store/sql_errors.h"
#include "util/logging.h"

namespace quick::dashboard {

void send_json(httplib::Response& response, int status, const nlohmann::json& body) {
  response.status = status;
  response.set_header("Cache-Control", "no-store");
  // dump's replace mode: text from the database that is not valid UTF-8 cannot make it throw.
  response.set_content(body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), "application/json");
}

void send_error(httplib::Response& response, int status, const std::string& message) {
  send_json(response, status, nlohmann::json{{"error", message}});
}

ErrorAnswer error_answer(const std::exception_ptr& thrown) {
  try {
    std::rethrow_exception(thrown);
  } catch (const BadRequest& error) {
    return {400, error.what()};
  } catch (const NotFound& error) {
    return {404, error.what()};
  } catch (const InvalidArgument& error) {
    return {400, error.what()};
  } catch (const pqxx::insufficient_privilege& error) {
    return {403,
            "the dashboard's database login may not do this (it needs quick_admin): " + store::primary_message(error)};
  } catch (const pqxx::broken_connection& error) {
    util::component_logger("quick.dashboard")->warn("database unreachable: {}", error.what());
    return {503, "the database is unreachable: " + store::primary_message(error)};
  } catch (const pqxx::sql_error& error) {
    const std::string& state = error.sqlstate();
    if (state == "22023" || state == "22P02" || state == "22007" || state == "22008") {
      return {400, store::primary_message(error)};
    }
    if (state == "57014") return {503, "the query ran out of the dashboard's statement_timeout"};
    util::component_logger("quick.dashboard")->error("query failed ({}): {}", state, error.what());
    return {500, "the query failed: " + store::primary_message(error)};
  } catch (const std::exception& error) {
    util::component_logger("quick.dashboard")->error("request failed: {}", error.what());
    return {500, std::string("the request failed: ") + error.what()};
  } catch (...) {
    util::component_logger("quick.dashboard")->error("request failed with an unknown exception");
    return {500, "the request failed"};
  }
}

void answer(httplib::Response& response, const std::function<nlohmann::json()>& handler) {
  try {
    send_json(response, 200, handler());
  } catch (...) {
    const auto error = error_answer(std::current_exception());
    send_error(response, error.status, error.message);
  }
}

}  // namespace quick::dashboard
