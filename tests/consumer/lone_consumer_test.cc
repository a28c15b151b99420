// Visit size by membership (src/scanner/visit_size.h): a consumer that is its database's only
// live consumer visits up to manager.pointers_per_batch_alone zones at a time; as soon as its
// membership read finds another consumer it goes back to manager.pointers_per_batch, and a
// consumer that joins a shared database never uses the bigger size. Real consumers, real
// database; membership reads every second (a third of a 3 s lease: a Scanner stalled for up to
// 2 s on a busy machine stays in the others' member list, as in partition_test.cc).
#include <gtest/gtest.h>

#include <iostream>
#include <memory>
#include <string>

#include "quick/consumer.h"
#include "support/consumer_helpers.h"
#include "support/eventually.h"
#include "support/processes.h"
#include "support/test_database.h"

namespace quick {
namespace {

using namespace testing;

constexpr int kShared = 2;  // pointers_per_batch
constexpr int kAlone = 8;   // pointers_per_batch_alone

class LoneConsumerTest : public testing::DatabaseTest {
 protected:
  ConsumerConfig config(const std::string& id) const {
    auto config = fast_config(url(), id);
    config.manager.pointers_per_batch = kShared;
    config.manager.pointers_per_batch_alone = kAlone;
    config.scanner.in_order_lease_duration = seconds(3);
    return config;
  }
  static std::unique_ptr<Consumer> started(ConsumerConfig config) {
    auto consumer = std::make_unique<Consumer>(std::move(config));
    consumer->handle("work", [](JobContext&) { return JobResult::done(); });
    consumer->start();
    return consumer;
  }
  bool queue_empty() const { return query_value<int>("SELECT count(*) FROM quick.items") == 0; }

  // Enqueues one item into each of 64 new zones in one transaction and waits until all ran;
  // returns the zones per visit the consumer used meanwhile.
  double zones_per_visit_draining(Consumer& consumer) {
    const auto before = consumer.stats();
    enqueue_items(url(), 64, 64, "work", "z");
    EXPECT_TRUE(eventually([&] { return queue_empty(); }, seconds(30)));
    const auto after = consumer.stats();
    std::cout << after.to_string() << std::endl;
    const auto visits = after.visits - before.visits;
    EXPECT_GT(visits, 0u);
    return visits == 0 ? 0
                       : static_cast<double>(after.pointer_lease_attempts - before.pointer_lease_attempts) /
                             static_cast<double>(visits);
  }
};

TEST_F(LoneConsumerTest, ALoneConsumerVisitsMoreZonesAtATime) {
  auto consumer = started(config("lone"));
  ASSERT_TRUE(eventually([&] { return consumer->stats().pointers_per_visit == kAlone; }, seconds(10)))
      << "pointers_per_visit stayed " << consumer->stats().pointers_per_visit;
  EXPECT_GT(zones_per_visit_draining(*consumer), static_cast<double>(kShared))
      << "no visit took more than pointers_per_batch zones";
}

TEST_F(LoneConsumerTest, WithTheAloneSizeOffVisitsKeepToPointersPerBatch) {
  auto lone = config("lone-off");
  lone.manager.pointers_per_batch_alone = 0;
  auto consumer = started(lone);
  ASSERT_TRUE(eventually(
      [&] { return consumer->stats().live_consumers == 1 && consumer->stats().pointers_per_visit > 0; }, seconds(10)));
  std::this_thread::sleep_for(milliseconds(2500));  // two membership reads and more
  EXPECT_EQ(consumer->stats().pointers_per_visit, static_cast<std::uint64_t>(kShared));
  EXPECT_LE(zones_per_visit_draining(*consumer), static_cast<double>(kShared));
}

// Without tenant partitioning there is no membership, so no consumer knows it is alone.
TEST_F(LoneConsumerTest, WithoutTheMembershipAConsumerNeverCountsAsAlone) {
  auto no_membership = config("no-membership");
  no_membership.scanner.partition_grace = milliseconds(0);
  auto consumer = started(no_membership);
  ASSERT_TRUE(eventually([&] { return consumer->stats().pointers_per_visit > 0; }, seconds(10)));
  std::this_thread::sleep_for(milliseconds(2500));
  EXPECT_EQ(consumer->stats().pointers_per_visit, static_cast<std::uint64_t>(kShared));
}

// A joins alone and takes the bigger size; B joins: B never takes it, and A gives it up at its
// next membership read. B stops cleanly (leaving the group): A takes it again.
TEST_F(LoneConsumerTest, ASecondConsumerEndsTheBiggerVisitsAndItsLeavingRestoresThem) {
  auto a = started(config("first"));
  ASSERT_TRUE(eventually([&] { return a->stats().pointers_per_visit == kAlone; }, seconds(10)));

  auto b = started(config("second"));
  std::uint64_t b_largest = 0;
  ASSERT_TRUE(eventually(
      [&] {
        b_largest = std::max(b_largest, b->stats().pointers_per_visit);
        return a->stats().pointers_per_visit == kShared && b->stats().pointers_per_visit == kShared;
      },
      seconds(10)))
      << "A: " << a->stats().pointers_per_visit << ", B: " << b->stats().pointers_per_visit;
  // Several more membership reads of both: B, which found A in its first read, stays shared.
  const auto until = Clock::now() + milliseconds(2500);
  while (Clock::now() < until) {
    b_largest = std::max(b_largest, b->stats().pointers_per_visit);
    EXPECT_EQ(a->stats().pointers_per_visit, static_cast<std::uint64_t>(kShared));
    std::this_thread::sleep_for(milliseconds(20));
  }
  EXPECT_EQ(b_largest, static_cast<std::uint64_t>(kShared))
      << "the consumer that joined a shared database took the alone size";

  b->stop();
  EXPECT_TRUE(eventually([&] { return a->stats().pointers_per_visit == kAlone; }, seconds(10)))
      << "A did not take the bigger size again after B left";
}

}  // namespace
}  // namespace quick
