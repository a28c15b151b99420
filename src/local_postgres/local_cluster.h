// A private PostgreSQL cluster for development, demos and tests, managed by the `quick` tool:
// `quick db start|stop|status|url`, and any command run without a configured database.
//
// Layout: the state directory (default ./.quick, or $QUICK_STATE_DIR) holds the data directory,
// the server log and the chosen port. The cluster listens on 127.0.0.1 only, on a port that was
// free when it was created (kept across restarts while it stays free), with trust
// authentication for the OS user running it: it is for local use, never for production.
//
// initdb and postgres refuse to run as root. When run as root, every server command runs as
// the `postgres` OS user (runuser), and the data directory is owned by that user. If that user
// cannot reach the state directory (e.g. it lies under /root), the cluster lives in
// /var/tmp/quick-pg-<hash of the state directory> instead, and the state directory records
// where.
//
// Thread safety: none needed; one instance per command invocation.
#pragma once

#include <filesystem>
#include <string>

namespace quick::local_postgres {

// $QUICK_STATE_DIR, or ./.quick in the current directory.
std::filesystem::path default_state_dir();

class LocalCluster {
 public:
  explicit LocalCluster(std::filesystem::path state_dir);

  // Creates the cluster on first use, starts it unless it runs, makes sure the database `quick`
  // exists, and returns its connection string. Idempotent.
  std::string start();

  // Stops the server if it runs (fast shutdown). Returns whether it was running. Idempotent.
  bool stop();

  bool is_running() const;
  bool exists() const;

  // Connection string for `dbname` on this cluster (whether or not it runs).
  std::string connection_string(const std::string& dbname = "quick") const;

  const std::filesystem::path& data_dir() const { return data_dir_; }
  const std::filesystem::path& log_file() const { return log_file_; }
  int port() const { return port_; }

 private:
  std::filesystem::path state_dir_;
  std::filesystem::path cluster_root_;  // owns data/, postgres.log, the socket
  std::filesystem::path data_dir_;
  std::filesystem::path log_file_;
  int port_ = 0;
};

}  // namespace quick::local_postgres
