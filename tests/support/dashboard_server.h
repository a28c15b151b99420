// The web dashboard (src/dashboard/) served in-process for a test: mounted on its own
// httplib::Server, on a free port of 127.0.0.1, in a thread of its own; stopped and joined by the
// destructor.
#pragma once

#include <stdexcept>
#include <string>
#include <thread>

#include <httplib.h>

#include "dashboard/dashboard.h"
#include "support/eventually.h"

namespace quick::testing {

class DashboardServer {
 public:
  explicit DashboardServer(const dashboard::DashboardOptions& options) {
    dashboard::mount_dashboard(server_, options);
    port_ = server_.bind_to_any_port("127.0.0.1");
    if (port_ <= 0) throw std::runtime_error("the dashboard could not bind a port");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    // stop() before the loop runs would not stop it: wait until it does.
    eventually([this] { return server_.is_running(); }, std::chrono::seconds(10), std::chrono::milliseconds(1));
  }
  ~DashboardServer() {
    server_.stop();
    thread_.join();
  }
  DashboardServer(const DashboardServer&) = delete;
  DashboardServer& operator=(const DashboardServer&) = delete;

  int port() const { return port_; }
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // A client of this server.
  httplib::Client client() const { return httplib::Client("127.0.0.1", port_); }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

}  // namespace quick::testing
