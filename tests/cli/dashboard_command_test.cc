// `quick dashboard`, end to end, as a subprocess: it serves the page and the API on --listen,
// read-only without a token, with actions for the token from QUICK_DASHBOARD_TOKEN or
// --admin-token-file; SIGTERM stops it promptly with exit 0; a bad --listen is refused.
#include <csignal>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include "quick/migrate.h"
#include "support/commands.h"
#include "support/eventually.h"
#include "support/processes.h"
#include "support/test_database.h"
#include "support/webdriver.h"

namespace quick::testing {
namespace {

using ::testing::HasSubstr;

class DashboardCommandTest : public DatabaseTest {
 protected:
  // Starts `quick dashboard` on a free port with `extra_arguments`; waits until it answers.
  std::unique_ptr<ChildProcess> start(const std::vector<std::string>& extra_arguments,
                                      const std::vector<std::string>& environment = {}) {
    const std::string quick = quick_binary();
    if (quick.empty()) return nullptr;
    port_ = free_tcp_port();
    std::vector<std::string> argv = {quick, "dashboard", "--database",
                                     url(), "--listen",  "127.0.0.1:" + std::to_string(port_)};
    argv.insert(argv.end(), extra_arguments.begin(), extra_arguments.end());
    auto process = std::make_unique<ChildProcess>(argv, environment, dir_ / "out", dir_ / "err");
    httplib::Client client("127.0.0.1", port_);
    const bool up = eventually(
        [&] {
          const auto response = client.Get("/api/overview");
          return response && response->status == 200;
        },
        seconds(15), milliseconds(20));
    EXPECT_TRUE(up) << process->err();
    return process;
  }
  int pause_status(const std::string& token) {
    httplib::Client client("127.0.0.1", port_);
    const auto response = client.Post("/api/tenants/pause", {{"Authorization", "Bearer " + token}},
                                      R"({"tenant": "cli-t"})", "application/json");
    return response ? response->status : -1;
  }
  // Sends SIGTERM and expects a prompt exit 0.
  static void stop(ChildProcess& process) {
    process.signal(SIGTERM);
    ASSERT_TRUE(process.wait_for(seconds(5))) << "quick dashboard did not stop within 5 s of SIGTERM";
    EXPECT_EQ(process.exit_code(), 0) << process.describe() << "\n" << process.err();
  }

  TempDir dir_;
  int port_ = 0;
};

TEST_F(DashboardCommandTest, ServesReadOnlyByDefaultAndStopsPromptlyOnSigterm) {
  auto dashboard = start({});
  ASSERT_TRUE(dashboard);
  httplib::Client client("127.0.0.1", port_);
  const auto page = client.Get("/");
  ASSERT_TRUE(page);
  EXPECT_THAT(page->body, HasSubstr("quick-pg dashboard"));
  EXPECT_EQ(pause_status("anything"), 403);
  stop(*dashboard);
  EXPECT_THAT(dashboard->err(), HasSubstr("read-only"));
}

TEST_F(DashboardCommandTest, TakesTheAdminTokenFromTheEnvironmentOrAFile) {
  auto from_environment = start({}, {"QUICK_DASHBOARD_TOKEN=env-token"});
  ASSERT_TRUE(from_environment);
  EXPECT_EQ(pause_status("wrong"), 401);
  EXPECT_EQ(pause_status("env-token"), 200);
  stop(*from_environment);

  write_text_file(dir_ / "token", "file-token\n");
  auto from_file = start({"--admin-token-file", (dir_ / "token").string()}, {"QUICK_DASHBOARD_TOKEN=env-token"});
  ASSERT_TRUE(from_file);
  EXPECT_EQ(pause_status("env-token"), 401);
  EXPECT_EQ(pause_status("file-token"), 200);
  stop(*from_file);
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.paused WHERE name = 'cli-t'"), 1);
}

TEST_F(DashboardCommandTest, RefusesAListenAddressWithoutAPort) {
  const std::string quick = quick_binary();
  ASSERT_FALSE(quick.empty());
  ChildProcess process({quick, "dashboard", "--database", url(), "--listen", "localhost"}, {}, dir_ / "out",
                       dir_ / "err");
  ASSERT_TRUE(process.wait_for(seconds(10)));
  EXPECT_EQ(process.exit_code(), 2);
  EXPECT_THAT(process.err(), HasSubstr("expected host:port"));
}

TEST_F(DashboardCommandTest, AnAddressItCannotListenOnIsRefusedBeforeTheLocalClusterIsCreated) {
  const std::string quick = quick_binary();
  ASSERT_FALSE(quick.empty());
  const auto state_dir = dir_.cluster_state_dir("state");  // where a local cluster would go
  // No --database and no QUICK_DATABASE_URL: the local cluster is the database.
  const auto result = run_command("env -u QUICK_DATABASE_URL timeout 120 " + shell_quote(quick) +
                                  " dashboard --listen 192.0.2.1:5 --state-dir " + shell_quote(state_dir.string()));
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_THAT(result.output, HasSubstr("cannot listen on 192.0.2.1:5"));
  const bool untouched = std::filesystem::is_empty(state_dir);
  EXPECT_TRUE(untouched) << "a local cluster was created for a dashboard that could not listen";
  if (!untouched) run_command(shell_quote(quick) + " db stop --state-dir " + shell_quote(state_dir.string()));
}

TEST_F(DashboardCommandTest, ShowsEveryDatabaseOfAConsumerConfiguration) {
  const std::string quick = quick_binary();
  ASSERT_FALSE(quick.empty());
  EmptyDatabase second;
  {
    pqxx::connection conn(second.url());
    migrate(conn);
  }
  write_text_file(dir_ / "consumer.yaml", "databases:\n  - name: orders\n    url: \"" + url() +
                                              "\"\n  - name: billing\n    url: \"" + second.url() + "\"\n");
  const int port = free_tcp_port();
  ChildProcess process({quick, "dashboard", "--config", (dir_ / "consumer.yaml").string(), "--listen",
                        "127.0.0.1:" + std::to_string(port)},
                       {}, dir_ / "out", dir_ / "err");
  httplib::Client client("127.0.0.1", port);
  std::string body;
  EXPECT_TRUE(eventually(
      [&] {
        const auto response = client.Get("/api/overview?database=billing");
        body = response && response->status == 200 ? response->body : "";
        return !body.empty();
      },
      seconds(15), milliseconds(20)))
      << process.err();
  EXPECT_THAT(body, HasSubstr(R"("database":"billing")"));
  EXPECT_THAT(body, HasSubstr(R"("name":"orders")"));
  stop(process);

  ChildProcess both({quick, "dashboard", "--config", (dir_ / "consumer.yaml").string(), "--database", url()}, {},
                    dir_ / "out2", dir_ / "err2");
  ASSERT_TRUE(both.wait_for(seconds(10)));
  EXPECT_NE(both.exit_code(), 0);
  EXPECT_THAT(both.err(), HasSubstr("--database excludes --config"));
}

}  // namespace
}  // namespace quick::testing
