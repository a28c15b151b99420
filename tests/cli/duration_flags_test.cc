// The tool's duration flags refuse what would make no sense, while the command line is parsed
// and before any database is touched, with a message naming the flag: an interval of zero or
// less (a stats loop that would spin), a negative delay, a duration with no unit.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/processes.h"

namespace quick {
namespace {

using namespace testing;

class DurationFlagsTest : public ::testing::Test {
 protected:
  // Runs `quick <args>` to its end (no database is configured: nothing may connect).
  ChildProcess& run(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {quick_binary()};
    argv.insert(argv.end(), args.begin(), args.end());
    child_ = std::make_unique<ChildProcess>(argv, std::vector<std::string>{"QUICK_DATABASE_URL=host=/nonexistent"},
                                            dir_ / "out.txt", dir_ / "err.txt");
    EXPECT_TRUE(child_->wait_for(std::chrono::seconds(30))) << "quick did not end: " << child_->err();
    return *child_;
  }
  void expect_refused(const std::vector<std::string>& args, const std::string& message) {
    std::string command;
    for (const auto& arg : args) command += " " + arg;
    SCOPED_TRACE("quick" + command);
    auto& child = run(args);
    EXPECT_FALSE(child.term_signal().has_value()) << child.describe();
    EXPECT_NE(child.exit_code(), std::optional<int>(0)) << child.describe();
    const std::string err = child.err();
    std::cout << "quick" << command << " -> " << err;
    EXPECT_NE(err.find(message), std::string::npos) << err;
  }
  std::string config_file() {
    const auto path = dir_ / "worker.yaml";
    write_text_file(path, "databases: [{url: \"host=/nonexistent\"}]\njob_types: {ok: {command: 'true'}}\n");
    return path.string();
  }

  TempDir dir_;
  std::unique_ptr<ChildProcess> child_;
};

TEST_F(DurationFlagsTest, WorkerStatsIntervalMustBePositive) {
  ASSERT_FALSE(quick_binary().empty());
  const std::string config = config_file();
  expect_refused({"worker", "--config", config, "--stats-interval", "0s"},
                 "--stats-interval: must be at least 1ms, got 0s");
  expect_refused({"worker", "--config", config, "--stats-interval", "0ms"}, "--stats-interval: must be at least 1ms");
  expect_refused({"worker", "--config", config, "--stats-interval=-1s"},
                 "--stats-interval: '-1s' must be a finite, "
                 "non-negative duration");
  expect_refused({"worker", "--config", config, "--stats-interval", "500us"},
                 "--stats-interval: must be a whole number of milliseconds");
  expect_refused({"worker", "--config", config, "--stats-interval", "10"}, "--stats-interval: '10' has no unit");
}

TEST_F(DurationFlagsTest, EnqueueDelayMustBeANonNegativeDuration) {
  ASSERT_FALSE(quick_binary().empty());
  const std::vector<std::string> enqueue = {"enqueue", "--tenant", "t", "--job-type", "j"};
  auto with = [&](const std::string& flag) {
    auto args = enqueue;
    args.push_back(flag);
    return args;
  };
  expect_refused(with("--delay=-5s"), "--delay: '-5s' must be a finite, non-negative duration");
  expect_refused(with("--delay=5"), "--delay: '5' has no unit");
  expect_refused(with("--delay=1500us"), "--delay: must be a whole number of milliseconds");
}

TEST_F(DurationFlagsTest, StatsZonesMustNotBeNegative) {
  ASSERT_FALSE(quick_binary().empty());
  expect_refused({"stats", "--zones=-1"}, "--zones");
}

}  // namespace
}  // namespace quick
