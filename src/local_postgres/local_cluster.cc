#include "local_postgres/local_cluster.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <thread>

#include <pqxx/pqxx>
#include <spdlog/spdlog.h>

#include "util/logging.h"

#include "process/process.h"

namespace fs = std::filesystem;

namespace quick::local_postgres {
namespace {

std::shared_ptr<spdlog::logger> logger() { return util::component_logger("quick.local_postgres"); }

constexpr const char* kServerUser = "postgres";  // the OS user that runs the server under root

bool running_as_root() { return ::geteuid() == 0; }

std::string system_error(const std::string& what, const fs::path& path, int error) {
  return what + " " + path.string() + ": " + std::strerror(error);
}

const passwd& server_user() {
  const passwd* user = ::getpwnam(kServerUser);
  if (user == nullptr) {
    throw std::runtime_error(std::string("running as root, but there is no '") + kServerUser +
                             "' OS user to run PostgreSQL: install the postgresql package");
  }
  return *user;
}

// Who must own the cluster's directory: the server user under root, else the tool's user.
uid_t cluster_owner() { return running_as_root() ? server_user().pw_uid : ::geteuid(); }

// Commands that touch the data directory run as the server user when we are root.
std::vector<std::string> as_server_user(std::vector<std::string> argv) {
  if (!running_as_root()) return argv;
  argv.insert(argv.begin(), {"runuser", "-u", kServerUser, "--"});
  return argv;
}

int free_local_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("socket() failed while looking for a free port");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof address;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    ::close(fd);
    throw std::runtime_error("could not find a free local port");
  }
  ::close(fd);
  return ntohs(address.sin_port);
}

// Could the server listen on 127.0.0.1:port? Binds as the server does, with SO_REUSEADDR: the
// connections a stopped server closed leave the port in TIME_WAIT, which does not keep the
// server from listening again, and must not make the port look taken.
bool port_is_free(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  const bool free = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 && ::listen(fd, 1) == 0;
  ::close(fd);
  return free;
}

// `path` absolute, without a trailing slash (lstat follows a symbolic link named "link/").
fs::path normalized(const fs::path& path) {
  fs::path result = fs::absolute(path).lexically_normal();
  while (!result.has_filename() && result != result.root_path()) result = result.parent_path();
  return result;
}

// Refuses `path` unless it is a directory (not a symbolic link), owned by `owner`, and writable
// by nobody else; `private_to_owner` refuses any access by group or others.
void check_directory(const fs::path& path, const std::string& what, uid_t owner, bool private_to_owner) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) throw std::runtime_error(system_error("cannot inspect " + what, path, errno));
  const std::string refusing = "refusing " + what + " " + path.string() + ": ";
  if (S_ISLNK(info.st_mode)) throw std::runtime_error(refusing + "it is a symbolic link");
  if (!S_ISDIR(info.st_mode)) throw std::runtime_error(refusing + "it is not a directory");
  if (info.st_uid != owner) {
    throw std::runtime_error(refusing + "it is owned by uid " + std::to_string(info.st_uid) + ", not by uid " +
                             std::to_string(owner) + (owner == ::geteuid() ? " (the user running quick)" : ""));
  }
  if (private_to_owner && (info.st_mode & 077) != 0) {
    throw std::runtime_error(refusing + "its group or others may use it (it must be 0700)");
  }
  if ((info.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    throw std::runtime_error(refusing + "it is writable by its group or by others (chmod go-w it)");
  }
}

void check_state_dir(const fs::path& path) { check_directory(path, "the state directory", ::geteuid(), false); }

// Creates the state directory (0700) unless it exists, then checks it. Never follows a symbolic
// link in its place.
void ensure_state_dir(const fs::path& path) {
  if (::mkdir(path.c_str(), 0700) != 0) {
    if (errno == ENOENT) {
      fs::create_directories(path.parent_path());
      if (::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) {
        throw std::runtime_error(system_error("could not create the state directory", path, errno));
      }
    } else if (errno != EEXIST) {
      throw std::runtime_error(system_error("could not create the state directory", path, errno));
    }
  }
  check_state_dir(path);
}

