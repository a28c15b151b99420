#include "dashboard/authorization.h"

namespace quick::dashboard {

bool tokens_equal(const std::string& expected, const std::string& presented) {
  if (expected.empty()) return false;
  unsigned char difference = expected.size() == presented.size() ? 0 : 1;
  for (std::size_t i = 0; i < presented.size(); ++i) {
    difference |= static_cast<unsigned char>(presented[i] ^ expected[i % expected.size()]);
  }
  return difference == 0;
}

std::optional<Refusal> refuse_action(const httplib::Request& request, const std::string& admin_token) {
  if (admin_token.empty()) {
    return Refusal{403,
                   "the dashboard is read-only: start it with --admin-token-file or QUICK_DASHBOARD_TOKEN to "
                   "enable actions"};
  }
  const std::string header = request.get_header_value("Authorization");
  const std::string prefix = "Bearer ";
  if (header.compare(0, prefix.size(), prefix) != 0) {
    return Refusal{401, "actions need the header Authorization: Bearer <admin token>"};
  }
  if (!tokens_equal(admin_token, header.substr(prefix.size()))) return Refusal{401, "wrong admin token"};
  return std::nullopt;
}

}  // namespace quick::dashboard
