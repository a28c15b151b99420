#include "cli/dashboard_token.h"

#include <cstdlib>
#include <fstream>

#include "quick/errors.h"

namespace quick::cli {

std::string dashboard_admin_token(const std::string& admin_token_file) {
  if (admin_token_file.empty()) {
    const char* token = std::getenv("QUICK_DASHBOARD_TOKEN");
    return token == nullptr ? "" : token;
  }
  std::ifstream in(admin_token_file);
  std::string token;
  std::getline(in, token);
  if (!token.empty() && token.back() == '\r') token.pop_back();
  if (token.empty()) throw InvalidArgument("--admin-token-file " + admin_token_file + " holds no token");
  return token;
}

}  // namespace quick::cli