// The contents of a file of the state directory, without trailing blanks; nullopt when missing.
// Never follows a symbolic link.
std::optional<std::string> read_state_file(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::nullopt;
    throw std::runtime_error(system_error("could not read", path, errno));
  }
  std::string text;
  char buffer[4096];
  for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) != 0;) {
    if (n < 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      ::close(fd);
      throw std::runtime_error(system_error("could not read", path, error));
    }
    text.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

// Writes a new file (0600) in place of any old one; never follows a symbolic link. Under root,
// `for_server_user` gives it to the server user.
void write_private_file(const fs::path& path, const std::string& text, bool for_server_user = false) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    throw std::runtime_error(system_error("could not replace", path, errno));
  }
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) throw std::runtime_error(system_error("could not create", path, errno));
  bool ok = true;
  if (for_server_user && running_as_root()) ok = ::fchown(fd, server_user().pw_uid, server_user().pw_gid) == 0;
  for (std::size_t written = 0; ok && written < text.size();) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) written += static_cast<std::size_t>(n);
  }
  const int error = errno;
  if (::close(fd) != 0) ok = false;
  if (!ok) throw std::runtime_error(system_error("could not write", path, error));
}

void give_to_server_user(const fs::path& path) {
  if (!running_as_root()) return;
  if (::lchown(path.c_str(), server_user().pw_uid, server_user().pw_gid) != 0) {
    throw std::runtime_error(system_error("could not give to the postgres user:", path, errno));
  }
}

// Can the server user reach `dir` (traverse it and its parents)? Only asked under root.
bool server_user_can_use(const fs::path& dir) {
  process::ProcessOptions probe;
  probe.argv = {"runuser", "-u", kServerUser, "--", "test", "-x", dir.string()};
  return process::run_process(probe).succeeded();
}

// 192 random bits, as hex: nothing in it needs quoting in a password file or in SQL.
std::string random_password() {
  unsigned char bytes[24];
  for (std::size_t filled = 0; filled < sizeof bytes;) {
    const ssize_t n = ::getrandom(bytes + filled, sizeof bytes - filled, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::string("getrandom failed: ") + std::strerror(errno));
    }
    filled += static_cast<std::size_t>(n);
  }
  static const char* const kHex = "0123456789abcdef";
  std::string password;
  for (unsigned char byte : bytes) {
    password += kHex[byte >> 4];
    password += kHex[byte & 15];
  }
  return password;
}

// Appends the cluster's own settings to its postgresql.conf (the server user's file, in its
// directory: opened without following a symbolic link).
void append_settings(const fs::path& config, int port) {
  const std::string settings =
      "\n# The development cluster of the quick tool (src/local_postgres/local_cluster.cc): TCP on\n"
      "# 127.0.0.1 only, on the port chosen when the cluster was created, no Unix socket;\n"
      "# scram-sha-256 for every login (pg_hba.conf).\n"
      "listen_addresses = '127.0.0.1'\n"
      "port = " +
      std::to_string(port) +
      "\n"
      "unix_socket_directories = ''\n"
      "max_connections = 200\n"
      "# Two-phase commit, for applications and tests that prepare transactions.\n"
      "max_prepared_transactions = 20\n"
      "password_encryption = 'scram-sha-256'\n";
  const int fd = ::open(config.c_str(), O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
  struct stat info {};
  if (fd < 0 || ::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode) ||
      ::write(fd, settings.data(), settings.size()) != static_cast<ssize_t>(settings.size())) {
    const int error = errno;
    if (fd >= 0) ::close(fd);
    throw std::runtime_error(system_error("could not write", config, error));
  }
  ::close(fd);
}

