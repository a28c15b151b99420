// `quick demo`, end to end, as a subprocess on the test cluster, at toy size: both queues run the
// load and show up in one aligned table with fixed-notation numbers and a plain summary; --help
// says what the demo drops and creates; SIGINT and SIGTERM stop it promptly with 128 + the signal,
// leaving no connection open and no item leased. Timings are never asserted: only behaviour.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "support/processes.h"
#include "support/silent_listener.h"
#include "support/test_database.h"

namespace quick {
namespace {

using namespace testing;

class DemoCommandTest : public ::testing::Test {
 protected:
  // A name of its own per test process, so that tests running at once never drop each other's.
  DemoCommandTest() : demo_database_("quick_demo_test_" + std::to_string(::getpid())) {}

  void TearDown() override {
    child_.reset();  // SIGKILLs a demo still running, before its database is dropped
    pqxx::connection conn(admin_url());
    pqxx::nontransaction session(conn);
    session.exec("DROP DATABASE IF EXISTS " + session.quote_name(demo_database_) + " WITH (FORCE)");
  }

  using Options = std::vector<std::pair<std::string, std::string>>;  // (option, value); value "" for a flag

  // Starts `quick demo` on the test cluster with toy-sized options, `changed` replacing or adding
  // to them.
  ChildProcess& start(const Options& changed = {}) {
    Options options = {{"--database", admin_url()}, {"--demo-database", demo_database_},
                       {"--noisy-tenants", "2"},    {"--noisy-backlog", "150"},
                       {"--quiet-tenants", "5"},    {"--quiet-rate", "20"},
                       {"--seconds", "2"},          {"--job-ms", "2"},
                       {"--consumers", "1"},        {"--workers", "2"}};
    for (const auto& [name, value] : changed) {
      auto same = std::find_if(options.begin(), options.end(),
                               [&](const auto& option) { return option.first == name; });
      if (same != options.end()) {
        same->second = value;
      } else {
        options.emplace_back(name, value);
      }
    }
    std::vector<std::string> argv = {quick_binary(), "demo"};
    for (const auto& [name, value] : options) {
      argv.push_back(name);
      if (!value.empty()) argv.push_back(value);
    }
    child_ = std::make_unique<ChildProcess>(argv, std::vector<std::string>{}, dir_ / "out.txt", dir_ / "err.txt");
    return *child_;
  }

  // Starts the demo with `changed` options and sends `signal` once the output shows
  // `progress_of`'s run under way; the demo must end within a few seconds with 128 + signal.
  void stop_during(const std::string& progress_of, int signal, const Options& changed) {
    auto& demo = start(changed);
    const std::string line_start = "  " + progress_of + " ";
    ASSERT_TRUE(
        eventually([&] { return demo.out().find(line_start) != std::string::npos || demo.exited(); }, seconds(120)))
        << "no progress line of " << progress_of << ":\n"
        << demo.out() << demo.err();
    ASSERT_FALSE(demo.exited()) << demo.describe() << "\n" << demo.out() << demo.err();
    const auto before = Clock::now();
    demo.signal(signal);
    ASSERT_TRUE(demo.wait_for(seconds(10))) << "the demo did not stop within 10 s of signal " << signal;
    std::cout << demo.out() << "the demo stopped " << seconds_since(before) << " s after signal " << signal
              << std::endl;
    EXPECT_EQ(demo.exit_code(), std::optional<int>(128 + signal)) << demo.describe() << "\n" << demo.err();
    const std::string name = signal == SIGINT ? "SIGINT" : "SIGTERM";
    EXPECT_NE(demo.out().find("stopped by " + name), std::string::npos) << demo.out();
    expect_nothing_held();
  }

