// `quick top`: one frame with --once; live, it redraws until SIGINT or SIGTERM and then exits 0.
// Tenant names are escaped as in every table of the tool. A database that never answers fails it
// after the connect_timeout, and Ctrl-C while it connects ends it at once.
#include <gtest/gtest.h>

#include <csignal>
#include <string>
#include <vector>

#include "quick/quick.h"
#include "support/consumer_helpers.h"
#include "support/eventually.h"
#include "support/items.h"
#include "support/processes.h"
#include "support/silent_listener.h"
#include "support/test_database.h"

namespace quick {
namespace {

using namespace testing;

class TopCommandTest : public DatabaseTest {
 protected:
  std::unique_ptr<ChildProcess> start_top(std::vector<std::string> arguments) {
    arguments.insert(arguments.begin(), {quick_binary(), "top", "--database", url()});
    return std::make_unique<ChildProcess>(arguments, std::vector<std::string>{}, dir_ / "out.txt", dir_ / "err.txt");
  }
  TempDir dir_;
};

TEST_F(TopCommandTest, OneFrameShowsTheZonesTheConsumersAndWhatIsPaused) {
  auto conn = connect();
  for (int i = 0; i < 3; ++i) enqueue_committed(*conn, make_item("deep-tenant"));
  enqueue_committed(*conn, make_item("evil\x1b[2J\nforged"));
  query("SELECT quick.pause_job_type('report', 'backfill')");
  // A consumer that handles another job type only: it joins (membership, in-order role) and
  // leaves the items queued.
  Consumer consumer(fast_config(url(), "top-test-consumer"));
  consumer.handle("other", [](JobContext&) { return JobResult::done(); });
  consumer.start();
  ASSERT_TRUE(eventually([&] { return query_value<int>("SELECT count(*) FROM quick.dashboard_consumers()") == 1; },
                         seconds(10)));

  auto top = start_top({"--once", "--zones", "5"});
  ASSERT_TRUE(top->wait_for(seconds(30)));
  consumer.stop();
  EXPECT_EQ(top->exit_code(), std::optional<int>(0)) << top->err();
  const std::string out = top->out();
  for (const char* expected : {"== queue", "== deepest zones", "== zones waiting longest", "== consumers",
                               "deep-tenant", "top-test-consumer", "report", "backfill"}) {
    EXPECT_NE(out.find(expected), std::string::npos) << expected << " missing from:\n" << out;
  }
  EXPECT_NE(out.find("evil\\x1B[2J\\x0Aforged"), std::string::npos) << out;
  EXPECT_EQ(out.find('\x1b'), std::string::npos) << "not a terminal: no screen clearing, no raw escapes";
}

// A zone's items are counted up to the dashboard functions' cap (100,000): a count that reached it
// is shown with a "+", as the dashboard shows it, not as if exact.
TEST_F(TopCommandTest, AZoneCountThatReachedTheCapIsMarkedAsALowerBound) {
  auto conn = connect();
  enqueue_committed(*conn, make_item("big"));  // the zone and its pointer
  query(
      "INSERT INTO quick.items (tenant, job_type, priority, vesting_time, zone_time, payload) "
      "SELECT 'big', 'send_receipt', 0, now(), now(), '{}' FROM generate_series(1, 100000)");
  enqueue_committed(*conn, make_item("small"));
  auto top = start_top({"--once"});
  ASSERT_TRUE(top->wait_for(seconds(60)));
  EXPECT_EQ(top->exit_code(), std::optional<int>(0)) << top->err();
  const std::string out = top->out();
  EXPECT_NE(out.find("100000+"), std::string::npos) << "the capped count is shown as exact:\n" << out;
  EXPECT_EQ(out.find("100001"), std::string::npos) << out;
}

TEST_F(TopCommandTest, RedrawsUntilSigtermAndExitsZero) {
  auto top = start_top({"--interval", "100ms"});
  const auto frames = [&] {
    const std::string out = top->out();
    int count = 0;
    for (auto at = out.find("== queue"); at != std::string::npos; at = out.find("== queue", at + 1)) ++count;
    return count;
  };
  ASSERT_TRUE(eventually([&] { return frames() >= 3; }, seconds(20))) << top->err();
  top->signal(SIGTERM);
  ASSERT_TRUE(top->wait_for(seconds(10))) << "quick top did not stop on SIGTERM";
  EXPECT_EQ(top->exit_code(), std::optional<int>(0)) << top->err();
}

TEST(TopConnectTest, SigintWhileConnectingToADatabaseThatNeverAnswersEndsItAtOnce) {
  ASSERT_FALSE(quick_binary().empty());
  SilentListener silent;
  TempDir dir;
  ChildProcess top({quick_binary(), "top", "--once", "--database", silent.url()}, {}, dir / "out.txt", dir / "err.txt");
  ASSERT_TRUE(silent.client_waiting(seconds(20))) << top.describe() << "\n" << top.err();
  top.signal(SIGINT);
  // Not a timing: the connect_timeout (5 s) would end it too, but later, and saying something else.
  ASSERT_TRUE(top.wait_for(seconds(4))) << "quick top ignored SIGINT while connecting";
  EXPECT_EQ(top.exit_code(), std::optional<int>(130)) << top.describe() << "\n" << top.err();
  EXPECT_NE(top.err().find("interrupted by SIGINT while connecting"), std::string::npos) << top.err();
}

TEST(TopConnectTest, ADatabaseThatNeverAnswersFailsItAfterTheConnectTimeout) {
  ASSERT_FALSE(quick_binary().empty());
  SilentListener silent;
  TempDir dir;
  ChildProcess top({quick_binary(), "top", "--once", "--database", silent.url()}, {}, dir / "out.txt", dir / "err.txt");
  ASSERT_TRUE(top.wait_for(seconds(30))) << "quick top waited for the database for good";
  EXPECT_EQ(top.exit_code(), std::optional<int>(1)) << top.describe() << "\n" << top.err();
  EXPECT_NE(top.err().find("cannot reach the database"), std::string::npos) << top.err();
  EXPECT_NE(top.err().find("timeout expired"), std::string::npos) << top.err();
}

}  // namespace
}  // namespace quick