// A libpq keyword value, quoted when it must be.
std::string conninfo_value(const std::string& value) {
  if (!value.empty() && value.find_first_of(" \t\n'\\") == std::string::npos) return value;
  std::string quoted = "'";
  for (char c : value) {
    if (c == '\'' || c == '\\') quoted += '\\';
    quoted += c;
  }
  return quoted + "'";
}

// Held while a command starts or stops the cluster: two commands at once never create two
// clusters for one state directory.
class StateLock {
 public:
  explicit StateLock(const fs::path& state_dir) {
    const fs::path path = state_dir / "lock";
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd_ < 0) throw std::runtime_error(system_error("could not open", path, errno));
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno != EINTR) {
        const int error = errno;
        ::close(fd_);
        throw std::runtime_error(system_error("could not lock", path, error));
      }
    }
  }
  ~StateLock() { ::close(fd_); }
  StateLock(const StateLock&) = delete;
  StateLock& operator=(const StateLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace

std::vector<ServerInstallation> installed_servers(const fs::path& root) {
  // Oldest first, by number: 9.6 before 10.
  const auto version = [](const std::string& major) {
    const auto dot = major.find('.');
    return std::make_pair(std::atoi(major.c_str()), dot == std::string::npos ? 0 : std::atoi(major.c_str() + dot + 1));
  };
  std::vector<ServerInstallation> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    const fs::path bin = entry.path() / "bin";
    if (fs::exists(bin / "initdb") && fs::exists(bin / "pg_ctl"))
      found.push_back({entry.path().filename().string(), bin});
  }
  std::sort(found.begin(), found.end(), [&](const ServerInstallation& a, const ServerInstallation& b) {
    return std::make_pair(version(a.major), a.major) < std::make_pair(version(b.major), b.major);
  });
  return found;
}

fs::path server_bin_dir(const std::vector<ServerInstallation>& installed, const std::string& data_version,
                        const fs::path& data_dir) {
  if (installed.empty()) {
    throw std::runtime_error(
        "no PostgreSQL server found under /usr/lib/postgresql: install it (apt-get install "
        "postgresql), or set QUICK_DATABASE_URL to use an existing server");
  }
  if (data_version.empty()) return installed.back().bin;
  std::string majors;
  for (const auto& installation : installed) {
    if (installation.major == data_version) return installation.bin;
    majors += (majors.empty() ? "" : ", ") + installation.major;
  }
  throw std::runtime_error("the local cluster's data directory " + data_dir.string() + " was made by PostgreSQL " +
                           data_version + " (its PG_VERSION), whose server is not installed (installed: " + majors +
                           "), and a server of another major version refuses its data: install postgresql-" +
                           data_version + " beside the others, or upgrade the data directory with pg_upgrade");
}

fs::path default_state_dir() {
  if (const char* dir = std::getenv("QUICK_STATE_DIR"); dir != nullptr && *dir != '\0') return dir;
  return fs::current_path() / ".quick";
}

LocalCluster::LocalCluster(fs::path state_dir) : state_dir_(normalized(state_dir)) {
  struct stat info {};
  if (::lstat(state_dir_.c_str(), &info) == 0) {
    check_state_dir(state_dir_);
    load();
  } else if (errno != ENOENT) {
    throw std::runtime_error(system_error("cannot inspect the state directory", state_dir_, errno));
  }
}

void LocalCluster::set_cluster_root(const fs::path& root) {
  cluster_root_ = root;
  data_dir_ = root.empty() ? fs::path() : root / "data";
  log_file_ = root.empty() ? fs::path() : root / "postgres.log";
}