  // No connection of the demo's is left on its database, and no item stays leased (a leased item
  // vests again only when its lease runs out; a released one has vested).
  void expect_nothing_held() {
    auto admin = std::make_unique<pqxx::connection>(admin_url());
    const std::string others = "SELECT count(*) FROM pg_stat_activity WHERE datname = " + admin->quote(demo_database_);
    EXPECT_TRUE(eventually(
        [&] {
          pqxx::nontransaction session(*admin);
          return session.exec(others).at(0)[0].as<int>() == 0;
        },
        seconds(5)))
        << "backends of the demo remain on " << demo_database_;
    pqxx::connection demo(url_for_database(admin_url(), demo_database_));
    pqxx::nontransaction session(demo);
    EXPECT_EQ(session.exec("SELECT count(*) FROM quick.items WHERE vesting_time > now()").at(0)[0].as<int>(), 0)
        << "items left leased";
  }

  // The comparison table: its header line, the rule under it and its rows, as printed.
  static std::vector<std::string> table_lines(const std::string& out) {
    std::vector<std::string> lines;
    std::istringstream in(out);
    bool inside = false;
    for (std::string line; std::getline(in, line);) {
      if (line.rfind(" queue ", 0) == 0) inside = true;
      if (inside && line.find('|') == std::string::npos && line.find("-+-") == std::string::npos) break;
      if (inside) lines.push_back(line);
    }
    return lines;
  }

  // Where each column starts: the positions of the separators ('|' in rows, '+' in the rule).
  static std::vector<std::size_t> separators(const std::string& line) {
    std::vector<std::size_t> positions;
    for (std::size_t i = 0; i < line.size(); ++i) {
      if (line[i] == '|' || line[i] == '+') positions.push_back(i);
    }
    return positions;
  }

