// Items whose job type has no handler in a consumer: by default released for
// unhandled_job_type_delay (no error counted, nothing dead-lettered), counted in
// items_unhandled and logged once per job type; unhandled_job_types = dead_letter fails them
// permanently instead. A consumer without any handler refuses to start.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <sstream>
#include <string>

#include <spdlog/sinks/ostream_sink.h>

#include "quick/quick.h"
#include "support/consumer_helpers.h"
#include "support/eventually.h"
#include "support/test_database.h"
#include "util/logging.h"

namespace quick {
namespace {

using namespace testing;
using ::testing::HasSubstr;

// Collects what the quick.worker logger writes while it exists.
class WorkerLogCapture {
 public:
  WorkerLogCapture()
      : logger_(util::component_logger("quick.worker")),
        sink_(std::make_shared<spdlog::sinks::ostream_sink_mt>(text_)) {
    sink_->set_pattern("%l %v");
    logger_->sinks().push_back(sink_);
  }
  ~WorkerLogCapture() { logger_->sinks().pop_back(); }
  std::string text() {
    logger_->flush();
    return text_.str();
  }
  // How many lines contain every one of `parts`.
  int lines_with(const std::vector<std::string>& parts) {
    std::istringstream lines(text());
    int count = 0;
    for (std::string line; std::getline(lines, line);) {
      bool all = true;
      for (const auto& part : parts) all = all && line.find(part) != std::string::npos;
      count += all ? 1 : 0;
    }
    return count;
  }

 private:
  std::ostringstream text_;
  std::shared_ptr<spdlog::logger> logger_;
  std::shared_ptr<spdlog::sinks::ostream_sink_mt> sink_;
};

class UnhandledJobTypeTest : public DatabaseTest {
 protected:
  std::unique_ptr<Consumer> consumer_handling_known(const ConsumerConfig& config) {
    auto consumer = std::make_unique<Consumer>(config);
    consumer->handle("known", [](JobContext&) { return JobResult::done(); });
    return consumer;
  }
};

TEST_F(UnhandledJobTypeTest, ConsumerWithoutHandlersRefusesToStart) {
  Consumer consumer(fast_config(url(), "no-handlers"));
  try {
    consumer.start();
    FAIL() << "start() without handlers must throw";
  } catch (const InvalidArgument& error) {
    EXPECT_THAT(error.what(), HasSubstr("no handler registered"));
  }
  const auto before = Clock::now();
  consumer.stop();  // nothing was started
  EXPECT_LT(Clock::now() - before, milliseconds(500));
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.consumer_roles"), 0) << "no Scanner may have run";
}

// Released, not dead-lettered: another consumer (or the next deploy) may handle them. Each item
// waits the delay, keeps its error count, and the job type is logged once however many items.
TEST_F(UnhandledJobTypeTest, ItemsWithoutAHandlerAreReleasedForTheDelayCountedAndLoggedOnce) {
  WorkerLogCapture log;
  const auto mystery = enqueue_items(url(), 3, 3, "mystery", "m");
  enqueue_items(url(), 2, 2, "known", "k");
  auto config = fast_config(url(), "releaser");
  config.unhandled_job_type_delay = std::chrono::seconds(30);
  auto consumer = consumer_handling_known(config);
  consumer->start();
  const std::string released =
      "job_type = 'mystery' AND lease_id IS NULL AND error_count = 0 AND vesting_time > now() + interval '20 seconds'";
  const bool settled = eventually(
      [&] {
        return query_value<int>("SELECT count(*) FROM quick.items WHERE " + released) == 3 &&
               query_value<int>("SELECT count(*) FROM quick.items WHERE job_type = 'known'") == 0;
      },
      seconds(30));
  consumer->stop();
  const auto stats = consumer->stats();
  ASSERT_TRUE(settled) << stats.to_string() << "\n" << log.text();
  EXPECT_EQ(queued_ids(url(), "job_type = 'mystery'").size(), mystery.size());
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.dead_items"), 0);
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.items WHERE vesting_time > now() + interval '61 seconds'"), 0)
      << "released for the configured delay, not longer";
  EXPECT_EQ(stats.items_unhandled, 3u);
  EXPECT_EQ(stats.items_dead, 0u);
  EXPECT_EQ(stats.items_done, 2u);
  EXPECT_THAT(stats.to_string(), HasSubstr("unhandled=3"));
  EXPECT_EQ(log.lines_with({"warn", "no handler for job type mystery", "released for 30s"}), 1) << log.text();
  EXPECT_EQ(log.lines_with({"mystery"}), 1) << log.text();
}

TEST_F(UnhandledJobTypeTest, DeadLetterOptionFailsThemPermanently) {
  enqueue_items(url(), 2, 2, "mystery", "m");
  auto config = fast_config(url(), "dead-letterer");
  config.unhandled_job_types = UnhandledJobTypeAction::kDeadLetter;
  auto consumer = consumer_handling_known(config);
  consumer->start();
  const bool buried = eventually([&] { return query_value<int>("SELECT count(*) FROM quick.dead_items") == 2; },
                                 seconds(30));
  consumer->stop();
  ASSERT_TRUE(buried) << consumer->stats().to_string();
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.items"), 0);
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.dead_items WHERE reason = "
                             "'no handler registered for job type mystery'"),
            2);
  EXPECT_EQ(consumer->stats().items_unhandled, 2u);
  EXPECT_EQ(consumer->stats().items_dead, 2u);
}

}  // namespace
}  // namespace quick
