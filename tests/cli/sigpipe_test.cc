// SIGPIPE never kills the `quick` tool: with its standard output a pipe nobody reads any more
// (`quick stats | head -1` once head has exited), a write fails and the command goes on to its
// normal end.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/processes.h"
#include "support/test_database.h"

namespace quick {
namespace {

using namespace testing;

class SigpipeTest : public DatabaseTest {
 protected:
  TempDir dir_;
};

TEST_F(SigpipeTest, StatsIntoAClosedPipeEndsNormally) {
  ASSERT_FALSE(quick_binary().empty());
  ClosedPipe pipe;
  ChildProcess stats({quick_binary(), "stats", "--database", url()}, {}, pipe.write_end(), dir_ / "err.txt");
  ASSERT_TRUE(stats.wait_for(seconds(30))) << stats.err();
  EXPECT_FALSE(stats.term_signal().has_value()) << "quick stats was " << stats.describe() << "\n" << stats.err();
  EXPECT_EQ(stats.exit_code(), std::optional<int>(0)) << stats.err();
}

// quick worker prints its final counters on standard output after the stop.
TEST_F(SigpipeTest, WorkerWithItsStdoutAClosedPipeStopsWithExitZero) {
  ASSERT_FALSE(quick_binary().empty());
  const auto config = dir_ / "worker.yaml";
  write_text_file(config, "databases: [{url: \"" + url() +
                              "\"}]\nscanner: {idle_poll_interval: 5ms}\njob_types: {ok: {command: 'true'}}\n");
  ClosedPipe pipe;
  ChildProcess worker({quick_binary(), "worker", "--config", config.string(), "--stats-interval", "50ms"}, {},
                      pipe.write_end(), dir_ / "err.txt");
  ASSERT_TRUE(eventually(
      [&] {
        return query_value<int>("SELECT count(*) FROM quick.consumer_roles WHERE role = 'in_order_scanner'") == 1 ||
               worker.exited();
      },
      seconds(30)))
      << worker.err();
  ASSERT_FALSE(worker.exited()) << worker.describe() << "\n" << worker.err();
  worker.signal(SIGTERM);
  ASSERT_TRUE(worker.wait_for(seconds(10))) << worker.err();
  EXPECT_FALSE(worker.term_signal().has_value()) << "quick worker was " << worker.describe() << "\n" << worker.err();
  EXPECT_EQ(worker.exit_code(), std::optional<int>(0)) << worker.err();
}

}  // namespace
}  // namespace quick