void LocalCluster::load() {
  set_cluster_root({});
  port_ = 0;
  legacy_ = false;
  if (const auto location = read_state_file(state_dir_ / "cluster-location")) {
    set_cluster_root(*location);
  } else if (fs::exists(fs::symlink_status(state_dir_ / "postgres"))) {
    set_cluster_root(state_dir_ / "postgres");  // the layout of an older quick
    legacy_ = true;
  }
  if (!cluster_root_.empty() && fs::exists(fs::symlink_status(cluster_root_))) {
    check_directory(cluster_root_, "the cluster's directory", cluster_owner(), true);
  }
  if (const auto port = read_state_file(state_dir_ / "port")) {
    port_ = std::atoi(port->c_str());
  } else if (!cluster_root_.empty() && fs::exists(cluster_root_ / "port")) {
    port_ = std::atoi(read_state_file(cluster_root_ / "port")->c_str());  // an older quick's
  }
  if (exists() && !fs::exists(fs::symlink_status(password_file()))) legacy_ = true;
}

bool LocalCluster::exists() const { return !data_dir_.empty() && fs::exists(data_dir_ / "PG_VERSION"); }

std::string LocalCluster::data_version() const {
  if (!exists()) return "";
  return read_state_file(data_dir_ / "PG_VERSION").value_or("");
}

fs::path LocalCluster::bin_dir() const { return server_bin_dir(installed_servers(), data_version(), data_dir_); }

bool LocalCluster::is_running() const {
  if (!exists()) return false;
  process::ProcessOptions status;
  status.argv = as_server_user({(bin_dir() / "pg_ctl").string(), "status", "-D", data_dir_.string()});
  return process::run_process(status).succeeded();
}

std::string LocalCluster::connection_string(const std::string& dbname) const {
  // password='' (empty: no secret) keeps libpq from taking $PGPASSWORD, which it prefers to the
  // password file, when the caller's environment has one for some other server.
  return "host=127.0.0.1 port=" + std::to_string(port_) + " user=postgres dbname=" + conninfo_value(dbname) +
         " password='' passfile=" + conninfo_value(password_file().string());
}

void LocalCluster::create(const fs::path& bin) {
  // A fresh directory with a name nobody can predict: mkdtemp fails rather than reuse anything.
  fs::path pattern = state_dir_ / "postgres-XXXXXX";
  if (running_as_root() && !server_user_can_use(state_dir_)) {
    // e.g. a 0700 state directory, or one under /root: the postgres user cannot traverse it.
    pattern = "/var/tmp/quick-pg-XXXXXX";
    logger()->info("the postgres OS user cannot reach {}; keeping the cluster's directory in /var/tmp",
                   state_dir_.string());
  }
  std::string root = pattern.string();
  if (::mkdtemp(root.data()) == nullptr) throw std::runtime_error(system_error("could not create", pattern, errno));
  const fs::path pwfile = fs::path(root) / "initdb-password";
  try {
    give_to_server_user(root);
    set_cluster_root(root);
    // A state directory whose cluster's directory vanished (/var/tmp is cleaned) keeps its port.
    if (port_ == 0) port_ = free_local_port();
    const std::string password = random_password();
    write_private_file(password_file(), "127.0.0.1:" + std::to_string(port_) + ":*:postgres:" + password + "\n");
    write_private_file(pwfile, password + "\n", true);  // initdb reads it as the server user
    logger()->info("creating a local PostgreSQL cluster in {}", data_dir_.string());
    process::run_checked(
        as_server_user({(bin / "initdb").string(), "-D", data_dir_.string(), "--username=postgres",
                        "--pwfile=" + pwfile.string(), "--auth-host=scram-sha-256", "--auth-local=peer",
                        "--encoding=UTF8", "--locale=C.UTF-8", "--no-instructions"}),
        std::chrono::minutes(3));
    fs::remove(pwfile);
    append_settings(data_dir_ / "postgresql.conf", port_);
    // Recorded last: a creation that failed leaves nothing that names its directory.
    write_private_file(state_dir_ / "port", std::to_string(port_) + "\n");
    write_private_file(state_dir_ / "cluster-location", root + "\n");
  } catch (...) {
    std::error_code ignored;
    fs::remove_all(root, ignored);
    fs::remove(password_file(), ignored);
    set_cluster_root({});
    throw;
  }
}

