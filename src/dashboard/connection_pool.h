// Database connections for the dashboard's request threads: each request borrows one and gives
// it back, so a page polled every few seconds does not connect every time. A connection that
// broke is dropped rather than returned.
//
// Each is a core::DatabaseSession, set up as the consumer's are: a connect_timeout (5 s unless the
// URL sets one) and TCP keepalives, so that a database that does not answer fails its requests
// within seconds instead of holding the server's threads (and its stop) for good.
//
// Thread safety: borrow() and the Borrowed handles may be used from any threads.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <pqxx/pqxx>

#include "core/database_session.h"

namespace quick::dashboard {

class ConnectionPool {
 public:
  ConnectionPool(std::string url, std::chrono::milliseconds statement_timeout);

  // One connection, back to the pool when the handle goes away (unless it broke meanwhile).
  class Borrowed {
   public:
    Borrowed(ConnectionPool& pool, std::unique_ptr<core::DatabaseSession> session)
        : pool_(pool), session_(std::move(session)), conn_(&session_->connection()) {}
    ~Borrowed() { pool_.give_back(std::move(session_), *conn_); }
    Borrowed(const Borrowed&) = delete;
    Borrowed& operator=(const Borrowed&) = delete;
    pqxx::connection& operator*() const { return *conn_; }

   private:
    ConnectionPool& pool_;
    std::unique_ptr<core::DatabaseSession> session_;
    pqxx::connection* conn_;  // session_'s, taken once: asking the session again would reconnect
  };

  // Connects when no idle connection is left; throws pqxx::broken_connection when it cannot.
  Borrowed borrow();

 private:
  void give_back(std::unique_ptr<core::DatabaseSession> session, const pqxx::connection& conn);

  const std::string url_;
  const std::chrono::milliseconds statement_timeout_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<core::DatabaseSession>> idle_;  // guarded by mutex_
};

}  // namespace quick::dashboard
