// quick_bench stopped by a signal (Ctrl-C's SIGINT, SIGTERM from a supervisor or `timeout`)
// leaves no scratch database behind. Each is named <experiment>_<pid>, so a later run (another
// pid) never drops it: it stayed on the server under test, holding its tables, until someone
// dropped it by hand.
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <pqxx/pqxx>

#include "support/eventually.h"
#include "support/processes.h"
#include "support/test_database.h"

namespace quick::testing {
namespace {

using namespace std::chrono_literals;

// The scratch databases of the quick_bench process `pid` on the test server.
long scratch_databases_of(pid_t pid) {
  pqxx::connection admin(admin_url());
  pqxx::nontransaction session(admin);
  return session
      .exec_params1("SELECT count(*) FROM pg_database WHERE datname LIKE 'quick\\_bench\\_%\\_' || $1",
                    std::to_string(pid))[0]
      .as<long>();
}

// Drops what scratch_databases_of counts (so that a failing test leaves nothing either).
void drop_scratch_databases_of(pid_t pid) {
  pqxx::connection admin(admin_url());
  pqxx::nontransaction session(admin);
  for (const auto& row : session.exec_params(
           "SELECT datname FROM pg_database WHERE datname LIKE 'quick\\_bench\\_%\\_' || $1", std::to_string(pid))) {
    session.exec("DROP DATABASE IF EXISTS " + session.quote_name(row[0].as<std::string>()) + " WITH (FORCE)");
  }
}

class QuickBenchInterruptTest : public ::testing::TestWithParam<int> {};

TEST_P(QuickBenchInterruptTest, DropsItsScratchDatabasesAndEndsByTheSignal) {
  const char* build_dir = std::getenv("QUICK_BUILD_DIR");
  ASSERT_NE(build_dir, nullptr) << "run through ctest, or export QUICK_BUILD_DIR";
  const std::string url = admin_url();
  ASSERT_FALSE(url.empty());
  TempDir dir;
  // noisy_neighbour at toy size: three scratch databases one after the other, a few seconds each,
  // with consumers and baseline workers connected to them.
  ChildProcess bench({std::string(build_dir) + "/quick_bench", "--database", url, "--out", (dir / "results").string(),
                      "--quick", "--experiment", "noisy_neighbour"},
                     {}, dir / "out.txt", dir / "err.txt");
  ASSERT_TRUE(eventually([&] { return bench.exited() || scratch_databases_of(bench.pid()) > 0; }, 60s, 20ms));
  ASSERT_FALSE(bench.exited()) << bench.describe() << "\n" << bench.err();
  std::this_thread::sleep_for(500ms);  // the consumer and its Workers at work
  bench.signal(GetParam());
  ASSERT_TRUE(bench.wait_for(30s)) << "quick_bench did not end after the signal";
  EXPECT_EQ(bench.term_signal(), GetParam()) << bench.describe() << "\n" << bench.err();
  EXPECT_EQ(scratch_databases_of(bench.pid()), 0) << "quick_bench left scratch databases:\n" << bench.err();
  drop_scratch_databases_of(bench.pid());
}

INSTANTIATE_TEST_SUITE_P(Signals, QuickBenchInterruptTest, ::testing::Values(SIGINT, SIGTERM),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return info.param == SIGINT ? std::string("Sigint") : std::string("Sigterm");
                         });

}  // namespace
}  // namespace quick::testing
