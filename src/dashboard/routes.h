// The dashboard's routes, grouped by what they do; mount_dashboard (dashboard.cc) adds them all.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <httplib.h>

#include "dashboard/connection_pool.h"
#include "dashboard/dashboard.h"

namespace quick::dashboard {

// One database the routes serve, with its connections.
struct ServedDatabase {
  ServedDatabase(const DashboardDatabase& database, std::chrono::milliseconds statement_timeout)
      : name(database.name), pool(database.url, statement_timeout) {}
  const std::string name;
  ConnectionPool pool;
};

// What the routes share: the options and each database's connections. Lives as long as the
// server's routes.
struct DashboardState {
  explicit DashboardState(const DashboardOptions& options_in);
  const DashboardOptions options;
  std::vector<std::unique_ptr<ServedDatabase>> databases;  // in the order of options.databases

  // The database a request names (?database=NAME), the first when it names none. Throws
  // BadRequest (http_answers.h) naming the known databases when the name is unknown.
  ServedDatabase& database(const httplib::Request& request);
};

// GET /, /dashboard.js, /dashboard.css: the embedded page.
void add_page_routes(httplib::Server& server);
// GET /api/overview, /api/dead_items.
void add_read_routes(httplib::Server& server, std::shared_ptr<DashboardState> state);
// POST /api/dead_items/retry, /api/items/cancel, /api/{tenants,job_types}/{pause,resume}.
void add_action_routes(httplib::Server& server, std::shared_ptr<DashboardState> state);

}  // namespace quick::dashboard
