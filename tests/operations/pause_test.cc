// Pausing a tenant or a job type (quick.pause_tenant, quick.pause_job_type): a running consumer
// stops taking its items while enqueue still works, every zone keeps its pointer, a zone of paused
// items only is not revisited on every Scanner round, and a resume brings the items back at once.
// Bad names are in docs/bad-input.md, which tests/schema/bad_input_test.cc runs.
#include <gtest/gtest.h>

#include <atomic>
#include <string>

#include "quick/quick.h"
#include "support/consumer_helpers.h"
#include "support/eventually.h"
#include "support/items.h"
#include "support/test_database.h"

namespace quick::testing {
namespace {

class PauseTest : public DatabaseTest {
 protected:
  void SetUp() override {
    DatabaseTest::SetUp();
    consumer_ = std::make_unique<Consumer>(fast_config(url(), "pause-test"));
    for (const char* type : {"job", "report"}) {
      consumer_->handle(type, [this](JobContext& job) {
        runs_.record(job.item().id);
        return JobResult::done();
      });
    }
  }
  void TearDown() override {
    consumer_->stop();
    DatabaseTest::TearDown();
  }
  bool queued(std::int64_t id) const {
    return query_value<int>("SELECT count(*) FROM quick.items WHERE id = " + std::to_string(id)) == 1;
  }
  // Waits until the consumer has scanned `rounds` more times: long enough for it to have taken
  // anything it was going to take.
  void let_consumer_scan(std::uint64_t rounds) {
    const auto start = consumer_->stats().scans;
    ASSERT_TRUE(eventually([&] { return consumer_->stats().scans >= start + rounds; }, seconds(10)));
  }
  int orphaned_zones() const { return query_value<int>("SELECT count(*) FROM quick.orphaned_zones"); }

  std::unique_ptr<Consumer> consumer_;
  RunLog runs_;
};

TEST_F(PauseTest, APausedTenantWaitsWhileOthersRunAndRunsAtOnceWhenResumed) {
  EXPECT_TRUE(query_value<bool>("SELECT quick.pause_tenant('noisy', 'incident 42')"));
  EXPECT_FALSE(query_value<bool>("SELECT quick.pause_tenant('noisy')")) << "already paused";
  consumer_->start();
  auto conn = connect();
  const auto paused_item = enqueue_committed(*conn, make_item("noisy"));  // enqueue still works
  const auto other_item = enqueue_committed(*conn, make_item("quiet"));
  ASSERT_TRUE(eventually([&] { return !queued(other_item); }, seconds(10))) << "other tenants run";
  let_consumer_scan(20);
  EXPECT_TRUE(queued(paused_item));
  EXPECT_EQ(runs_.runs(paused_item), 0);
  EXPECT_EQ(query_value<std::string>("SELECT kind || ':' || name || ':' || reason FROM quick.paused"),
            "tenant:noisy:incident 42");
  EXPECT_TRUE(query_value<bool>("SELECT paused FROM quick.zone_depth WHERE tenant = 'noisy'"));
  EXPECT_EQ(orphaned_zones(), 0);

  // Paused for long: its pointer vested a minute ago, below the Scanner's floors
  // (docs/consumer.md#scanning-from-a-floor), and still runs at once, not at the next full scan.
  query("UPDATE quick.pointers SET vesting_time = now() - interval '1 minute' WHERE tenant = 'noisy'");
  EXPECT_TRUE(query_value<bool>("SELECT quick.resume_tenant('noisy')"));
  EXPECT_FALSE(query_value<bool>("SELECT quick.resume_tenant('noisy')")) << "not paused any more";
  EXPECT_TRUE(eventually([&] { return !queued(paused_item); }, seconds(3)));
  EXPECT_EQ(runs_.runs(paused_item), 1);
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.paused"), 0);
}

TEST_F(PauseTest, APausedJobTypeWaitsInEveryZoneWhoseOtherItemsRun) {
  EXPECT_TRUE(query_value<bool>("SELECT quick.pause_job_type('report')"));
  consumer_->start();
  auto conn = connect();
  const auto report = enqueue_committed(*conn, make_item("mixed", "report"));
  const auto job = enqueue_committed(*conn, make_item("mixed", "job"));
  const auto lone_report = enqueue_committed(*conn, make_item("reports-only", "report"));
  ASSERT_TRUE(eventually([&] { return !queued(job); }, seconds(10))) << "the zone's other job type runs";
  let_consumer_scan(20);
  EXPECT_TRUE(queued(report));
  EXPECT_TRUE(queued(lone_report));
  EXPECT_EQ(orphaned_zones(), 0) << "zones of paused items keep their pointers";
  EXPECT_TRUE(query_value<bool>("SELECT paused FROM quick.job_type_counts WHERE job_type = 'report'"));

  // Not revisited on every round: the pointers of zones holding paused items only are requeued for
  // max_pointer_lease (10 minutes by default), so visits stop while the Scanner keeps scanning.
  EXPECT_TRUE(eventually(
      [&] {
        return query_value<int>(
                   "SELECT count(*) FROM quick.pointers WHERE vesting_time > now() + interval '5 minutes'") == 2;
      },
      seconds(10)));
  const auto visits = consumer_->stats().visits;
  let_consumer_scan(20);
  EXPECT_EQ(consumer_->stats().visits, visits);

  // Another job type enqueued into such a zone pulls its pointer in as usual.
  const auto late_job = enqueue_committed(*conn, make_item("reports-only", "job"));
  EXPECT_TRUE(eventually([&] { return !queued(late_job); }, seconds(10)));
  EXPECT_TRUE(queued(lone_report));

  EXPECT_TRUE(query_value<bool>("SELECT quick.resume_job_type('report')"));
  EXPECT_TRUE(eventually([&] { return !queued(report) && !queued(lone_report); }, seconds(10)))
      << "the resume pulls the zones back at once, not after their requeue";
  EXPECT_EQ(orphaned_zones(), 0);
}

}  // namespace
}  // namespace quick::testing
