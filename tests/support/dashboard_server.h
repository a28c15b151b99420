// The web dashboard (src/dashboard/) served in-process for a test: mounted on the library's
// HttpServer on a free port of 127.0.0.1, stopped by the destructor.
#pragma once

#include <string>

#include <httplib.h>

#include "dashboard/dashboard.h"
#include "http/http_server.h"

namespace quick::testing {

class DashboardServer {
 public:
  explicit DashboardServer(const dashboard::DashboardOptions& options) : server_(http::Address{"127.0.0.1", 0}) {
    dashboard::mount_dashboard(server_.routes(), options);
    server_.start();
  }

  int port() const { return server_.port(); }
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port()); }
  // A client of this server.
  httplib::Client client() const { return httplib::Client("127.0.0.1", port()); }

 private:
  http::HttpServer server_;
};

}  // namespace quick::testing
