#include "core/database_session.h"

#include "quick/database.h"

namespace quick::core {

DatabaseSession::DatabaseSession(std::string url, std::string application_name,
                                 std::optional<std::chrono::milliseconds> statement_timeout)
    : url_(with_default_connect_timeout(url, 5)),
      application_name_(std::move(application_name)),
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

}  // namespace quick::core
