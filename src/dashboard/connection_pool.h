// Database connections for the dashboard's request threads: each request borrows one and gives
// it back, so a page polled every few seconds does not connect every time. A connection that
// broke is dropped rather than returned.
//
// Thread safety: borrow() and the Borrowed handles may be used from any threads.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <pqxx/pqxx>

namespace quick::dashboard {

class ConnectionPool {
 public:
  ConnectionPool(std::string url, std::chrono::milliseconds statement_timeout);

  // One connection, back to the pool when the handle goes away (unless it broke meanwhile).
  class Borrowed {
   public:
    Borrowed(ConnectionPool& pool, std::unique_ptr<pqxx::connection> conn) : pool_(pool), conn_(std::move(conn)) {}
    ~Borrowed() { pool_.give_back(std::move(conn_)); }
    Borrowed(const Borrowed&) = delete;
    Borrowed& operator=(const Borrowed&) = delete;
    pqxx::connection& operator*() const { return *conn_; }

   private:
    ConnectionPool& pool_;
    std::unique_ptr<pqxx::connection> conn_;
  };

  // Connects when no idle connection is left; throws pqxx::broken_connection when it cannot.
  Borrowed borrow();

 private:
  void give_back(std::unique_ptr<pqxx::connection> conn);

  const std::string url_;
  const std::chrono::milliseconds statement_timeout_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<pqxx::connection>> idle_;  // guarded by mutex_
};

}  // namespace quick::dashboard
