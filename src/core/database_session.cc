#include "core/database_session.h"

#include "quick/database.h"

namespace quick::core {
namespace {

// `conninfo` with `key=value` added unless it names `key` already (keyword/value or URI form).
std::string with_default(const std::string& conninfo, const std::string& key, const std::string& value) {
  if (conninfo.find(key + "=") != std::string::npos) return conninfo;
  const std::string setting = key + "=" + value;
  if (conninfo.rfind("postgresql://", 0) == 0 || conninfo.rfind("postgres://", 0) == 0) {
    return conninfo + (conninfo.find('?') == std::string::npos ? "?" : "&") + setting;
  }
  return setting + " " + conninfo;  // first, so that a later keyword of the caller's still wins
}

// Client side: libpq's socket. The server side is set per session below (tcp_* settings).
std::string with_liveness_defaults(const std::string& url) {
  std::string out = with_default_connect_timeout(url, 5);
  out = with_default(out, "keepalives_idle", "10");
  out = with_default(out, "keepalives_interval", "5");
  out = with_default(out, "keepalives_count", "3");
  return with_default(out, "tcp_user_timeout", "30000");
}

}  // namespace

DatabaseSession::DatabaseSession(std::string url, std::string application_name,
                                 std::optional<std::chrono::milliseconds> statement_timeout,
                                 std::optional<std::chrono::milliseconds> lock_timeout)
    : url_(with_liveness_defaults(url)),
      application_name_(std::move(application_name)),
      statement_timeout_(statement_timeout),
      lock_timeout_(lock_timeout) {}

pqxx::connection& DatabaseSession::connection() {
  if (connection_ && !connection_->is_open()) connection_.reset();
  if (!connection_) {
    auto conn = std::make_unique<pqxx::connection>(url_);
    pqxx::nontransaction setup(*conn);
    std::string settings = "SET default_transaction_isolation = 'read committed'; SET application_name = " +
                           setup.quote(application_name_.substr(0, 63)) +
                           "; SET tcp_keepalives_idle = 10; SET tcp_keepalives_interval = 5"
                           "; SET tcp_keepalives_count = 3; SET tcp_user_timeout = 30000";
    if (statement_timeout_) settings += "; SET statement_timeout = " + std::to_string(statement_timeout_->count());
    if (lock_timeout_) settings += "; SET lock_timeout = " + std::to_string(lock_timeout_->count());
    setup.exec(settings);
    setup.commit();
    connection_ = std::move(conn);
    ++connects_;
  }
  return *connection_;
}

}  // namespace quick::core
