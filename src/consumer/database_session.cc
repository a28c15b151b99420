#include "consumer/database_session.h"

namespace quick::consumer {
namespace {

// Adds connect_timeout=5 unless the connection string sets one (a URI's query parameter or a
// keyword/value pair; in both forms a later setting wins, so ours goes first for keyword/value).
std::string with_connect_timeout(const std::string& url) {
  if (url.find("connect_timeout") != std::string::npos) return url;
  if (url.rfind("postgresql://", 0) == 0 || url.rfind("postgres://", 0) == 0) {
    return url + (url.find('?') == std::string::npos ? "?" : "&") + "connect_timeout=5";
  }
  return "connect_timeout=5 " + url;
}

}  // namespace

DatabaseSession::DatabaseSession(std::string url, std::string application_name,
                                 std::optional<std::chrono::milliseconds> statement_timeout)
    : url_(with_connect_timeout(url)), application_name_(std::move(application_name)),
      statement_timeout_(statement_timeout) {}

pqxx::connection& DatabaseSession::connection() {
  if (connection_ && !connection_->is_open()) connection_.reset();
  if (!connection_) {
    auto conn = std::make_unique<pqxx::connection>(url_);
    pqxx::nontransaction setup(*conn);
    std::string settings = "SET default_transaction_isolation = 'read committed'; SET application_name = " +
                           setup.quote(application_name_.substr(0, 63));
    if (statement_timeout_) settings += "; SET statement_timeout = " + std::to_string(statement_timeout_->count());
    setup.exec(settings);
    setup.commit();
    connection_ = std::move(conn);
    ++connects_;
  }
  return *connection_;
}

}  // namespace quick::consumer
