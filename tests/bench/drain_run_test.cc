// A drain (many_tenants, one_tenant) that broke must not pass for a good one: a drain that timed
// out had 0 seconds, so 0 jobs/s, and quick-pg's ratio against a baseline that timed out was
// infinite and met its target; the queue's database errors (quick-pg's database_errors,
// BaselinePool::errors()) were never read (bench/support/drain_run.h).
#include <gtest/gtest.h>

#include "support/drain_run.h"
#include "support/results_folder.h"

namespace quick::bench {
namespace {

DrainRun good_run() {
  DrainRun run;
  run.system = "quick-pg";
  run.parallelism = 1;
  run.connections = 4;
  run.items = 3000;
  run.seconds = 0.5;
  return run;
}

TEST(DrainRunTest, AGoodRunIsComplete) {
  EXPECT_TRUE(good_run().complete());
  EXPECT_EQ(good_run().problems(), "");
  EXPECT_DOUBLE_EQ(good_run().jobs_per_second(), 6000);
}

TEST(DrainRunTest, ADrainThatTimedOutIsNot) {
  DrainRun run = good_run();
  run.timed_out = true;
  run.seconds = 0;
  EXPECT_FALSE(run.complete());
  EXPECT_NE(run.problems().find("timed out"), std::string::npos) << run.problems();
}

TEST(DrainRunTest, DatabaseErrorsMakeItIncomplete) {
  DrainRun run = good_run();
  run.errors = 2;
  EXPECT_FALSE(run.complete());
  EXPECT_EQ(run.problems(), "2 database errors");
  EXPECT_EQ(run.marked(fixed(run.jobs_per_second(), 0)), "6000 **(INCOMPLETE: 2 database errors)**");
}

TEST(DrainRunTest, ARatioIsMetOnlyWhenBothRunsAreComplete) {
  const DrainRun quick = good_run();
  DrainRun baseline = good_run();
  baseline.system = "baseline batch 10";
  EXPECT_TRUE(ratio_met(quick, baseline, 0.75));
  baseline.timed_out = true;
  baseline.seconds = 0;  // 0 jobs/s: the ratio is infinite
  EXPECT_FALSE(ratio_met(quick, baseline, 0.75));
  DrainRun slow = good_run();
  slow.seconds = 10;
  EXPECT_FALSE(ratio_met(slow, good_run(), 0.75));
}

}  // namespace
}  // namespace quick::bench
