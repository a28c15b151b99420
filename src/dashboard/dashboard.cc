#include "dashboard/dashboard.h"

#include <memory>

#include "dashboard/routes.h"

namespace quick::dashboard {

void mount_dashboard(httplib::Server& server, const DashboardOptions& options) {
  auto state = std::make_shared<DashboardState>(options);
  add_page_routes(server);
  add_read_routes(server, state);
  add_action_routes(server, state);
}

}  // namespace quick::dashboard
