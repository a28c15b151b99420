// Visits that run past p_duration (src/core/visit_size_limit.h): a consumer whose visits the
// database cancels at p_duration takes fewer zones per visit until they fit, so it goes on
// draining instead of retrying the same visit forever; once the database is fast again, the
// visits grow back. Real consumer, real database: a trigger makes every item lease take 10 ms,
// so a visit of 100 zones (one item each) needs 1 s against a p_duration of 300 ms.
#include <gtest/gtest.h>

#include <iostream>

#include "quick/consumer.h"
#include "support/consumer_helpers.h"
#include "support/eventually.h"
#include "support/test_database.h"

namespace quick {
namespace {

using namespace testing;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr int kZones = 100;

class SlowVisitsTest : public testing::DatabaseTest {
 protected:
  void make_leases_slow() const {
    query(
        "CREATE FUNCTION public.slow_lease() RETURNS trigger LANGUAGE plpgsql AS "
        "$$ BEGIN PERFORM pg_sleep(0.01); RETURN NEW; END $$");
    query(
        "CREATE TRIGGER slow_lease BEFORE UPDATE ON quick.items FOR EACH ROW EXECUTE FUNCTION "
        "public.slow_lease()");
  }
  int queued() const { return query_value<int>("SELECT count(*) FROM quick.items"); }
};

TEST_F(SlowVisitsTest, VisitsCancelledAtPDurationShrinkUntilTheyFitAndGrowBackOnceFast) {
  make_leases_slow();
  auto config = fast_config(url(), "slow-visits");
  config.manager.p_duration = milliseconds(300);
  config.manager.pointers_per_batch = kZones;
  config.manager.pointers_per_batch_alone = 0;
  config.scanner.selection_frac = 1.0;  // every scan selects every vested zone: visits of kZones
  Consumer consumer(config);
  consumer.handle("work", [](JobContext&) { return JobResult::done(); });
  consumer.start();
  enqueue_items(url(), kZones, kZones, "work", "z");
  ASSERT_TRUE(eventually([&] { return queued() == 0; }, seconds(60)))
      << queued() << " items left: the visits made no progress";
  const auto slow = consumer.stats();
  std::cout << slow.to_string() << std::endl;
  EXPECT_LT(slow.pointers_per_visit, static_cast<std::uint64_t>(kZones));
  EXPECT_GE(slow.pointers_per_visit, 1u);

  // Fast again: rounds of one item per zone until visits take every zone at once again.
  query("DROP TRIGGER slow_lease ON quick.items");
  ASSERT_TRUE(eventually(
      [&] {
        enqueue_items(url(), kZones, kZones, "work", "z");
        EXPECT_TRUE(eventually([&] { return queued() == 0; }, seconds(30)));
        return consumer.stats().pointers_per_visit == static_cast<std::uint64_t>(kZones);
      },
      seconds(60)))
      << "visits did not grow back: " << consumer.stats().to_string();
  consumer.stop();
}

}  // namespace
}  // namespace quick
