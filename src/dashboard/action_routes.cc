// The actions: each needs the admin token (authorization.h), runs one SQL function of the
// operator API in its own transaction, and says what it changed.
#include <optional>
#include <string>

#include "dashboard/authorization.h"
#include "dashboard/http_answers.h"
#include "dashboard/request_fields.h"
#include "dashboard/routes.h"
#include "store/pg_values.h"
#include "util/logging.h"

namespace quick::dashboard {
namespace {

using Action = std::function<nlohmann::json(pqxx::work&, const nlohmann::json& body)>;

// POST `path`: refused without the token; otherwise `action` runs and its transaction commits.
void add_action(httplib::Server& server, const std::shared_ptr<DashboardState>& state, const std::string& path,
                Action action) {
  server.Post(path, [state, path, action](const httplib::Request& request, httplib::Response& response) {
    if (const auto refusal = refuse_action(request, state->options.admin_token)) {
      if (refusal->status == 401) response.set_header("WWW-Authenticate", "Bearer");
      send_error(response, refusal->status, refusal->message);
      return;
    }
    answer(response, [&] {
      const auto body = body_object(request);
      ServedDatabase& database = state->database(request);
      auto conn = database.pool.borrow();
      pqxx::work txn(*conn);
      auto result = action(txn, body);
      txn.commit();
      result["database"] = database.name;
      // As JSON: control characters in what the client sent come out escaped, not raw in the log.
      const auto text = [](const nlohmann::json& json) {
        return json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      };
      util::component_logger("quick.dashboard")
          ->info("{} on database {} from {}: {} -> {}", path, database.name, request.remote_addr, text(body),
                 text(result));
      return result;
    });
  });
}

std::string id_array_literal(const std::vector<std::int64_t>& ids) {
  std::string literal = "{";
  for (std::size_t i = 0; i < ids.size(); ++i) literal += (i ? "," : "") + std::to_string(ids[i]);
  return literal + "}";
}

// ids and the filter fields together retry the dead items that match all of them, as
// quick.retry_dead_items and `quick dead retry --id` combine them.
nlohmann::json retry_dead_items(pqxx::work& txn, const nlohmann::json& body) {
  const auto ids = body.contains("ids") ? std::optional<std::string>(id_array_literal(required_ids(body, "ids")))
                                        : std::nullopt;
  const auto tenant = optional_text(body, "tenant");
  const auto job_type = optional_text(body, "job_type");
  const auto error_contains = optional_text(body, "error_contains");
  const auto older_than = interval_of(optional_text(body, "older_than"), "older_than");
  if (!ids && !tenant && !job_type && !error_contains && !older_than) {
    throw BadRequest(
        "say which dead items to retry: ids, or at least one of tenant, job_type, error_contains, older_than");
  }
  const auto retried = txn.exec_params(
                              "SELECT quick.retry_dead_items(tenant => $1, job_type => $2, "
                              "error_contains => $3, older_than => $4::interval, ids => $5::bigint[])",
                              store::nullable(tenant), store::nullable(job_type), store::nullable(error_contains),
                              store::nullable(older_than), store::nullable(ids))
                           .at(0)
                           .at(0)
                           .as<std::int64_t>();
  return {{"retried", retried}, {"message", "retried " + std::to_string(retried) + " dead item(s)"}};
}

nlohmann::json cancel_item(pqxx::work& txn, const nlohmann::json& body) {
  const auto id = required_id(body, "id");
  const bool cancelled = txn.exec_params("SELECT quick.cancel_item($1)", id).at(0).at(0).as<bool>();
  if (!cancelled) throw NotFound("no queued item with id " + std::to_string(id));
  return {{"cancelled", true}, {"message", "cancelled item " + std::to_string(id)}};
}

// pause_tenant, resume_tenant, pause_job_type, resume_job_type: one name, a reason for a pause.
Action pause_action(const std::string& function, const std::string& field, bool pause) {
  const std::string what = field == "job_type" ? "job type" : field;
  return [function, field, what, pause](pqxx::work& txn, const nlohmann::json& body) -> nlohmann::json {
    const auto name = required_text(body, field);
    const bool changed = pause ? txn.exec_params("SELECT quick." + function + "($1, $2)", name,
                                                 store::nullable(optional_text(body, "reason")))
                                     .at(0)
                                     .at(0)
                                     .as<bool>()
                               : txn.exec_params("SELECT quick." + function + "($1)", name).at(0).at(0).as<bool>();
    const std::string state = pause ? "paused" : "resumed";
    return {{"changed", changed},
            {"message", what + " " + name +
                            (changed ? " " + state
                             : pause ? " was already paused"
                                     : " was not paused")}};
  };
}

}  // namespace

void add_action_routes(httplib::Server& server, std::shared_ptr<DashboardState> state) {
  add_action(server, state, "/api/dead_items/retry", retry_dead_items);
  add_action(server, state, "/api/items/cancel", cancel_item);
  add_action(server, state, "/api/tenants/pause", pause_action("pause_tenant", "tenant", true));
  add_action(server, state, "/api/tenants/resume", pause_action("resume_tenant", "tenant", false));
  add_action(server, state, "/api/job_types/pause", pause_action("pause_job_type", "job_type", true));
  add_action(server, state, "/api/job_types/resume", pause_action("resume_job_type", "job_type", false));
}

}  // namespace quick::dashboard