std::string LocalCluster::start() {
  const auto installed = installed_servers();
  const fs::path newest = server_bin_dir(installed, "", data_dir_);  // throws when none is installed
  ensure_state_dir(state_dir_);
  StateLock lock(state_dir_);
  load();  // again, under the lock
  if (legacy_) {
    throw std::runtime_error("the local cluster in " + state_dir_.string() +
                             " was made by an older quick, with trust authentication: stop it (quick db stop "
                             "--state-dir " +
                             state_dir_.string() + ") and delete " + state_dir_.string() +
                             (cluster_root_.parent_path() == state_dir_ ? "" : " and " + cluster_root_.string()) +
                             "; the next start creates a new one");
  }
  if (!exists()) create(newest);
  if (!is_running()) launch(server_bin_dir(installed, data_version(), data_dir_));
  // On every start, the server running or not: a start that died between the two left a running
  // cluster without its database.
  ensure_application_database();
  return connection_string();
}

void LocalCluster::launch(const fs::path& bin) {
  const auto port_taken = [&] {
    return std::runtime_error("port " + std::to_string(port_) + " of the local cluster in " + state_dir_.string() +
                              " is in use by another process on 127.0.0.1; the cluster keeps the port it was "
                              "created with (connection strings name it): stop that process, or delete " +
                              state_dir_.string() + " to create a new cluster on a free port");
  };
  if (!port_is_free(port_)) throw port_taken();
  // The port and addresses on the command line too, whatever postgresql.conf says now.
  const std::string server_options = "-p " + std::to_string(port_) +
                                     " -c listen_addresses=127.0.0.1 -k \"\"";  // TCP only
  logger()->info("starting the local PostgreSQL cluster on 127.0.0.1:{} (log: {})", port_, log_file_.string());
  try {
    process::run_checked(as_server_user({(bin / "pg_ctl").string(), "start", "-D", data_dir_.string(), "-l",
                                         log_file_.string(), "-w", "-t", "60", "-o", server_options}),
                         std::chrono::seconds(90));
  } catch (const std::runtime_error& error) {
    if (!is_running() && !port_is_free(port_)) throw port_taken();  // taken since the check
    throw std::runtime_error(std::string(error.what()) + " (the server's log: " + log_file_.string() + ")");
  }
}

void LocalCluster::ensure_application_database() {
  // Retry briefly: a server just started may still be finishing recovery.
  for (int attempt = 0;; ++attempt) {
    try {
      pqxx::connection admin(connection_string("postgres"));
      pqxx::nontransaction session(admin);
      if (session.exec("SELECT 1 FROM pg_database WHERE datname = 'quick'").empty()) {
        session.exec("CREATE DATABASE quick");
      }
      return;
    } catch (const pqxx::broken_connection&) {
      if (attempt >= 50) throw;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
}

bool LocalCluster::stop() {
  if (!fs::is_directory(fs::symlink_status(state_dir_))) return false;
  StateLock lock(state_dir_);
  load();
  if (!is_running()) return false;
  const std::string pg_ctl = (bin_dir() / "pg_ctl").string();
  // Fast: connected clients are disconnected instead of waited for.
  process::ProcessOptions fast;
  fast.argv = as_server_user({pg_ctl, "stop", "-D", data_dir_.string(), "-m", "fast", "-w", "-t", "30"});
  fast.timeout = std::chrono::seconds(45);
  const auto result = process::run_process(fast);
  if (result.succeeded()) return true;
  logger()->warn("the fast shutdown of the local cluster did not finish ({}); shutting it down immediately",
                 result.describe());
  process::run_checked(as_server_user({pg_ctl, "stop", "-D", data_dir_.string(), "-m", "immediate", "-w", "-t", "30"}),
                       std::chrono::seconds(45));
  return true;
}

}  // namespace quick::local_postgres
