// quick::set_log_sink and set_log_level: the library's records reach the application's sink
// instead of standard error, filtered by the level, for loggers made before and after the call;
// an empty sink restores standard error.
#include <gtest/gtest.h>

#include <mutex>
#include <string>
#include <vector>

#include "quick/logging.h"
#include "util/logging.h"

namespace quick {
namespace {

struct Captured {
  std::mutex mutex;
  std::vector<std::string> lines;  // "<level> <logger> <message>"
};

TEST(LoggingTest, RecordsReachTheApplicationsSinkAtTheLevelItSet) {
  auto before = util::component_logger("quick.test_before");
  Captured captured;
  set_log_sink([&](const LogRecord& record) {
    std::lock_guard<std::mutex> lock(captured.mutex);
    captured.lines.push_back(to_string(record.level) + " " + std::string(record.logger) + " " +
                             std::string(record.message));
  });
  set_log_level(LogLevel::kWarn);
  auto after = util::component_logger("quick.test_after");
  before->info("dropped: below the level");
  before->warn("kept {}", 1);
  after->error("kept {}", 2);
  after->debug("dropped too");
  set_log_level(LogLevel::kDebug);
  after->debug("kept {}", 3);
  set_log_sink({});  // back to standard error
  after->warn("not captured");
  set_log_level(LogLevel::kInfo);

  EXPECT_EQ(captured.lines, (std::vector<std::string>{"warn quick.test_before kept 1", "error quick.test_after kept 2",
                                                      "debug quick.test_after kept 3"}));
}

TEST(LoggingTest, ASinkThatThrowsDoesNotBreakTheLogging) {
  set_log_sink([](const LogRecord&) { throw std::runtime_error("sink failed"); });
  auto logger = util::component_logger("quick.test_throwing");
  EXPECT_NO_THROW(logger->warn("a record"));
  set_log_sink({});
}

TEST(LoggingTest, LevelNames) {
  EXPECT_EQ(to_string(LogLevel::kWarn), "warn");
  EXPECT_EQ(to_string(LogLevel::kOff), "off");
}

}  // namespace
}  // namespace quick
