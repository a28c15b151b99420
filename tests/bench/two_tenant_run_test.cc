// A noisy_neighbour or long_jobs run that broke (B's jobs not all sent or not all started, the
// queue's database errors, A's backlog used up during B's window) must not pass for a good one:
// B's p99 was taken over the B jobs that started, so a job that never ran vanished from it, and
// errors only lowered A's throughput (bench/support/two_tenant_run.h).
#include <gtest/gtest.h>

#include "support/two_tenant_run.h"

namespace quick::bench {
namespace {

TwoTenantRun good_run() {
  TwoTenantRun run;
  run.system = "quick-pg";
  run.connections = 4;
  run.b_jobs = 20;
  run.b_sent = 20;
  run.b.count = 20;
  run.b.p99_ms = 8;
  run.a_in_window = 1500;
  run.window_s = 2;
  return run;
}

TEST(TwoTenantRunTest, AGoodRunIsComplete) {
  EXPECT_TRUE(good_run().complete());
  EXPECT_EQ(good_run().problems(), "");
}

TEST(TwoTenantRunTest, ARunWithAAloneIsCompleteWithoutBJobs) {
  TwoTenantRun alone = good_run();
  alone.b_jobs = alone.b_sent = 0;
  alone.b = Percentiles{};
  EXPECT_TRUE(alone.complete()) << alone.problems();
}

TEST(TwoTenantRunTest, ABJobThatNeverStartedMakesItIncomplete) {
  TwoTenantRun run = good_run();
  run.b.count = 19;  // its p99 is over the 19 that started
  EXPECT_FALSE(run.complete());
  EXPECT_NE(run.problems().find("1 of B's 20 jobs never started"), std::string::npos) << run.problems();
}

TEST(TwoTenantRunTest, ABJobNotSentMakesItIncomplete) {
  TwoTenantRun run = good_run();
  run.b_sent = 18;
  run.b.count = 18;
  run.b_send_error = "connection lost";
  EXPECT_FALSE(run.complete());
  EXPECT_NE(run.problems().find("2 of B's 20 jobs not sent (connection lost)"), std::string::npos) << run.problems();
}

TEST(TwoTenantRunTest, DatabaseErrorsMakeItIncomplete) {
  TwoTenantRun run = good_run();
  run.errors = 3;
  EXPECT_FALSE(run.complete());
  EXPECT_NE(run.problems().find("3 database errors"), std::string::npos) << run.problems();
}

TEST(TwoTenantRunTest, ABacklogUsedUpDuringTheWindowMakesItIncomplete) {
  TwoTenantRun run = good_run();
  run.a_ran_out = true;
  EXPECT_FALSE(run.complete());
  EXPECT_NE(run.problems().find("A's backlog"), std::string::npos) << run.problems();
  TwoTenantRun idle = good_run();
  idle.a_in_window = 0;
  EXPECT_FALSE(idle.complete());
}

TEST(TwoTenantRunTest, TheTableMarksAnIncompleteRun) {
  TwoTenantRun run = good_run();
  EXPECT_EQ(run.label(), "quick-pg");
  run.errors = 1;
  EXPECT_EQ(run.label(), "quick-pg **(INCOMPLETE: 1 database errors)**");
}

}  // namespace
}  // namespace quick::bench
