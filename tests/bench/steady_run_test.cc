// A steady-state run that broke (its drain timed out, its producers failed, its items did not all
// run) must not pass for a good one: with a drain that timed out the offered rate was 0, nothing
// was enqueued, and p99 0 ms and backlog 0 met steady_state's targets (bench/support/steady_load.h).
#include <gtest/gtest.h>

#include "support/steady_load.h"

namespace quick::bench {
namespace {

SteadyRun good_run() {
  SteadyRun run;
  run.system = "quick-pg";
  run.drain_items = 1000;
  run.drain_s = 0.5;
  run.load_fraction = 0.8;
  run.target_rate = 1600;
  run.seconds = 2;
  run.enqueued = 3200;
  run.done_in_run = 3100;
  run.finish_s = 0.1;
  return run;
}

TEST(SteadyRunTest, AGoodRunIsComplete) {
  EXPECT_TRUE(good_run().complete());
  EXPECT_EQ(good_run().problems(), "");
}

TEST(SteadyRunTest, ADrainThatTimedOutIsNot) {
  SteadyRun run = good_run();
  run.drain_timed_out = true;
  run.drain_s = 0;
  run.target_rate = 0;
  run.enqueued = 0;
  run.done_in_run = 0;
  EXPECT_FALSE(run.complete());
  EXPECT_NE(run.problems().find("drain"), std::string::npos) << run.problems();
}

TEST(SteadyRunTest, ProducerErrorsOrItemsThatNeverRanAreNot) {
  SteadyRun errors = good_run();
  errors.producer_errors = 3;
  EXPECT_FALSE(errors.complete());
  EXPECT_NE(errors.problems().find("3 producer errors"), std::string::npos) << errors.problems();
  SteadyRun unfinished = good_run();
  unfinished.finish_s = -1;
  EXPECT_FALSE(unfinished.complete());
  SteadyRun nothing = good_run();
  nothing.enqueued = 0;
  EXPECT_FALSE(nothing.complete());
}

// The queue's database errors (quick-pg's consumers' database_errors, the baseline's failed
// claims) were never read: a run whose visits or claims failed just showed lower throughput.
TEST(SteadyRunTest, DatabaseErrorsAreNot) {
  SteadyRun run = good_run();
  run.queue_errors = 5;
  EXPECT_FALSE(run.complete());
  EXPECT_NE(run.problems().find("5 database errors"), std::string::npos) << run.problems();
}

// A producer behind its schedule has items due that it has not committed: they wait as much as
// committed ones, so the backlog counts them (it counted only the committed ones).
TEST(SteadyRunTest, TheBacklogCountsItemsDueButNotYetCommitted) {
  SteadyRun run = good_run();
  run.backlog = {{0.0, 0, 0, 0}, {1.0, 1000, 990, 1600}, {2.0, 1500, 1500, 3200}};
  EXPECT_EQ(run.backlog[1].backlog(), 610);
  EXPECT_EQ(run.backlog_start(), 0);
  EXPECT_EQ(run.backlog_end(), 1700);
  EXPECT_GT(run.backlog_growth(), 0);
}

}  // namespace
}  // namespace quick::bench
