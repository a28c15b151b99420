// The read-only API: everything the page shows, from the quick.dashboard_* functions
// (sql/functions/dashboard_*.sql), quick.paused and quick.find_dead_items.
#include <future>
#include <string>
#include <vector>

#include "dashboard/http_answers.h"
#include "dashboard/json_rows.h"
#include "dashboard/request_fields.h"
#include "dashboard/routes.h"
#include "store/pg_values.h"

namespace quick::dashboard {
namespace {

// Every database's summary, so that one page shows them all; `shown`'s entry gets `shown_fields`
// (the summary the overview read already, or why it could not). A database that cannot answer
// gets its error in place of its summary rather than failing the others. They are asked at once:
// a database that is down costs the overview its connect_timeout once, not once per such database.
nlohmann::json summaries(DashboardState& state, const ServedDatabase& shown, const nlohmann::json& shown_fields) {
  std::vector<std::future<nlohmann::json>> others;
  for (const auto& database : state.databases) {
    if (database.get() == &shown) continue;
    // An exception stays in the future, and get() below rethrows it on this thread.
    others.push_back(std::async(std::launch::async, [&state, served = database.get()] {
      auto conn = served->pool.borrow();
      pqxx::read_transaction txn(*conn);
      return rows_to_json(txn.exec_params("SELECT * FROM quick.dashboard_summary($1)", state.options.page_budget))
          .at(0);
    }));
  }
  nlohmann::json all = nlohmann::json::array();
  auto next = others.begin();
  for (const auto& database : state.databases) {
    nlohmann::json entry{{"name", database->name}};
    if (database.get() == &shown) {
      entry.update(shown_fields);
    } else {
      try {
        entry["summary"] = (next++)->get();
      } catch (const std::exception& error) {
        entry["error"] = error.what();
      }
    }
    all.push_back(std::move(entry));
  }
  return all;
}

nlohmann::json overview(DashboardState& state, ServedDatabase& database) {
  auto conn = database.pool.borrow();
  // One snapshot, so that the tables of one refresh agree with each other.
  pqxx::transaction<pqxx::isolation_level::repeatable_read, pqxx::readwrite_policy::read_only> txn(*conn);
  const int budget = state.options.page_budget;
  const int zones = state.options.zone_rows;
  nlohmann::json body;
  body["database"] = database.name;
  body["read_only"] = state.options.admin_token.empty();
  body["summary"] = rows_to_json(txn.exec_params("SELECT * FROM quick.dashboard_summary($1)", budget)).at(0);
  body["consumers"] = rows_to_json(txn.exec("SELECT * FROM quick.dashboard_consumers()"));
  body["job_types"] = rows_to_json(txn.exec_params("SELECT * FROM quick.dashboard_job_types($1)", budget));
  body["deepest_zones"] = rows_to_json(
      txn.exec_params("SELECT * FROM quick.dashboard_deepest_zones($1, $2)", zones, budget));
  body["lagging_zones"] = rows_to_json(txn.exec_params("SELECT * FROM quick.dashboard_lagging_zones($1)", zones));
  body["paused"] = rows_to_json(
      txn.exec("SELECT kind, name, paused_at, paused_by, reason FROM quick.paused ORDER BY kind, name"));
  txn.commit();
  body["databases"] = state.databases.size() > 1 ? summaries(state, database, {{"summary", body["summary"]}})
                                                 : nlohmann::json::array();
  return body;
}

nlohmann::json dead_items(DashboardState& state, const httplib::Request& request) {
  const auto tenant = query_text(request, "tenant");
  const auto job_type = query_text(request, "job_type");
  const auto error = query_text(request, "error");
  const auto older_than = interval_of(query_text(request, "older_than"), "older_than");
  const int limit = query_int(request, "limit", 100, 1, 1000);
  // payload_chars=N: each payload's first N characters of JSON text (payload_text), its size
  // (payload_bytes) and whether there is more (payload_truncated), in place of the payload: what
  // the page shows, without a refresh carrying up to `limit` whole payloads of up to 1 MiB each.
  const int payload_chars = query_int(request, "payload_chars", 0, 1, 100000);
  const std::string columns = payload_chars == 0
                                  ? "*"
                                  : "id, tenant, job_type, priority, error_count, last_error, reason, died_at, "
                                    "enqueued_at, client_item_id, left(payload::text, $6) AS payload_text, "
                                    "octet_length(payload::text) AS payload_bytes, "
                                    "length(payload::text) > $6 AS payload_truncated";
  auto conn = state.database(request).pool.borrow();
  pqxx::read_transaction txn(*conn);
  const std::string sql = "SELECT " + columns + " FROM quick.find_dead_items($1, $2, $3, $4::interval, $5)";
  const auto rows = payload_chars == 0
                        ? txn.exec_params(sql, store::nullable(tenant), store::nullable(job_type),
                                          store::nullable(error), store::nullable(older_than), limit)
                        : txn.exec_params(sql, store::nullable(tenant), store::nullable(job_type),
                                          store::nullable(error), store::nullable(older_than), limit, payload_chars);
  return nlohmann::json{{"dead_items", rows_to_json(rows)}};
}

}  // namespace

void add_read_routes(httplib::Server& server, std::shared_ptr<DashboardState> state) {
  server.Get("/api/overview", [state](const httplib::Request& request, httplib::Response& response) {
    ServedDatabase* shown = nullptr;
    try {
      shown = &state->database(request);
      send_json(response, 200, overview(*state, *shown));
    } catch (...) {
      const auto error = error_answer(std::current_exception());
      nlohmann::json body{{"error", error.message}};
      // The chosen database cannot be read: the others' summaries come all the same, so that the
      // page can still show them and offer to switch to one that answers.
      if (shown != nullptr && state->databases.size() > 1) {
        body["database"] = shown->name;
        try {
          body["databases"] = summaries(*state, *shown, {{"error", error.message}});
        } catch (const std::exception&) {
          // No thread for the others' summaries: the error alone, then.
        }
      }
      send_json(response, error.status, body);
    }
  });
  server.Get("/api/dead_items", [state](const httplib::Request& request, httplib::Response& response) {
    answer(response, [&] { return dead_items(*state, request); });
  });
}

}  // namespace quick::dashboard
