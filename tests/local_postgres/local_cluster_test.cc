// The development cluster `quick db start` creates when no database is configured
// (src/local_postgres/, docs/security.md#the-development-cluster): only the user who started it
// can log in (scram-sha-256 with a generated password in a 0600 file that the printed connection
// string names; no trust), a state directory that is a symbolic link, another user's or writable
// by others is refused, and the port stays the one chosen at creation across restarts (a stop with
// clients connected included); a port taken by something else is an error naming the port; and
// every start, the server running or not, makes sure the database `quick` exists.
//
// Each test starts real clusters through the `quick` binary, in state directories of its own
// under a temporary directory, and stops them afterwards. None uses QUICK_TEST_DATABASE_URL.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <pqxx/pqxx>

#include "support/eventually.h"
#include "support/processes.h"

namespace quick::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

struct QuickRun {
  std::optional<int> exit_code;
  std::string out, err;
};

std::string trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

// The value of `keyword=value` in a keyword/value connection string ("" when absent).
std::string conninfo_value(const std::string& conninfo, const std::string& keyword) {
  std::smatch match;
  const std::regex pattern("(^| )" + keyword + "=('[^']*'|[^ ]*)");
  if (!std::regex_search(conninfo, match, pattern)) return "";
  std::string value = match[2];
  if (!value.empty() && value.front() == '\'') value = value.substr(1, value.size() - 2);
  return value;
}

struct stat lstat_of(const fs::path& path) {
  struct stat info {};
  EXPECT_EQ(::lstat(path.c_str(), &info), 0) << path;
  return info;
}

// The connection refused, and libpq's reason ("" when the connection succeeded).
std::string refusal(const std::string& conninfo) {
  try {
    pqxx::connection conn(conninfo);
    return "";
  } catch (const pqxx::broken_connection& error) {
    return error.what();
  }
}

class LocalClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // As scripts/test does: when the tests run as root, the postgres OS user must reach state
    // directories made in here.
    dir_.open_to_server_user();
  }
  void TearDown() override {
    for (const auto& state_dir : started_) {
      quick({"db", "stop", "--state-dir", state_dir.string()});
      // Under root, a cluster the postgres user could not keep in the state directory lives in
      // /var/tmp: remove it too.
      const std::string location = trimmed(read_text_file(state_dir / "cluster-location"));
      std::error_code ignored;
      if (!location.empty() && location.rfind(dir_.path().string(), 0) != 0) fs::remove_all(location, ignored);
    }
  }

  QuickRun quick(const std::vector<std::string>& arguments, const std::vector<std::string>& environment = {}) {
    const std::string name = "run-" + std::to_string(runs_++);
    std::vector<std::string> argv = {quick_binary()};
    argv.insert(argv.end(), arguments.begin(), arguments.end());
    ChildProcess child(argv, environment, dir_ / (name + ".out"), dir_ / (name + ".err"));
    if (!child.wait_for(seconds(180))) ADD_FAILURE() << "quick did not end: " << child.err();
    return QuickRun{child.exit_code(), child.out(), child.err()};
  }

  // `quick db start --state-dir state_dir`, which must succeed; its connection string.
  std::string start(const fs::path& state_dir, QuickRun* run = nullptr) {
    started_.push_back(state_dir);
    QuickRun result = quick({"db", "start", "--state-dir", state_dir.string()});
    EXPECT_EQ(result.exit_code, std::optional<int>(0)) << result.err;
    if (run != nullptr) *run = result;
    return trimmed(result.out);
  }

  // A state directory made as scripts/test makes it: existing, 0755.
  fs::path reachable_state_dir(const std::string& name) {
    const fs::path path = dir_ / name;
    fs::create_directory(path);
    fs::permissions(path, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                              fs::perms::others_read | fs::perms::others_exec);
    return path;
  }

  static fs::path cluster_root(const fs::path& state_dir) {
    return trimmed(read_text_file(state_dir / "cluster-location"));
  }

  TempDir dir_;
  std::vector<fs::path> started_;
  int runs_ = 0;
};

