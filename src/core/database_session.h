// One thread's connection to one database, opened on first use and reopened after it broke.
//
// Every connection is set up the same way, whatever the server's or the URL's defaults:
//   * default_transaction_isolation = read committed: the consumer's statements rely on it (the
//     pointer settle refuses anything else, and SKIP LOCKED leases under SERIALIZABLE abort each
//     other; docs/protocol.md);
//   * application_name = "quick/<consumer id>/<role>", so operators can tell the connections
//     apart in pg_stat_activity;
//   * connect_timeout = 5 s unless the URL sets one, so an unreachable server cannot hang a loop;
//   * TCP keepalives (idle 10 s, then every 5 s, 3 probes) and tcp_user_timeout (30 s) on both
//     ends, unless the URL sets them: a peer that vanished is noticed within about half a minute,
//     by the client (a loop waiting for a reply) and by the server (a backend blocked sending a
//     visit's rows to a consumer that stopped reading, its zones locked: docs/consumer.md#errors);
//   * for the sessions that ask for it, statement_timeout and lock_timeout.
//
// Thread safety: none; each thread owns its sessions (libpqxx connections are single-threaded).
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include <pqxx/pqxx>

namespace quick::core {

class DatabaseSession {
 public:
  // statement_timeout, when given, bounds every statement of the session (the Managers use it to
  // bound how long a visit may hold its zones: ManagerConfig::p_duration). lock_timeout, when
  // given, bounds every wait for a lock (the writer's acknowledgments never wait long on a row a
  // handler's own transaction holds: they fail, and are retried).
  DatabaseSession(std::string url, std::string application_name,
                  std::optional<std::chrono::milliseconds> statement_timeout = std::nullopt,
                  std::optional<std::chrono::milliseconds> lock_timeout = std::nullopt);

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
  std::string application_name_;
  std::optional<std::chrono::milliseconds> statement_timeout_;
  std::optional<std::chrono::milliseconds> lock_timeout_;
  std::unique_ptr<pqxx::connection> connection_;
  int connects_ = 0;
};

}  // namespace quick::core
