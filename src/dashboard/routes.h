// The dashboard's routes, grouped by what they do; mount_dashboard (dashboard.cc) adds them all.
#pragma once

#include <memory>

#include <httplib.h>

#include "dashboard/connection_pool.h"
#include "dashboard/dashboard.h"

namespace quick::dashboard {

// What the routes share: the options and the connections. Lives as long as the server's routes.
struct DashboardState {
  DashboardState(const DashboardOptions& options_in)
      : options(options_in), pool(options_in.database_url, options_in.statement_timeout) {}
  const DashboardOptions options;
  ConnectionPool pool;
};

// GET /, /dashboard.js, /dashboard.css: the embedded page.
void add_page_routes(httplib::Server& server);
// GET /api/overview, /api/dead_items.
void add_read_routes(httplib::Server& server, std::shared_ptr<DashboardState> state);
// POST /api/dead_items/retry, /api/items/cancel, /api/{tenants,job_types}/{pause,resume}.
void add_action_routes(httplib::Server& server, std::shared_ptr<DashboardState> state);

}  // namespace quick::dashboard