  std::string demo_database_;
  TempDir dir_;
  std::unique_ptr<ChildProcess> child_;
};

TEST_F(DemoCommandTest, RunsBothQueuesAndPrintsOneAlignedTableAndASummary) {
  ASSERT_FALSE(quick_binary().empty());
  auto& demo = start();
  ASSERT_TRUE(demo.wait_for(seconds(180))) << "the demo did not end:\n" << demo.out() << demo.err();
  const std::string out = demo.out();
  std::cout << out;
  ASSERT_EQ(demo.exit_code(), std::optional<int>(0)) << demo.describe() << "\n" << out << demo.err();

  const auto table = table_lines(out);
  ASSERT_EQ(table.size(), 4u) << "header, rule and one row per queue expected:\n" << out;
  EXPECT_EQ(table[2].rfind(" quick-pg ", 0), 0u) << table[2];
  EXPECT_EQ(table[3].rfind(" plain FIFO ", 0), 0u) << table[3];
  const auto columns = separators(table[0]);
  EXPECT_EQ(columns.size(), 6u) << table[0];
  for (const auto& line : table) {
    EXPECT_EQ(separators(line), columns) << "misaligned:\n" << line << "\n" << table[0];
    EXPECT_EQ(line.size(), table[0].size()) << line;
  }

  EXPECT_FALSE(std::regex_search(out, std::regex("[0-9][eE][-+][0-9]"))) << "scientific notation:\n" << out;
  for (const std::string sentence : {"Quiet tenants' jobs started within ", "The longest wait of a quiet job was ",
                                     "The noisy backlog of 300 jobs", "Both queues ran every job: "}) {
    EXPECT_NE(out.find(sentence), std::string::npos) << sentence << "\n" << out;
  }
  // No duplicated internal counters: the consumers' stats and their info logs stay out of it.
  EXPECT_EQ(out.find("pickup latency:"), std::string::npos) << out;
  EXPECT_EQ(demo.err().find("consumer demo-consumer-1 stopped"), std::string::npos) << demo.err();

  // Nothing is held, and every job ran through each queue.
  expect_nothing_held();
  pqxx::connection conn(url_for_database(admin_url(), demo_database_));
  pqxx::nontransaction session(conn);
  EXPECT_EQ(session.exec("SELECT count(*) FROM quick.items").at(0)[0].as<int>(), 0);
  EXPECT_EQ(session.exec("SELECT count(*) FROM demo_fifo.jobs").at(0)[0].as<int>(), 0);
}

TEST_F(DemoCommandTest, HelpSaysWhatItDropsAndCreates) {
  ASSERT_FALSE(quick_binary().empty());
  auto& help = start({{"--help", ""}});
  ASSERT_TRUE(help.wait_for(seconds(30)));
  EXPECT_EQ(help.exit_code(), std::optional<int>(0)) << help.describe();
  // Folded into one line: CLI11 does not wrap the footer, but say so whatever it does.
  std::string text = std::regex_replace(help.out(), std::regex("\\s+"), " ");
  for (const std::string fact :
       {"it drops the database named by --demo-database (quick_demo) if it exists, with everything in it, creates it "
        "anew and migrates it",
        "creates the roles quick_producer, quick_consumer and quick_admin if the server has no roles of those names",
        "the table demo_fifo.jobs in that same database", "nothing else is touched", "130 (SIGINT) or 143 (SIGTERM)"}) {
    EXPECT_NE(text.find(fact), std::string::npos) << fact << "\n" << help.out();
  }
  // --help ran nothing: the database was not created.
  pqxx::connection conn(admin_url());
  pqxx::nontransaction session(conn);
  EXPECT_EQ(session.exec("SELECT count(*) FROM pg_database WHERE datname = " + session.quote(demo_database_))
                .at(0)[0]
                .as<int>(),
            0);
}

TEST_F(DemoCommandTest, RefusesToDropTheDatabaseItConnectsTo) {
  ASSERT_FALSE(quick_binary().empty());
  EmptyDatabase target;
  auto& demo = start({{"--database", target.url()}, {"--demo-database", target.name()}});
  ASSERT_TRUE(demo.wait_for(seconds(60)));
  EXPECT_EQ(demo.exit_code(), std::optional<int>(2)) << demo.describe() << "\n" << demo.err();
  EXPECT_NE(demo.err().find("is the database the connection string names"), std::string::npos) << demo.err();
  pqxx::connection conn(target.url());  // still there
}

TEST_F(DemoCommandTest, SigintWhileConnectingToADatabaseThatNeverAnswersEndsItAtOnce) {
  ASSERT_FALSE(quick_binary().empty());
  SilentListener silent;
  auto& demo = start({{"--database", silent.url()}});
  ASSERT_TRUE(silent.client_waiting(seconds(20))) << demo.describe() << "\n" << demo.err();
  demo.signal(SIGINT);
  ASSERT_TRUE(demo.wait_for(seconds(4))) << "the demo ignored SIGINT while connecting";
  EXPECT_EQ(demo.exit_code(), std::optional<int>(130)) << demo.describe() << "\n" << demo.err();
  EXPECT_NE(demo.err().find("interrupted by SIGINT while"), std::string::npos) << demo.err();
}

TEST_F(DemoCommandTest, SigintDuringTheQuickRunStopsItCleanly) {
  ASSERT_FALSE(quick_binary().empty());
  stop_during("quick-pg", SIGINT, {{"--noisy-backlog", "2000"}, {"--seconds", "30"}, {"--job-ms", "5"}});
  EXPECT_EQ(child_->out().find("\n  plain FIFO "), std::string::npos) << "the FIFO run started after the stop";
}

TEST_F(DemoCommandTest, SigtermDuringTheFifoRunStopsItCleanly) {
  ASSERT_FALSE(quick_binary().empty());
  // A short quick-pg run, then a FIFO run with a backlog that outlasts it.
  stop_during("plain FIFO", SIGTERM, {{"--noisy-backlog", "1500"}, {"--seconds", "3"}, {"--job-ms", "5"}});
  const std::string out = child_->out();
  EXPECT_NE(out.find(" quick-pg   "), std::string::npos) << "the finished quick-pg run is reported:\n" << out;
  EXPECT_NE(out.find(" plain FIFO (stopped) "), std::string::npos) << out;
}

}  // namespace
}  // namespace quick
