#include "core/database_session.h"

#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>

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


// Connects to `url` and sets the session up (database_session.h).
std::unique_ptr<pqxx::connection> open_session(const std::string& url, const std::string& application_name,
                                               std::optional<std::chrono::milliseconds> statement_timeout,
                                               std::optional<std::chrono::milliseconds> lock_timeout) {
  auto conn = std::make_unique<pqxx::connection>(url);
  pqxx::nontransaction setup(*conn);
  std::string settings = "SET default_transaction_isolation = 'read committed'; SET application_name = " +
                         setup.quote(application_name.substr(0, 63)) +
                         "; SET tcp_keepalives_idle = 10; SET tcp_keepalives_interval = 5"
                         "; SET tcp_keepalives_count = 3; SET tcp_user_timeout = 30000";
  if (statement_timeout) settings += "; SET statement_timeout = " + std::to_string(statement_timeout->count());
  if (lock_timeout) settings += "; SET lock_timeout = " + std::to_string(lock_timeout->count());
  setup.exec(settings);
  setup.commit();
  return conn;
}

}  // namespace

struct DatabaseSession::BackgroundAttempt {
  std::mutex mutex;
  std::condition_variable finished_cv;
  bool finished = false;
  std::unique_ptr<pqxx::connection> connection;
  std::exception_ptr error;
};

DatabaseSession::DatabaseSession(std::string url, std::string application_name,
                                 std::optional<std::chrono::milliseconds> statement_timeout,
                                 std::optional<std::chrono::milliseconds> lock_timeout, Connecting connecting)
    : url_(with_liveness_defaults(url)),
      application_name_(std::move(application_name)),
      statement_timeout_(statement_timeout),
      lock_timeout_(lock_timeout),
      connecting_(connecting) {}

pqxx::connection& DatabaseSession::connection() {
  if (connection_ && !connection_->is_open()) connection_.reset();
  if (connection_) return *connection_;
  if (connecting_ == Connecting::kInline) {
    connection_ = open_session(url_, application_name_, statement_timeout_, lock_timeout_);
    ++connects_;
    return *connection_;
  }
  if (!attempt_) {
    auto started = std::make_shared<BackgroundAttempt>();
    // Detached: the thread owns what it shares with this session, so a session destroyed (or a
    // consumer stopped) meanwhile does not wait for it; the attempt ends by connect_timeout.
    // Should the thread not start (it throws), no attempt is left waiting for it.
    std::thread([attempt = started, url = url_, name = application_name_, statement = statement_timeout_,
                 lock = lock_timeout_] {
      std::unique_ptr<pqxx::connection> conn;
      std::exception_ptr error;
      try {
        conn = open_session(url, name, statement, lock);
      } catch (...) {
        error = std::current_exception();
      }
      std::lock_guard<std::mutex> guard(attempt->mutex);
      attempt->connection = std::move(conn);
      attempt->error = error;
      attempt->finished = true;
      attempt->finished_cv.notify_all();
    }).detach();
    attempt_ = std::move(started);
  }
  std::shared_ptr<BackgroundAttempt> attempt = attempt_;
  std::unique_lock<std::mutex> lock(attempt->mutex);
  if (!attempt->finished_cv.wait_for(lock, kBackgroundConnectWait, [&] { return attempt->finished; })) {
    throw pqxx::broken_connection(
        "no answer from the database server yet; still connecting in the background "
        "(for up to its connect_timeout)");
  }
  attempt_.reset();
  if (attempt->error) std::rethrow_exception(attempt->error);
  connection_ = std::move(attempt->connection);
  ++connects_;
  return *connection_;
}

}  // namespace quick::core
