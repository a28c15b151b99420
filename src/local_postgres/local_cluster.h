// A private PostgreSQL cluster for development, demos and tests, managed by the `quick` tool:
// `quick db start|stop|status|url`, and any command run without a configured database.
//
// Only the user who started it can log in (docs/security.md#the-development-cluster). The server
// listens on 127.0.0.1 only, with scram-sha-256 for every login (no trust); the superuser
// `postgres` has a password generated at creation, kept in a libpq password file (0600) in the
// state directory. The connection string names that file (`passfile=`) and carries no secret,
// so it can be printed, logged and passed to child processes; reading the file takes the OS
// user's own permissions. (It also says `password=''`: an empty password, which keeps libpq from
// using $PGPASSWORD instead of the file.) Other logins authenticate with their own passwords.
//
// Layout: the state directory (default ./.quick, or $QUICK_STATE_DIR) holds
//   cluster-location  the cluster's directory (see below)
//   port              the port, chosen when the cluster was created and kept for good
//   pgpass            the password file the connection string names
//   lock              flock'ed while a command starts or stops the cluster
// The state directory must be a real directory (not a symbolic link) owned by the user running
// the tool and writable by nobody else; the tool creates it 0700 when it is missing. The
// cluster's directory (data/, postgres.log) is made with mkdtemp (a fresh, unpredictable name,
// never an existing directory), 0700: `<state dir>/postgres-XXXXXX`.
//
// initdb and postgres refuse to run as root. When run as root, every server command runs as
// the `postgres` OS user (runuser), and the cluster's directory is owned by that user. If that
// user cannot reach the state directory (a 0700 one, or one under /root), the cluster's directory
// is /var/tmp/quick-pg-XXXXXX instead (mkdtemp again); cluster-location records which.
//
// The port never moves: a start finds it taken by another process and fails with an error
// naming it. A stop is a fast shutdown (clients are disconnected), so it does not wait for them.
//
// Thread safety: none needed; one instance per command invocation.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace quick::local_postgres {

// $QUICK_STATE_DIR, or ./.quick in the current directory.
std::filesystem::path default_state_dir();

// A PostgreSQL server installed as Debian keeps them, side by side: <root>/<major>/bin.
struct ServerInstallation {
  std::string major;  // the directory's name, as a data directory's PG_VERSION spells it: "16", "9.6"
  std::filesystem::path bin;
};

// The installations under `root` with an initdb and a pg_ctl, oldest first.
std::vector<ServerInstallation> installed_servers(const std::filesystem::path& root = "/usr/lib/postgresql");

// The server binaries to run a cluster with. For an existing data directory, those of the major
// version its PG_VERSION names (`data_version`): a server refuses another major's data. For a
// cluster still to be created (`data_version` ""), the newest. Throws std::runtime_error when
// nothing is installed, or when the data directory's version is not, naming it and the installed
// ones (`data_dir`, the data directory, is for that message).
std::filesystem::path server_bin_dir(const std::vector<ServerInstallation>& installed, const std::string& data_version,
                                     const std::filesystem::path& data_dir);

class LocalCluster {
 public:
  // Throws std::runtime_error when the state directory exists but is unsafe: a symbolic link,
  // not a directory, another user's, or writable by its group or others; or when the cluster's
  // directory it records is one of these (or, under root, not the postgres user's).
  explicit LocalCluster(std::filesystem::path state_dir);

  // Creates the cluster on first use, starts it unless it runs, makes sure the database `quick`
  // exists (whether or not the server was running), and returns its connection string. Idempotent. Throws when the
  // cluster's port is taken by another process, and for a cluster an older quick made with trust authentication.
  std::string start();

  // Stops the server if it runs (fast shutdown: connected clients are disconnected; immediate if
  // that does not finish in time). Returns whether it was running. Idempotent.
  bool stop();

  bool is_running() const;
  bool exists() const;

  // Connection string for `dbname` on this cluster (whether or not it runs), keyword/value form:
  // host=127.0.0.1 port=N user=postgres dbname=... password='' passfile=<state dir>/pgpass.
  std::string connection_string(const std::string& dbname = "quick") const;

  const std::filesystem::path& state_dir() const { return state_dir_; }
  const std::filesystem::path& data_dir() const { return data_dir_; }
  const std::filesystem::path& log_file() const { return log_file_; }
  std::filesystem::path password_file() const { return state_dir_ / "pgpass"; }
  int port() const { return port_; }

 private:
  void load();  // reads the state directory's files
  // The data directory's PG_VERSION ("" while there is none), and the server binaries for it.
  std::string data_version() const;
  std::filesystem::path bin_dir() const;
  void create(const std::filesystem::path& bin);
  void launch(const std::filesystem::path& bin);  // pg_ctl start; throws when the port is taken
  void ensure_application_database();             // creates the database `quick` unless it exists
  void set_cluster_root(const std::filesystem::path& root);

  std::filesystem::path state_dir_;
  std::filesystem::path cluster_root_;  // owns data/ and postgres.log; empty until created
  std::filesystem::path data_dir_;
  std::filesystem::path log_file_;
  int port_ = 0;
  bool legacy_ = false;  // made by an older quick: trust authentication, no password file
};

}  // namespace quick::local_postgres
