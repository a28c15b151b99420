// Every `quick` command hides passwords in what it prints and logs: the connection string a
// command names, a libpq message quoting part of it, a URL the demo prints.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/processes.h"
#include "support/test_database.h"

namespace quick {
namespace {

using namespace testing;

class RedactionTest : public DatabaseTest {
 protected:
  // Runs `quick <args>` to its end, with `extra_environment`.
  ChildProcess& run(const std::vector<std::string>& args, const std::vector<std::string>& extra_environment = {}) {
    std::vector<std::string> argv = {quick_binary()};
    argv.insert(argv.end(), args.begin(), args.end());
    child_ = std::make_unique<ChildProcess>(argv, extra_environment, dir_ / "out.txt", dir_ / "err.txt");
    EXPECT_TRUE(child_->wait_for(seconds(60))) << "quick did not end: " << child_->err();
    return *child_;
  }
  static void expect_hidden(const std::string& output, const std::string& secret) {
    EXPECT_EQ(output.find(secret), std::string::npos) << "the password " << secret << " was printed:\n" << output;
  }

  TempDir dir_;
  std::unique_ptr<ChildProcess> child_;
};

// libpq's reason for refusing a malformed URI quotes the part it could not decode: here, the
// password.
TEST_F(RedactionTest, MalformedUriPasswordIsNotEchoedByAnyCommand) {
  ASSERT_FALSE(quick_binary().empty());
  const std::string url = "postgresql://postgres:top%zzsecret@127.0.0.1/db";
  const std::vector<std::vector<std::string>> commands = {
      {"stats", "--database", url},
      {"migrate", "--database", url},
      {"enqueue", "--database", url, "--tenant", "t", "--job-type", "j"},
  };
  for (const auto& args : commands) {
    SCOPED_TRACE(args.front());
    auto& child = run(args);
    EXPECT_NE(child.exit_code(), std::optional<int>(0)) << child.describe();
    const std::string err = child.err();
    std::cout << args.front() << ": " << err;
    EXPECT_NE(err.find("malformed connection string: invalid percent-encoded token: \"***\""), std::string::npos)
        << err;
    expect_hidden(err + child.out(), "zzsecret");
  }
  auto& from_environment = run({"stats"}, {"QUICK_DATABASE_URL=" + url});
  EXPECT_NE(from_environment.exit_code(), std::optional<int>(0));
  expect_hidden(from_environment.err(), "zzsecret");

  const auto config = dir_ / "worker.yaml";
  write_text_file(config, "databases: [{url: \"" + url + "\"}]\njob_types: {ok: {command: 'true'}}\n");
  auto& worker = run({"worker", "--config", config.string()});
  EXPECT_NE(worker.exit_code(), std::optional<int>(0));
  EXPECT_NE(worker.err().find("databases[0].url: malformed connection string"), std::string::npos) << worker.err();
  expect_hidden(worker.err(), "zzsecret");
}

// A connection string given where no argument is expected (the --database forgotten): CLI11
// quotes it in its refusal.
TEST_F(RedactionTest, ArgumentErrorsDoNotQuoteThePassword) {
  ASSERT_FALSE(quick_binary().empty());
  auto& child = run({"stats", "postgresql://user:parse-secret@db.example/app"});
  EXPECT_NE(child.exit_code(), std::optional<int>(0)) << child.describe();
  EXPECT_NE(child.err().find("not expected: postgresql://user:***@db.example/app"), std::string::npos) << child.err();
  expect_hidden(child.err() + child.out(), "parse-secret");
  auto& help = run({"stats", "--help"});
  EXPECT_EQ(help.exit_code(), std::optional<int>(0)) << help.describe();
  EXPECT_NE(help.out().find("--database"), std::string::npos) << "help still goes to standard output";
}

// The demo prints the database it works on, here as a login of its own with a password (a
// superuser: the demo creates its database and the roles), which must not be shown.
TEST_F(RedactionTest, DemoPrintsItsDatabaseWithoutThePassword) {
  ASSERT_FALSE(quick_binary().empty());
  TestLogin login("", "SUPERUSER");
  auto& demo = run({"demo", "--database", login.url(admin_url()), "--noisy-tenants", "1", "--noisy-backlog", "0",
                    "--quiet-tenants", "1", "--quiet-rate", "1", "--seconds", "1", "--consumers", "1", "--workers", "1",
                    "--job-ms", "0"});
  EXPECT_EQ(demo.exit_code(), std::optional<int>(0)) << demo.describe() << "\n" << demo.err();
  const std::string out = demo.out();
  EXPECT_NE(out.find("demo database: "), std::string::npos) << out;
  EXPECT_NE(out.find("password=***"), std::string::npos) << out;
  expect_hidden(out + demo.err(), login.password());
  // The login owns the demo's database: drop it before the login.
  pqxx::connection conn(admin_url());
  pqxx::nontransaction session(conn);
  session.exec("DROP DATABASE IF EXISTS quick_demo WITH (FORCE)");
}

}  // namespace
}  // namespace quick
