// The interleaving harness itself (tests/support/interleaving.h): the protocol tests are only as
// good as its bookkeeping of blocked, failed and skipped steps.
#include <gtest/gtest.h>

#include <chrono>
#include <set>

#include "support/interleaving.h"
#include "support/test_database.h"

namespace quick {
namespace {

using testing::all_interleavings;
using testing::fixed_step;
using testing::HarnessOptions;
using testing::InterleavingHarness;
using testing::SessionScript;

TEST(AllInterleavings, AreEveryDistinctMergeOfTheSessionsStepLists) {
  const auto two = all_interleavings({4, 4});
  EXPECT_EQ(two.size(), 70u);
  EXPECT_EQ(std::set<std::vector<int>>(two.begin(), two.end()).size(), 70u);
  EXPECT_EQ(two.front(), (std::vector<int>{0, 0, 0, 0, 1, 1, 1, 1}));
  EXPECT_EQ(two.back(), (std::vector<int>{1, 1, 1, 1, 0, 0, 0, 0}));
  EXPECT_EQ(all_interleavings({3, 2, 3}).size(), 560u);
  EXPECT_EQ(all_interleavings({2}).size(), 1u);
}

class InterleavingHarnessTest : public testing::DatabaseTest {
 protected:
  void SetUp() override {
    DatabaseTest::SetUp();
    if (HasFatalFailure()) return;
    query("CREATE TABLE cell (id int PRIMARY KEY, v int NOT NULL); INSERT INTO cell VALUES (1, 0)");
  }
};

TEST_F(InterleavingHarnessTest, ABlockedStepIsRecordedAndItsSessionsLaterStepsWaitUntilItUnblocks) {
  InterleavingHarness harness(url(), 2);
  const std::vector<SessionScript> scripts = {
      {"A", {fixed_step("A1", "BEGIN; UPDATE cell SET v = 1 WHERE id = 1"), fixed_step("A2", "COMMIT")}},
      {"B",
       {fixed_step("B1", "BEGIN; UPDATE cell SET v = v + 10 WHERE id = 1"),
        fixed_step("B2", "SELECT v FROM cell WHERE id = 1"), fixed_step("B3", "COMMIT")}}};
  // Asked for A1 B1 B2 A2 B3: B1 waits for A's row lock, so B2 is deferred until A2 frees it.
  const auto run = harness.run(scripts, {0, 1, 1, 0, 1});
  EXPECT_FALSE(run.hung);
  EXPECT_TRUE(run.at(1, 0).blocked);
  EXPECT_TRUE(run.at(1, 0).ok());
  EXPECT_FALSE(run.at(0, 0).blocked);
  EXPECT_EQ(run.at(1, 1).value(), std::optional<std::string>("11")) << run.trace();
  EXPECT_EQ(run.blocked_steps(), 1);
  const std::vector<std::pair<int, int>> sent = {{0, 0}, {1, 0}, {0, 1}, {1, 1}, {1, 2}};
  EXPECT_EQ(run.order, sent) << run.trace();
}

TEST_F(InterleavingHarnessTest, AFailedStepRollsBackItsSessionAndSkipsItsRemainingSteps) {
  InterleavingHarness harness(url(), 2);
  const std::vector<SessionScript> scripts = {
      {"A",
       {fixed_step("A1", "BEGIN; UPDATE cell SET v = 5 WHERE id = 1"), fixed_step("A2", "SELECT 1 / 0"),
        fixed_step("A3", "COMMIT")}},
      {"B", {fixed_step("B1", "UPDATE cell SET v = v + 1 WHERE id = 1 RETURNING v")}}};
  const auto run = harness.run(scripts, {0, 0, 1, 0});
  EXPECT_EQ(run.at(0, 1).sqlstate, "22012");
  EXPECT_EQ(run.at(0, 2).status, testing::StepOutcome::Status::kSkipped);
  // The rollback released A's row lock: B neither waits nor sees A's update.
  EXPECT_FALSE(run.at(1, 0).blocked);
  EXPECT_EQ(run.at(1, 0).value(), std::optional<std::string>("1"));
  // The sessions are reusable: nothing is left open.
  const auto again = harness.run_serially({{"A", {fixed_step("A1", "SELECT v FROM cell WHERE id = 1")}}});
  EXPECT_EQ(again.at(0, 0).value(), std::optional<std::string>("1"));
}

TEST_F(InterleavingHarnessTest, SerializationFailuresAreReportedAs40001) {
  InterleavingHarness harness(url(), 2);
  const std::vector<SessionScript> scripts = {
      {"A",
       {fixed_step("A1", "BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT v FROM cell WHERE id = 1"),
        fixed_step("A2", "UPDATE cell SET v = 4 WHERE id = 1"), fixed_step("A3", "COMMIT")}},
      {"B", {fixed_step("B1", "UPDATE cell SET v = 3 WHERE id = 1")}}};
  const auto run = harness.run(scripts, {0, 1, 0, 0});
  ASSERT_NE(run.failure(0), nullptr) << run.trace();
  EXPECT_EQ(run.failure(0)->sqlstate, "40001");
  EXPECT_EQ(run.at(0, 2).status, testing::StepOutcome::Status::kSkipped);
}

TEST_F(InterleavingHarnessTest, AStepThatCanNeverUnblockIsCancelledInsteadOfHanging) {
  HarnessOptions options;
  options.hard_step_limit = std::chrono::milliseconds{300};
  InterleavingHarness harness(url(), 2, options);
  // A never ends its transaction, so B can only wait: the harness must cancel B and finish.
  const std::vector<SessionScript> scripts = {{"A", {fixed_step("A1", "BEGIN; UPDATE cell SET v = 1 WHERE id = 1")}},
                                              {"B", {fixed_step("B1", "UPDATE cell SET v = 2 WHERE id = 1")}}};
  const auto started = std::chrono::steady_clock::now();
  const auto run = harness.run(scripts, {0, 1});
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds{4});
  EXPECT_TRUE(run.hung);
  ASSERT_NE(run.failure(1), nullptr);
  EXPECT_EQ(run.failure(1)->sqlstate, "57014");  // query_canceled
  EXPECT_EQ(query_value<int>("SELECT v FROM cell WHERE id = 1"), 0) << "A was rolled back";
}

}  // namespace
}  // namespace quick
