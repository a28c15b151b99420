#include "dashboard/dashboard.h"

#include <memory>

#include "dashboard/http_answers.h"
#include "dashboard/routes.h"
#include "quick/errors.h"

namespace quick::dashboard {

DashboardState::DashboardState(const DashboardOptions& options_in) : options(options_in) {
  if (options.databases.empty()) throw InvalidArgument("dashboard: no database to show");
  for (const auto& database : options.databases) {
    for (const auto& served : databases) {
      if (served->name == database.name) {
        throw InvalidArgument("dashboard: two databases are named \"" + database.name + "\"");
      }
    }
    databases.push_back(std::make_unique<ServedDatabase>(database, options.statement_timeout));
  }
}

ServedDatabase& DashboardState::database(const httplib::Request& request) {
  if (!request.has_param("database")) return *databases.front();
  const std::string name = request.get_param_value("database");
  std::string known;
  for (const auto& served : databases) {
    if (served->name == name) return *served;
    known += (known.empty() ? "" : ", ") + served->name;
  }
  throw NotFound("database: no database named \"" + name + "\" here (this dashboard shows " + known + ")");
}

void mount_dashboard(httplib::Server& server, const DashboardOptions& options) {
  auto state = std::make_shared<DashboardState>(options);
  add_page_routes(server);
  add_read_routes(server, state);
  add_action_routes(server, state);
}

}  // namespace quick::dashboard
