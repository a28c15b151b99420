// quick dashboard: serves the web dashboard (src/dashboard/, docs/operations.md#dashboard) for one
// database until SIGINT or SIGTERM. Read-only unless an admin token is given.
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "cli/commands.h"
#include "cli/database_target.h"
#include "dashboard/dashboard.h"
#include "quick/database.h"
#include "quick/errors.h"
#include "quick/migrate.h"
#include "util/logging.h"

namespace quick::cli {
namespace {

struct DashboardCommandOptions {
  DatabaseOptions database;
  std::string listen = "127.0.0.1:8080";
  std::string admin_token_file;
};

// "host:port" -> host and port; throws InvalidArgument naming --listen.
std::pair<std::string, int> parse_listen(const std::string& listen) {
  const auto colon = listen.rfind(':');
  const std::string port_text = colon == std::string::npos ? "" : listen.substr(colon + 1);
  const bool digits = !port_text.empty() && port_text.size() <= 5 &&
                      port_text.find_first_not_of("0123456789") == std::string::npos;
  const int port = digits ? std::stoi(port_text) : -1;
  if (colon == 0 || port < 0 || port > 65535) {
    throw InvalidArgument("--listen must be HOST:PORT (such as 127.0.0.1:8080), got '" + listen + "'");
  }
  return {listen.substr(0, colon), port};
}

// The token from --admin-token-file (its first line), else $QUICK_DASHBOARD_TOKEN; "" for none.
std::string admin_token(const DashboardCommandOptions& options) {
  if (options.admin_token_file.empty()) {
    const char* token = std::getenv("QUICK_DASHBOARD_TOKEN");
    return token == nullptr ? "" : token;
  }
  std::ifstream in(options.admin_token_file);
  std::string token;
  std::getline(in, token);
  if (!token.empty() && token.back() == '\r') token.pop_back();
  if (token.empty()) throw InvalidArgument("--admin-token-file " + options.admin_token_file + " holds no token");
  return token;
}

int run_dashboard_command(const DashboardCommandOptions& options) {
  const auto [host, port] = parse_listen(options.listen);
  dashboard::DashboardOptions dashboard_options;
  dashboard_options.admin_token = admin_token(options);
  dashboard_options.database_url = resolve_database(options.database).url;
  require_current_schema(*connect(dashboard_options.database_url));  // an old schema is refused now, not per request

  // Only the main thread's sigtimedwait sees SIGINT and SIGTERM (blocked before the server's
  // threads start, which inherit the mask).
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  httplib::Server server;
  dashboard::mount_dashboard(server, dashboard_options);
  if (!server.bind_to_port(host.c_str(), port)) {
    throw std::runtime_error("cannot listen on " + options.listen + " (in use, or not an address of this host?)");
  }
  auto log = util::component_logger("quick.cli");
  log->info("dashboard on http://{}:{}/ ({}); SIGINT or SIGTERM stops it", host, port,
            dashboard_options.admin_token.empty() ? "read-only" : "actions need the admin token");
  std::atomic<bool> listen_returned{false};  // written by the serving thread, read here
  std::thread serving([&server, &listen_returned] {
    server.listen_after_bind();
    listen_returned = true;
  });
  // A stop() before the loop runs would not stop it: wait until it does (or has already ended).
  while (!server.is_running() && !listen_returned) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  int signal = 0;
  while (signal != SIGINT && signal != SIGTERM) signal = sigwaitinfo(&signals, nullptr);
  log->info("received {}, stopping", signal == SIGINT ? "SIGINT" : "SIGTERM");
  server.stop();
  serving.join();
  return 0;
}

}  // namespace

void add_dashboard_command(CLI::App& app) {
  auto options = std::make_shared<DashboardCommandOptions>();
  auto* command = app.add_subcommand("dashboard", "Serve the web dashboard (read-only unless an admin token is given)");
  add_database_options(*command, options->database);
  command->add_option("--listen", options->listen, "HOST:PORT to serve on")->capture_default_str();
  command
      ->add_option("--admin-token-file", options->admin_token_file,
                   "file whose first line is the token that enables actions (default: $QUICK_DASHBOARD_TOKEN; "
                   "neither: read-only)")
      ->check(CLI::ExistingFile);
  on_selected(*command, [options] { return run_dashboard_command(*options); });
}

}  // namespace quick::cli