TEST_F(LocalClusterTest, OnlyTheUserWhoStartedItCanLogInAndThePasswordStaysInItsFile) {
  ASSERT_FALSE(quick_binary().empty());
  const fs::path state_dir = dir_ / "state";  // quick creates it
  QuickRun started;
  const std::string url = start(state_dir, &started);
  ASSERT_FALSE(url.empty());

  // The string carries no secret: an empty password, and the password file it names.
  EXPECT_THAT(url, HasSubstr(" password='' "));
  const fs::path passfile = conninfo_value(url, "passfile");
  EXPECT_EQ(passfile, state_dir / "pgpass");
  const std::string port = conninfo_value(url, "port");
  ASSERT_FALSE(port.empty()) << url;
  {
    pqxx::connection conn(url);
    pqxx::nontransaction session(conn);
    EXPECT_EQ(session.exec("SELECT current_user").at(0).at(0).as<std::string>(), "postgres");
  }
  {
    // A $PGPASSWORD meant for another server (libpq prefers it to a password file) is ignored.
    const char* inherited = std::getenv("PGPASSWORD");
    const std::string saved = inherited != nullptr ? inherited : "";
    ::setenv("PGPASSWORD", "another-servers-password", 1);
    EXPECT_EQ(refusal(url), "");
    if (inherited != nullptr) {
      ::setenv("PGPASSWORD", saved.c_str(), 1);
    } else {
      ::unsetenv("PGPASSWORD");
    }
  }

  // No trust: without the password, or with a wrong one, `postgres` is refused.
  const std::string bare = "host=127.0.0.1 port=" + port + " user=postgres dbname=quick connect_timeout=10";
  EXPECT_THAT(refusal(bare + " passfile=/nonexistent"), HasSubstr("no password supplied"));
  EXPECT_THAT(refusal(bare + " passfile=/nonexistent password=wrong"), HasSubstr("password authentication failed"));
  for (const auto& line : read_lines(cluster_root(state_dir) / "data" / "pg_hba.conf")) {
    if (line[0] != '#') {
      EXPECT_THAT(line, Not(HasSubstr("trust")));
    }
  }

  // Other logins authenticate with their own passwords, as the test suite's do.
  {
    pqxx::connection admin(url);
    pqxx::nontransaction session(admin);
    session.exec("CREATE ROLE local_cluster_test_login LOGIN PASSWORD 'its-own-secret'");
  }
  EXPECT_EQ(refusal(bare + " passfile=/nonexistent user=local_cluster_test_login password=its-own-secret"), "");
  EXPECT_THAT(refusal(bare + " passfile=/nonexistent user=local_cluster_test_login password=other"),
              HasSubstr("password authentication failed"));

  // The state directory, the password file and the cluster's directory are their owners' alone.
  const struct stat state_info = lstat_of(state_dir);
  EXPECT_TRUE(S_ISDIR(state_info.st_mode));
  EXPECT_EQ(state_info.st_mode & 07777, 0700u);
  EXPECT_EQ(state_info.st_uid, ::geteuid());
  const struct stat passfile_info = lstat_of(passfile);
  EXPECT_TRUE(S_ISREG(passfile_info.st_mode));
  EXPECT_EQ(passfile_info.st_mode & 07777, 0600u);
  EXPECT_EQ(passfile_info.st_uid, ::geteuid());
  const fs::path root = cluster_root(state_dir);
  const struct stat root_info = lstat_of(root);
  EXPECT_TRUE(S_ISDIR(root_info.st_mode)) << root << " (not a symbolic link)";
  EXPECT_EQ(root_info.st_mode & 07777, 0700u) << root;
  // A fresh name (mkdtemp), not one derived from the state directory.
  EXPECT_THAT(root.filename().string(), ::testing::MatchesRegex("(postgres|quick-pg)-[A-Za-z0-9]{6}"));

  // The password is printed nowhere: not by start, status or url, not in the server's log.
  const std::string pgpass_line = trimmed(read_text_file(passfile));
  const std::string password = pgpass_line.substr(pgpass_line.rfind(':') + 1);
  ASSERT_GE(password.size(), 32u) << "a generated password of at least 128 bits";
  const QuickRun status = quick({"db", "status", "--state-dir", state_dir.string()});
  EXPECT_EQ(status.exit_code, std::optional<int>(0)) << status.err;
  EXPECT_THAT(status.out, HasSubstr("running on port " + port));
  const QuickRun printed_url = quick({"db", "url", "--state-dir", state_dir.string()});
  EXPECT_EQ(trimmed(printed_url.out), url);
  for (const QuickRun& run : {started, status, printed_url}) {
    EXPECT_THAT(run.out + run.err, Not(HasSubstr(password)));
  }
  EXPECT_THAT(read_text_file(root / "postgres.log"), Not(HasSubstr(password)));
}

