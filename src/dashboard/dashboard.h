// The web dashboard (docs/operations.md#dashboard): one page and a JSON API over one or more
// databases, mounted on any httplib::Server, `quick dashboard`'s own, `quick worker`'s or an
// application's. Every API route takes ?database=NAME (default: the first database).
//
//   GET  /                      the page (embedded at build time from src/dashboard/page/)
//   GET  /api/overview          every database's summary; for the selected one the consumers,
//                               job types, deepest and lagging zones, pauses
//   GET  /api/dead_items        search: ?tenant=&job_type=&error=&older_than=30m&limit=100;
//                               &payload_chars=N: each payload's first N characters, not all of it
//   POST /api/dead_items/retry  {"ids": [..]}, a filter {"tenant", "job_type", "error_contains",
//                               "older_than"}, or both (the listed items the filter matches)
//   POST /api/items/cancel      {"id": 42}
//   POST /api/tenants/pause     {"tenant": "t", "reason": "..."}; /api/tenants/resume {"tenant"}
//   POST /api/job_types/pause   {"job_type": "j", "reason": "..."}; /api/job_types/resume
//
// Actions need `Authorization: Bearer <admin_token>`; without a configured token the dashboard is
// read-only and every action answers 403. The database login's own privileges apply on top: a
// login without quick_admin gets 403 from the database.
//
// Thread safety: the handlers run on the server's worker threads at once; each borrows its own
// connection from a pool the mounted routes share.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include <httplib.h>

namespace quick::dashboard {

// One database the dashboard shows.
struct DashboardDatabase {
  std::string name;  // what the page calls it
  std::string url;   // libpq connection string
};

struct DashboardOptions {
  // The databases shown, at least one; the page shows each one's summary and the details of the
  // one selected (the first by default). Names must be unique.
  std::vector<DashboardDatabase> databases;
  // Bearer token that authorises actions; empty (the default) makes the dashboard read-only.
  std::string admin_token;
  // Rows in each zone table (deepest, lagging). Default: 10.
  int zone_rows = 10;
  // Pages of each table the aggregate queries read at most before they sample
  // (quick.dashboard_sample_percent). Default: 2048 (16 MiB).
  int page_budget = 2048;
  // statement_timeout of the dashboard's sessions, so that no request holds a backend long.
  // Default: 5 s.
  std::chrono::milliseconds statement_timeout{5000};
};

// Adds the page and the API routes to `server`. Connects lazily: a database that is down gives
// 503 answers (after at most its connect_timeout, 5 s unless its URL sets one), not an exception
// here. Throws InvalidArgument for no database or a repeated name.
void mount_dashboard(httplib::Server& server, const DashboardOptions& options);

}  // namespace quick::dashboard
