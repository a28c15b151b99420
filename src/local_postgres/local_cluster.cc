#include "local_postgres/local_cluster.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <functional>
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

// Commands that touch the data directory run as the server user when we are root.
std::vector<std::string> as_server_user(std::vector<std::string> argv) {
  if (!running_as_root()) return argv;
  argv.insert(argv.begin(), {"runuser", "-u", kServerUser, "--"});
  return argv;
}

// The newest PostgreSQL server binaries: Debian keeps them in /usr/lib/postgresql/<major>/bin.
fs::path server_bin_dir() {
  std::vector<std::pair<int, fs::path>> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/usr/lib/postgresql", ec)) {
    const fs::path bin = entry.path() / "bin";
    if (fs::exists(bin / "initdb") && fs::exists(bin / "pg_ctl")) {
      found.emplace_back(std::atoi(entry.path().filename().c_str()), bin);
    }
  }
  if (found.empty()) {
    throw std::runtime_error(
        "no PostgreSQL server found under /usr/lib/postgresql: install it (apt-get install "
        "postgresql), or set QUICK_DATABASE_URL to use an existing server");
  }
  std::sort(found.begin(), found.end());
  return found.back().second;
}

int free_local_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
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

bool port_is_free(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  const bool free = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  ::close(fd);
  return free;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

void write_file(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text << '\n';
  if (!out) throw std::runtime_error("could not write " + path.string());
}

void give_to_server_user(const fs::path& path) {
  if (!running_as_root()) return;
  const passwd* user = ::getpwnam(kServerUser);
  if (user == nullptr) {
    throw std::runtime_error(std::string("running as root, but there is no '") + kServerUser +
                             "' OS user to run PostgreSQL: install the postgresql package");
  }
  if (::chown(path.c_str(), user->pw_uid, user->pw_gid) != 0) {
    throw std::runtime_error("could not give " + path.string() + " to the postgres user");
  }
}

// Can the server user create and use files in `dir`? (Only matters when we are root.)
bool server_user_can_use(const fs::path& dir) {
  if (!running_as_root()) return true;
  process::ProcessOptions probe;
  probe.argv = {"runuser", "-u", kServerUser, "--", "test", "-x", dir.string()};
  return process::run_process(probe).succeeded();
}

}  // namespace

fs::path default_state_dir() {
  if (const char* dir = std::getenv("QUICK_STATE_DIR"); dir != nullptr && *dir != '\0') return dir;
  return fs::current_path() / ".quick";
}

LocalCluster::LocalCluster(fs::path state_dir) : state_dir_(fs::absolute(std::move(state_dir))) {
  const fs::path location_file = state_dir_ / "cluster-location";
  if (fs::exists(location_file)) {
    cluster_root_ = read_file(location_file);
  } else {
    cluster_root_ = state_dir_ / "postgres";
  }
  data_dir_ = cluster_root_ / "data";
  log_file_ = cluster_root_ / "postgres.log";
  if (fs::exists(cluster_root_ / "port")) port_ = std::atoi(read_file(cluster_root_ / "port").c_str());
}

bool LocalCluster::exists() const { return fs::exists(data_dir_ / "PG_VERSION"); }

bool LocalCluster::is_running() const {
  if (!exists()) return false;
  process::ProcessOptions status;
  status.argv = as_server_user({(server_bin_dir() / "pg_ctl").string(), "status", "-D", data_dir_.string()});
  return process::run_process(status).succeeded();
}

std::string LocalCluster::connection_string(const std::string& dbname) const {
  return "host=127.0.0.1 port=" + std::to_string(port_) + " user=postgres dbname=" + dbname;
}

std::string LocalCluster::start() {
  const fs::path bin = server_bin_dir();
  if (!exists()) {
    fs::create_directories(state_dir_);
    if (running_as_root() && !server_user_can_use(state_dir_)) {
      // e.g. a checkout under /root: the postgres user cannot traverse it.
      const auto hash = std::hash<std::string>{}(state_dir_.string()) % 100000000ULL;
      cluster_root_ = fs::path("/var/tmp") / ("quick-pg-" + std::to_string(hash));
      logger()->info("the postgres OS user cannot reach {}; keeping the local cluster in {}", state_dir_.string(),
                     cluster_root_.string());
      write_file(state_dir_ / "cluster-location", cluster_root_.string());
      data_dir_ = cluster_root_ / "data";
      log_file_ = cluster_root_ / "postgres.log";
    }
    fs::create_directories(cluster_root_);
    fs::permissions(cluster_root_, fs::perms::owner_all);
    give_to_server_user(cluster_root_);
    logger()->info("creating a local PostgreSQL cluster in {}", data_dir_.string());
    process::run_checked(
        as_server_user({(bin / "initdb").string(), "-D", data_dir_.string(), "--auth=trust", "--username=postgres",
                        "--encoding=UTF8", "--locale=C.UTF-8", "--no-instructions"}),
        std::chrono::minutes(3));
  }
  if (is_running()) return connection_string();

  if (port_ == 0 || !port_is_free(port_)) port_ = free_local_port();
  write_file(cluster_root_ / "port", std::to_string(port_));
  const std::string server_options = "-c listen_addresses=127.0.0.1 -p " + std::to_string(port_) +
                                     " -k \"\"" +  // TCP only: socket paths have a length limit
                                     " -c max_connections=200";
  logger()->info("starting the local PostgreSQL cluster on 127.0.0.1:{} (log: {})", port_, log_file_.string());
  process::run_checked(as_server_user({(bin / "pg_ctl").string(), "start", "-D", data_dir_.string(), "-l",
                                       log_file_.string(), "-w", "-t", "60", "-o", server_options}),
                       std::chrono::seconds(90));

  // The application database. Retry briefly: the server may still be finishing recovery.
  for (int attempt = 0;; ++attempt) {
    try {
      pqxx::connection admin(connection_string("postgres"));
      pqxx::nontransaction session(admin);
      if (session.exec("SELECT 1 FROM pg_database WHERE datname = 'quick'").empty()) {
        session.exec("CREATE DATABASE quick");
      }
      break;
    } catch (const pqxx::broken_connection&) {
      if (attempt >= 50) throw;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  return connection_string();
}

bool LocalCluster::stop() {
  if (!is_running()) return false;
  process::run_checked(as_server_user({(server_bin_dir() / "pg_ctl").string(), "stop", "-D", data_dir_.string(), "-m",
                                       "fast", "-w", "-t", "60"}),
                       std::chrono::seconds(90));
  return true;
}

}  // namespace quick::local_postgres