// Before a cluster is created there is no data directory to name: status names the state
// directory instead (it printed "not created ()").
TEST_F(LocalClusterTest, StatusOfAClusterNotCreatedNamesTheStateDirectory) {
  ASSERT_FALSE(quick_binary().empty());
  const fs::path state_dir = dir_ / "never-started";
  const QuickRun status = quick({"db", "status", "--state-dir", state_dir.string()});
  EXPECT_EQ(status.exit_code, std::optional<int>(3)) << status.out << status.err;
  EXPECT_THAT(status.out, HasSubstr("not created (state directory " + state_dir.string() + ")"));
  EXPECT_THAT(status.out, Not(HasSubstr("()")));
}

TEST_F(LocalClusterTest, AStateDirectoryThatIsASymbolicLinkIsRefused) {
  ASSERT_FALSE(quick_binary().empty());
  const fs::path target = reachable_state_dir("target");
  const fs::path link = dir_ / "link";
  fs::create_directory_symlink(target, link);
  for (const std::string& state_dir : {link.string(), link.string() + "/"}) {
    const QuickRun run = quick({"db", "start", "--state-dir", state_dir});
    EXPECT_EQ(run.exit_code, std::optional<int>(1)) << state_dir << ": " << run.out << run.err;
    EXPECT_THAT(run.err, HasSubstr("symbolic link")) << state_dir;
  }
  // Also through $QUICK_STATE_DIR, and for the other commands.
  const QuickRun from_environment = quick({"db", "start"}, {"QUICK_STATE_DIR=" + link.string()});
  EXPECT_EQ(from_environment.exit_code, std::optional<int>(1)) << from_environment.out << from_environment.err;
  EXPECT_THAT(from_environment.err, HasSubstr("symbolic link"));
  const QuickRun status = quick({"db", "status", "--state-dir", link.string()});
  EXPECT_THAT(status.err, HasSubstr("symbolic link"));
  EXPECT_TRUE(fs::is_empty(target)) << "nothing was created through the link";
}

TEST_F(LocalClusterTest, AStateDirectoryOfAnotherUserOrWritableByOthersIsRefused) {
  ASSERT_FALSE(quick_binary().empty());
  fs::path foreign;
  if (::geteuid() == 0) {
    foreign = reachable_state_dir("foreign");
    ASSERT_EQ(::chown(foreign.c_str(), 65534, 65534), 0);  // nobody
  } else {
    foreign = "/usr";  // root's: refused before anything is written
  }
  const QuickRun run = quick({"db", "start", "--state-dir", foreign.string()});
  EXPECT_EQ(run.exit_code, std::optional<int>(1)) << run.out << run.err;
  EXPECT_THAT(run.err, HasSubstr("owned by"));
  if (::geteuid() == 0) {
    EXPECT_TRUE(fs::is_empty(foreign));
  }

  const fs::path shared = reachable_state_dir("shared");
  fs::permissions(shared, fs::perms::all);  // 0777
  const QuickRun shared_run = quick({"db", "start", "--state-dir", shared.string()});
  EXPECT_EQ(shared_run.exit_code, std::optional<int>(1)) << shared_run.out << shared_run.err;
  EXPECT_THAT(shared_run.err, HasSubstr("writable by"));
  EXPECT_TRUE(fs::is_empty(shared));
}

TEST_F(LocalClusterTest, AClusterDirectoryThatIsASymbolicLinkIsRefused) {
  ASSERT_FALSE(quick_binary().empty());
  const fs::path state_dir = reachable_state_dir("state");
  const fs::path elsewhere = reachable_state_dir("elsewhere");
  fs::create_directory_symlink(elsewhere, dir_ / "planted");
  write_text_file(state_dir / "cluster-location", (dir_ / "planted").string() + "\n");
  const QuickRun run = quick({"db", "start", "--state-dir", state_dir.string()});
  EXPECT_EQ(run.exit_code, std::optional<int>(1)) << run.out << run.err;
  EXPECT_THAT(run.err, HasSubstr("symbolic link"));
  EXPECT_TRUE(fs::is_empty(elsewhere));
}

