// Who may run the dashboard's actions: the bearer of the admin token the dashboard was started
// with. Without a token the dashboard is read-only.
#pragma once

#include <optional>
#include <string>

#include <httplib.h>

namespace quick::dashboard {

// Whether `presented` equals `expected` (non-empty), in a time that depends on the length of
// `presented` only, so that timing reveals nothing about the token.
bool tokens_equal(const std::string& expected, const std::string& presented);

struct Refusal {
  int status;  // 401: no or a wrong token; 403: the dashboard is read-only
  std::string message;
};

// Nothing when `request` carries `Authorization: Bearer <admin_token>`; else why not.
std::optional<Refusal> refuse_action(const httplib::Request& request, const std::string& admin_token);

}  // namespace quick::dashboard
