// Unit tests (no database) for core::WorkQueue: fairness across zones, FIFO within a zone, the
// held-item accounting, drain/close, and the waiting operations.
#include "core/work_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace quick::core {
namespace {

using core::HeldItem;
using core::HeldItemPtr;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

HeldItemPtr make_item(int database, const std::string& tenant, std::int64_t id, const std::string& job_type = "job") {
  auto item = std::make_shared<HeldItem>();
  item->database = database;
  item->item.tenant = tenant;
  item->item.id = id;
  item->item.job_type = job_type;
  item->dequeued_at = Clock::now();
  return item;
}

std::vector<HeldItemPtr> zone_items(int database, const std::string& tenant, int first_id, int count,
                                    const std::string& job_type = "job") {
  std::vector<HeldItemPtr> items;
  for (int i = 0; i < count; ++i) items.push_back(make_item(database, tenant, first_id + i, job_type));
  return items;
}

TEST(WorkQueue, SingleItemOfAnotherZoneComesSecondNotLast) {
  WorkQueue queue;
  queue.push(zone_items(0, "A", 1, 100));
  queue.push({make_item(0, "B", 1000)});
  auto first = queue.pop(milliseconds(0));
  auto second = queue.pop(milliseconds(0));
  ASSERT_TRUE(first && second);
  EXPECT_EQ(first->item.tenant, "A");
  EXPECT_EQ(second->item.tenant, "B");
  EXPECT_EQ(second->item.id, 1000);
}

TEST(WorkQueue, SingleItemOfAnotherZoneInTheSamePushComesSecond) {
  WorkQueue queue;
  auto items = zone_items(0, "A", 1, 100);
  items.push_back(make_item(0, "B", 1000));
  queue.push(std::move(items));
  queue.pop(milliseconds(0));
  auto second = queue.pop(milliseconds(0));
  ASSERT_TRUE(second);
  EXPECT_EQ(second->item.tenant, "B");
}

TEST(WorkQueue, SameTenantInDifferentDatabasesIsTwoZones) {
  WorkQueue queue;
  queue.push(zone_items(0, "A", 1, 10));
  queue.push({make_item(1, "A", 1000)});
  EXPECT_EQ(queue.pop(milliseconds(0))->database, 0);
  EXPECT_EQ(queue.pop(milliseconds(0))->database, 1);
}

TEST(WorkQueue, RoundRobinAcrossThreeZonesAndFifoWithinEach) {
  WorkQueue queue;
  queue.push(zone_items(0, "A", 0, 4));
  queue.push(zone_items(0, "B", 100, 2));
  queue.push(zone_items(0, "C", 200, 3));
  std::vector<std::int64_t> order;
  while (auto item = queue.pop(milliseconds(0))) order.push_back(item->item.id);
  EXPECT_EQ(order, (std::vector<std::int64_t>{0, 100, 200, 1, 101, 201, 2, 202, 3}));
}

TEST(WorkQueue, FifoWithinAZone) {
  WorkQueue queue;
  queue.push(zone_items(0, "A", 0, 5));
  queue.push(zone_items(0, "A", 5, 5));
  for (int i = 0; i < 10; ++i) {
    auto item = queue.pop(milliseconds(0));
    ASSERT_TRUE(item);
    EXPECT_EQ(item->item.id, i);
  }
  EXPECT_EQ(queue.pop(milliseconds(0)), nullptr);
}

TEST(WorkQueue, ZoneThatEmptiedAndRefilledRejoinsAtTheBack) {
  WorkQueue queue;
  queue.push({make_item(0, "A", 1)});
  queue.push(zone_items(0, "B", 10, 2));
  EXPECT_EQ(queue.pop(milliseconds(0))->item.id, 1);  // A empties
  queue.push({make_item(0, "A", 2)});                 // A rejoins behind B
  EXPECT_EQ(queue.pop(milliseconds(0))->item.id, 10);
  EXPECT_EQ(queue.pop(milliseconds(0))->item.id, 2);
  EXPECT_EQ(queue.pop(milliseconds(0))->item.id, 11);
}

TEST(WorkQueue, HeldOfTypeCountsBufferedAndRunningUntilFinished) {
  WorkQueue queue;
  queue.push(zone_items(0, "A", 0, 3, "email"));
  queue.push(zone_items(0, "B", 10, 2, "sms"));
  EXPECT_EQ(queue.held_of_type("email"), 3);
  EXPECT_EQ(queue.held_of_type("sms"), 2);
  EXPECT_EQ(queue.held_of_type("other"), 0);
  EXPECT_EQ(queue.held(), 5u);
  EXPECT_EQ(queue.buffered(), 5u);

  auto running = queue.pop(milliseconds(0));
  ASSERT_TRUE(running);
  EXPECT_EQ(running->item.job_type, "email");
  EXPECT_EQ(queue.buffered(), 4u);
  EXPECT_EQ(queue.held(), 5u);
  EXPECT_EQ(queue.held_of_type("email"), 3);  // still held while it runs

  queue.finished(running);
  EXPECT_EQ(queue.held_of_type("email"), 2);
  EXPECT_EQ(queue.held(), 4u);
}

TEST(WorkQueue, DrainEmptiesTheBufferButItemsStayHeldUntilFinished) {
  WorkQueue queue;
  queue.push(zone_items(0, "A", 0, 3, "email"));
  queue.push(zone_items(1, "B", 10, 2, "sms"));
  auto drained = queue.drain();
  EXPECT_EQ(drained.size(), 5u);
  EXPECT_EQ(queue.buffered(), 0u);
  EXPECT_EQ(queue.held(), 5u);
  EXPECT_EQ(queue.held_of_type("email"), 3);
  EXPECT_EQ(queue.held_of_type("sms"), 2);
  EXPECT_EQ(queue.pop(milliseconds(0)), nullptr);
  for (const auto& item : drained) {
    ASSERT_TRUE(item);
    queue.finished(item);
  }
  EXPECT_EQ(queue.held(), 0u);
  EXPECT_EQ(queue.held_of_type("email"), 0);
  EXPECT_EQ(queue.held_of_type("sms"), 0);

  // Usable afterwards.
  queue.push({make_item(0, "A", 99)});
  EXPECT_EQ(queue.pop(milliseconds(0))->item.id, 99);
}

TEST(WorkQueue, PopTimesOutWhenEmpty) {
  WorkQueue queue;
  const auto start = Clock::now();
  EXPECT_EQ(queue.pop(milliseconds(50)), nullptr);
  const auto elapsed = Clock::now() - start;
  EXPECT_GE(elapsed, milliseconds(45));
  EXPECT_LT(elapsed, milliseconds(2000));
}

TEST(WorkQueue, PopWakesWhenAnItemIsPushed) {
  WorkQueue queue;
  auto popped = std::async(std::launch::async, [&] { return queue.pop(milliseconds(5000)); });
  std::this_thread::sleep_for(milliseconds(30));
  const auto start = Clock::now();
  queue.push({make_item(0, "A", 7)});
  auto item = popped.get();
  ASSERT_TRUE(item);
  EXPECT_EQ(item->item.id, 7);
  EXPECT_LT(Clock::now() - start, milliseconds(2000));
}

TEST(WorkQueue, CloseWakesWaitersAndPopReturnsNull) {
  WorkQueue queue;
  std::vector<std::future<HeldItemPtr>> waiters;
  for (int i = 0; i < 3; ++i) {
    waiters.push_back(std::async(std::launch::async, [&] { return queue.pop(milliseconds(10000)); }));
  }
  std::this_thread::sleep_for(milliseconds(30));
  const auto start = Clock::now();
  queue.close();
  for (auto& w : waiters) EXPECT_EQ(w.get(), nullptr);
  EXPECT_LT(Clock::now() - start, milliseconds(2000));
  EXPECT_TRUE(queue.closed());
}

TEST(WorkQueue, AfterCloseBufferedItemsAreStillHandedOutThenNull) {
  WorkQueue queue;
  queue.push(zone_items(0, "A", 0, 2));
  queue.close();
  EXPECT_NE(queue.pop(milliseconds(0)), nullptr);
  EXPECT_NE(queue.pop(milliseconds(0)), nullptr);
  const auto start = Clock::now();
  EXPECT_EQ(queue.pop(milliseconds(5000)), nullptr);
  EXPECT_LT(Clock::now() - start, milliseconds(1000));  // closed: no waiting
}

TEST(WorkQueue, WaitForRoom) {
  WorkQueue queue;
  EXPECT_TRUE(queue.wait_for_room(1, milliseconds(0)));
  queue.push(zone_items(0, "A", 0, 3));
  EXPECT_TRUE(queue.wait_for_room(4, milliseconds(0)));
  const auto start = Clock::now();
  EXPECT_FALSE(queue.wait_for_room(3, milliseconds(50)));
  EXPECT_GE(Clock::now() - start, milliseconds(45));

  auto room = std::async(std::launch::async, [&] { return queue.wait_for_room(3, milliseconds(5000)); });
  std::this_thread::sleep_for(milliseconds(30));
  queue.pop(milliseconds(0));
  EXPECT_TRUE(room.get());
}

TEST(WorkQueue, WaitForRoomWakesOnDrain) {
  WorkQueue queue;
  queue.push(zone_items(0, "A", 0, 3));
  auto room = std::async(std::launch::async, [&] { return queue.wait_for_room(1, milliseconds(5000)); });
  std::this_thread::sleep_for(milliseconds(30));
  const auto start = Clock::now();
  queue.drain();
  EXPECT_TRUE(room.get());
  EXPECT_LT(Clock::now() - start, milliseconds(2000));
}

TEST(WorkQueue, WaitForRoomReturnsFalseOnceClosed) {
  WorkQueue queue;
  queue.push(zone_items(0, "A", 0, 3));
  auto room = std::async(std::launch::async, [&] { return queue.wait_for_room(1, milliseconds(10000)); });
  std::this_thread::sleep_for(milliseconds(30));
  const auto start = Clock::now();
  queue.close();
  EXPECT_FALSE(room.get());
  EXPECT_LT(Clock::now() - start, milliseconds(2000));
  EXPECT_FALSE(queue.wait_for_room(100, milliseconds(0)));
}

TEST(WorkQueue, ConcurrentProducersAndConsumersLoseNothing) {
  WorkQueue queue;
  constexpr int kProducers = 3, kPerProducer = 2000, kConsumers = 3;
  std::atomic<int> popped{0};
  std::vector<std::thread> threads;
  for (int p = 0; p < kProducers; ++p) {
    threads.emplace_back([&, p] {
      for (int i = 0; i < kPerProducer; i += 10) {
        queue.push(zone_items(p % 2, "t" + std::to_string(i % 7), p * kPerProducer + i, 10));
      }
    });
  }
  for (int c = 0; c < kConsumers; ++c) {
    threads.emplace_back([&] {
      const auto give_up = Clock::now() + std::chrono::seconds(20);
      while (popped.load() < kProducers * kPerProducer && Clock::now() < give_up) {
        if (auto item = queue.pop(milliseconds(20))) {
          queue.finished(item);
          ++popped;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(popped.load(), kProducers * kPerProducer);
  EXPECT_EQ(queue.held(), 0u);
  EXPECT_EQ(queue.buffered(), 0u);
  EXPECT_EQ(queue.held_of_type("job"), 0);
}

// The shares by processing time. A run is simulated by moving the item's popped_at back before
// finished(): the queue measures pop -> finished() on the steady clock.
void run_for(WorkQueue& queue, const HeldItemPtr& item, std::chrono::microseconds took) {
  item->popped_at -= took;
  queue.finished(item);
}

// The queue classifies the zones every WorkQueue::kClassifyEvery: measurements count from then.
void until_classified() { std::this_thread::sleep_for(WorkQueue::kClassifyEvery + milliseconds(5)); }

// Zone A's items took 50 ms, zone B's 0.5 ms: with 4 Workers, A holds at most 3 while B is
// active, so B's next item finds a Worker free.
TEST(WorkQueueShares, ALongZoneLeavesTheLastWorkerToAShortOneActiveBesideIt) {
  WorkQueue queue;
  queue.set_workers(4);
  queue.push(zone_items(0, "A", 1, 20));
  queue.push(zone_items(0, "B", 100, 1));
  // Measure both: one run each.
  auto a = queue.pop(milliseconds(0));
  auto b = queue.pop(milliseconds(0));
  ASSERT_EQ(a->item.tenant, "A");
  ASSERT_EQ(b->item.tenant, "B");
  run_for(queue, a, milliseconds(50));
  run_for(queue, b, std::chrono::microseconds(500));
  until_classified();

  std::vector<HeldItemPtr> running;
  for (int i = 0; i < 3; ++i) running.push_back(queue.pop(milliseconds(0)));
  for (const auto& item : running) EXPECT_EQ(item->item.tenant, "A");
  EXPECT_EQ(queue.pop(milliseconds(20)), nullptr) << "A may not take the 4th Worker while B is active";

  queue.push(zone_items(0, "B", 101, 1));
  const auto next = queue.pop(milliseconds(0));
  ASSERT_NE(next, nullptr);
  EXPECT_EQ(next->item.tenant, "B") << "B's item gets the Worker A left free";

  // When one of A's items ends, A takes the freed Worker: it is held back only at 3 running.
  run_for(queue, running.back(), milliseconds(50));
  running.pop_back();
  const auto again = queue.pop(milliseconds(0));
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->item.tenant, "A");
}

TEST(WorkQueueShares, AZoneAloneOrAmongZonesOfSimilarLengthsTakesEveryWorker) {
  for (const bool with_similar_neighbour : {false, true}) {
    SCOPED_TRACE(with_similar_neighbour ? "beside a zone of similar lengths" : "alone");
    WorkQueue queue;
    queue.set_workers(4);
    queue.push(zone_items(0, "A", 1, 20));
    if (with_similar_neighbour) queue.push(zone_items(0, "C", 100, 1));
    auto a = queue.pop(milliseconds(0));
    ASSERT_EQ(a->item.tenant, "A");
    run_for(queue, a, milliseconds(50));
    if (with_similar_neighbour) {
      auto c = queue.pop(milliseconds(0));
      ASSERT_EQ(c->item.tenant, "C");
      run_for(queue, c, milliseconds(30));
    }
    until_classified();
    for (int i = 0; i < 4; ++i) {
      const auto item = queue.pop(milliseconds(0));
      ASSERT_NE(item, nullptr) << "worker " << i + 1;
      EXPECT_EQ(item->item.tenant, "A");
    }
  }
}

// Two Workers; zone A (`a_items` items, 40 ms each) and zone B (one item, 1 ms), each run once,
// measured and classified: A is long beside B.
void measure_long_a_beside_short_b(WorkQueue& queue, int a_items) {
  queue.set_workers(2);
  queue.push(zone_items(0, "A", 1, a_items));
  queue.push(zone_items(0, "B", 100, 1));
  auto a = queue.pop(milliseconds(0));
  auto b = queue.pop(milliseconds(0));
  run_for(queue, a, milliseconds(40));
  run_for(queue, b, milliseconds(1));
  until_classified();
}

TEST(WorkQueueShares, AHeldBackZoneTakesTheWorkerOnceTheOtherZoneIsIdleForAWindow) {
  WorkQueue queue;
  measure_long_a_beside_short_b(queue, 5);
  const auto b_finished = Clock::now();
  ASSERT_NE(queue.pop(milliseconds(0)), nullptr);
  EXPECT_EQ(queue.pop(milliseconds(10)), nullptr) << "A may not take the 2nd Worker while B is active";
  // B stays idle: a window after its last item, A may use both Workers again.
  const auto second = queue.pop(WorkQueue::kShareWindow + milliseconds(500));
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(second->item.tenant, "A");
  EXPECT_GE(Clock::now() - b_finished, WorkQueue::kShareWindow);
}

// Two long zones cannot share out every Worker between them: together they hold all but one.
TEST(WorkQueueShares, LongZonesTogetherLeaveTheLastWorkerToAShortOne) {
  WorkQueue queue;
  queue.set_workers(4);
  queue.push(zone_items(0, "A1", 1, 10));
  queue.push(zone_items(0, "A2", 100, 10));
  queue.push(zone_items(0, "B", 200, 1));
  for (const char* zone : {"A1", "A2", "B"}) {  // measure each once
    auto item = queue.pop(milliseconds(0));
    ASSERT_EQ(item->item.tenant, zone);
    run_for(queue, item, std::string(zone) == "B" ? std::chrono::microseconds(500) : milliseconds(50));
  }
  until_classified();
  std::vector<HeldItemPtr> running;
  for (int i = 0; i < 3; ++i) running.push_back(queue.pop(milliseconds(0)));
  for (const auto& item : running) ASSERT_NE(item, nullptr);
  EXPECT_EQ(queue.pop(milliseconds(20)), nullptr) << "A1 and A2 may not take the 4th Worker while B is active";
}

// Items that all end within a millisecond free their Workers soon: none is held back, however
// different their lengths (and a mean of 0 is no reason to hold anything back).
TEST(WorkQueueShares, ZonesOfShortItemsAreNeverHeldBack) {
  WorkQueue queue;
  queue.set_workers(2);
  queue.push(zone_items(0, "A", 1, 5));
  queue.push(zone_items(0, "B", 100, 5));
  auto a = queue.pop(milliseconds(0));
  auto b = queue.pop(milliseconds(0));
  run_for(queue, a, std::chrono::microseconds(800));
  run_for(queue, b, std::chrono::microseconds(0));
  until_classified();
  std::vector<HeldItemPtr> running;
  for (int i = 0; i < 2; ++i) {
    running.push_back(queue.pop(milliseconds(0)));
    ASSERT_NE(running.back(), nullptr) << "worker " << i + 1;
  }
}

TEST(WorkQueueShares, OnceClosedNothingIsHeldBack) {
  WorkQueue queue;
  measure_long_a_beside_short_b(queue, 3);
  ASSERT_NE(queue.pop(milliseconds(0)), nullptr);
  EXPECT_EQ(queue.pop(milliseconds(0)), nullptr);
  queue.close();
  EXPECT_NE(queue.pop(milliseconds(0)), nullptr);
}

}  // namespace
}  // namespace quick::core