TEST_F(LocalClusterTest, AClusterMadeByAnOlderQuickWithTrustIsRefusedAtStart) {
  ASSERT_FALSE(quick_binary().empty());
  // The layout an older quick left: <state dir>/postgres/data, no password file.
  const fs::path state_dir = reachable_state_dir("state");
  fs::create_directories(state_dir / "postgres" / "data");
  fs::permissions(state_dir / "postgres", fs::perms::owner_all);
  if (::geteuid() == 0) {
    const passwd* server = ::getpwnam("postgres");  // who owns a cluster's directory under root
    ASSERT_NE(server, nullptr);
    ASSERT_EQ(::chown((state_dir / "postgres").c_str(), server->pw_uid, server->pw_gid), 0);
  }
  write_text_file(state_dir / "postgres" / "data" / "PG_VERSION", "15\n");
  const QuickRun run = quick({"db", "start", "--state-dir", state_dir.string()});
  EXPECT_EQ(run.exit_code, std::optional<int>(1)) << run.out << run.err;
  EXPECT_THAT(run.err, HasSubstr("older quick, with trust authentication"));
  EXPECT_FALSE(fs::exists(state_dir / "pgpass"));
}

TEST_F(LocalClusterTest, ThePortStaysTheSameAcrossRestartsAndAStopWithClientsConnectedIsFast) {
  ASSERT_FALSE(quick_binary().empty());
  const fs::path state_dir = reachable_state_dir("state");
  const std::string url = start(state_dir);
  const std::string port = conninfo_value(url, "port");
  ASSERT_FALSE(port.empty()) << url;
  EXPECT_THAT(read_text_file(cluster_root(state_dir) / "data" / "postgresql.conf"), HasSubstr("\nport = " + port));

  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    // One client in an open transaction, one idle: the stop ends both and does not wait for them.
    pqxx::connection busy(url);
    pqxx::connection idle(url);
    pqxx::work txn(busy);
    txn.exec("SELECT 1");
    const auto stop_started = Clock::now();
    const QuickRun stop = quick({"db", "stop", "--state-dir", state_dir.string()});
    EXPECT_EQ(stop.exit_code, std::optional<int>(0)) << stop.err;
    EXPECT_THAT(stop.err, HasSubstr("stopped"));
    EXPECT_LT(seconds_since(stop_started), 15.0);
    EXPECT_ANY_THROW(txn.exec("SELECT 1")) << "the server ended the client's session";

    // The connections the server just closed leave its port in TIME_WAIT: the restart still
    // takes it.
    EXPECT_EQ(start(state_dir), url);
    pqxx::connection again(url);
    EXPECT_EQ(std::string(again.port()), port);
  }
}

// A start that died after the server started but before it created the database `quick` left a
// running cluster without it: every later start found the server running and handed out a URL to
// a missing database. Each start makes sure the database exists, running server or not.
TEST_F(LocalClusterTest, EveryStartMakesSureTheDatabaseQuickExists) {
  ASSERT_FALSE(quick_binary().empty());
  const fs::path state_dir = reachable_state_dir("state");
  const std::string url = start(state_dir);
  ASSERT_EQ(conninfo_value(url, "dbname"), "quick") << url;
  {
    pqxx::connection admin(std::regex_replace(url, std::regex("dbname=quick"), "dbname=postgres"));
    pqxx::nontransaction session(admin);
    session.exec("DROP DATABASE quick");
  }
  ASSERT_THAT(refusal(url), HasSubstr("does not exist"));

  EXPECT_EQ(start(state_dir), url) << "the server was running: started again, with its database";
  EXPECT_EQ(refusal(url), "");
  EXPECT_EQ(start(state_dir), url) << "and again, with nothing to do";
  EXPECT_EQ(refusal(url), "");
}

TEST_F(LocalClusterTest, APortTakenBySomethingElseIsAnErrorNamingItNotAMove) {
  ASSERT_FALSE(quick_binary().empty());
  const fs::path state_dir = reachable_state_dir("state");
  const std::string url = start(state_dir);
  const std::string port = conninfo_value(url, "port");
  ASSERT_FALSE(port.empty()) << url;
  ASSERT_EQ(quick({"db", "stop", "--state-dir", state_dir.string()}).exit_code, std::optional<int>(0));

  // Something else listens on the port now.
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(listener, 0);
  const int one = 1;
  ::setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(std::stoi(port)));
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(::listen(listener, 4), 0);

  const QuickRun taken = quick({"db", "start", "--state-dir", state_dir.string()});
  EXPECT_EQ(taken.exit_code, std::optional<int>(1)) << taken.out << taken.err;
  EXPECT_THAT(taken.err, HasSubstr("port " + port));
  EXPECT_THAT(taken.err, HasSubstr("in use"));
  EXPECT_EQ(trimmed(taken.out), "") << "no other port was chosen";

  ::close(listener);
  EXPECT_EQ(start(state_dir), url) << "once the port is free, the cluster starts on it again";
}

}  // namespace
}  // namespace quick::testing
