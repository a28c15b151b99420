// A windowed load run (held_snapshot, steady_load) that broke must not pass for a good one: the
// setup's jobs that did not all run (LoadTarget went on into the load regardless), the queue's
// database errors (quick-pg's ConsumerStats::database_errors, BaselinePool::errors(), never
// read), producer errors and jobs that never ran only lowered throughput or vanished from the
// percentiles, and the targets were judged anyway (bench/support/windowed_load.h).
#include <gtest/gtest.h>

#include "support/windowed_load.h"

namespace quick::bench {
namespace {

WindowedRun good_run() {
  WindowedRun run;
  run.system = "quick-pg";
  run.tenants = 100;
  run.seconds = 3;
  run.enqueued = 3000;
  run.done_in_run = 2990;
  run.finish_s = 0.05;
  return run;
}

TEST(WindowedRunTest, AGoodRunIsComplete) {
  EXPECT_TRUE(good_run().complete());
  EXPECT_EQ(good_run().problems(), "");
  EXPECT_EQ(good_run().marked_system(), "quick-pg");
}

TEST(WindowedRunTest, ASetupThatTimedOutMakesItIncomplete) {
  WindowedRun run = good_run();
  run.setup_timed_out = true;
  EXPECT_FALSE(run.complete());
  EXPECT_NE(run.problems().find("setup"), std::string::npos) << run.problems();
}

TEST(WindowedRunTest, DatabaseErrorsMakeItIncomplete) {
  WindowedRun run = good_run();
  run.errors = 4;
  EXPECT_FALSE(run.complete());
  EXPECT_NE(run.problems().find("4 database errors"), std::string::npos) << run.problems();
  EXPECT_EQ(run.marked_system(), "quick-pg **(INCOMPLETE: 4 database errors)**");
}

TEST(WindowedRunTest, ProducerErrorsJobsThatNeverRanOrNoLoadMakeItIncomplete) {
  WindowedRun errors = good_run();
  errors.producer_errors = 2;
  EXPECT_FALSE(errors.complete());
  EXPECT_NE(errors.problems().find("2 producer errors"), std::string::npos) << errors.problems();
  WindowedRun unfinished = good_run();
  unfinished.finish_s = -1;
  EXPECT_FALSE(unfinished.complete());
  EXPECT_NE(unfinished.problems().find("not all jobs ran"), std::string::npos) << unfinished.problems();
  WindowedRun nothing = good_run();
  nothing.enqueued = 0;
  EXPECT_FALSE(nothing.complete());
}

}  // namespace
}  // namespace quick::bench
