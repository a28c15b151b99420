// One thread's connection to one database, opened on first use and reopened after it broke.
//
// Thread safety: none; each thread owns its sessions (libpqxx connections are single-threaded).
#pragma once

#include <memory>
#include <string>

#include <pqxx/pqxx>

namespace quick::consumer {

class DatabaseSession {
 public:
  explicit DatabaseSession(std::string url) : url_(std::move(url)) {}

  // The connection, (re)connecting if needed. Throws pqxx::broken_connection when the server
  // cannot be reached.
  pqxx::connection& connection();

  // Forget the connection (after an error that left it unusable); the next call reconnects.
  void reset() { connection_.reset(); }

  bool connected() const { return connection_ != nullptr; }
  // How many times connection() had to (re)connect.
  int connects() const { return connects_; }

 private:
  std::string url_;
  std::unique_ptr<pqxx::connection> connection_;
  int connects_ = 0;
};

}  // namespace quick::consumer
