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
// A thread that serves every database (the Scanner, the wake-up listener, the writer, the lease
// thread) must not wait a whole connect_timeout for a server that never answers while the other
// databases wait with it: its sessions connect in the background (Connecting::kInBackground).
// connection() then waits briefly (kBackgroundConnectWait, enough for a server that answers),
// and otherwise throws pqxx::broken_connection ("no answer yet"), which the loops treat as any
// lost connection (retry that database after its delay, go on with the others). The attempt goes
// on by itself, and a later call takes its connection or its error; at most one attempt runs per
// session. An attempt outliving its session ends by connect_timeout and closes what it opened.
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
  enum class Connecting { kInline, kInBackground };
  static constexpr std::chrono::milliseconds kBackgroundConnectWait{250};

  // statement_timeout, when given, bounds every statement of the session (the Managers use it to
  // bound how long a visit may hold its zones: ManagerConfig::p_duration). lock_timeout, when
  // given, bounds every wait for a lock (the writer's acknowledgments never wait long on a row a
  // handler's own transaction holds: they fail, and are retried).
  DatabaseSession(std::string url, std::string application_name,
                  std::optional<std::chrono::milliseconds> statement_timeout = std::nullopt,
                  std::optional<std::chrono::milliseconds> lock_timeout = std::nullopt,
                  Connecting connecting = Connecting::kInline);

  // The connection, (re)connecting if needed. Throws pqxx::broken_connection when the server
  // cannot be reached (kInBackground: or has not answered yet).
  pqxx::connection& connection();

  // Forget the connection (after an error that left it unusable); the next call reconnects. A
  // background attempt under way is kept: the next call waits for it rather than start another.
  void reset() { connection_.reset(); }

  bool connected() const { return connection_ != nullptr; }
  // How many times connection() had to (re)connect.
  int connects() const { return connects_; }

 private:
  std::string url_;
  std::string application_name_;
  std::optional<std::chrono::milliseconds> statement_timeout_;
  std::optional<std::chrono::milliseconds> lock_timeout_;
  Connecting connecting_;
  std::unique_ptr<pqxx::connection> connection_;
  struct BackgroundAttempt;  // shared with the thread that connects
  std::shared_ptr<BackgroundAttempt> attempt_;
  int connects_ = 0;
};

}  // namespace quick::core
