// The admin token that enables the dashboard's actions, for `quick dashboard` and `quick worker
// --dashboard`: the first line of --admin-token-file, else $QUICK_DASHBOARD_TOKEN, else none ("":
// the dashboard is read-only).
#pragma once

#include <string>

namespace quick::cli {

// Throws InvalidArgument when the file holds no token (an empty file must not mean "read-only"
// by accident).
std::string dashboard_admin_token(const std::string& admin_token_file);

}  // namespace quick::cli
