// Unit tests (no database) for the header-only utilities: RetryDelay, BlockingQueue, StopSignal,
// OncePerKey.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "util/blocking_queue.h"
#include "util/once_per_key.h"
#include "util/retry_delay.h"
#include "util/stop_signal.h"

namespace quick::util {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

void expect_jittered(milliseconds actual, long long base) {
  EXPECT_GE(actual.count(), base * 3 / 4) << "base " << base;
  EXPECT_LE(actual.count(), base * 5 / 4) << "base " << base;
}

TEST(RetryDelay, ExponentialWithJitterCappedAtMax) {
  RetryDelay delay(milliseconds(100), milliseconds(1000));
  expect_jittered(delay.next(), 100);
  expect_jittered(delay.next(), 200);
  expect_jittered(delay.next(), 400);
  expect_jittered(delay.next(), 800);
  expect_jittered(delay.next(), 1000);
  for (int i = 0; i < 50; ++i) expect_jittered(delay.next(), 1000);
}

TEST(RetryDelay, ResetStartsOver) {
  RetryDelay delay(milliseconds(100), milliseconds(10000));
  for (int i = 0; i < 6; ++i) delay.next();
  delay.reset();
  expect_jittered(delay.next(), 100);
  expect_jittered(delay.next(), 200);
}

TEST(RetryDelay, JitterSpreadsBothWays) {
  RetryDelay delay(milliseconds(1000), milliseconds(1000));
  int below = 0, above = 0;
  for (int i = 0; i < 400; ++i) {
    const auto d = delay.next();
    expect_jittered(d, 1000);
    if (d < milliseconds(950)) ++below;
    if (d > milliseconds(1050)) ++above;
  }
  EXPECT_GT(below, 50);
  EXPECT_GT(above, 50);
}

TEST(RetryDelay, MaxBelowInitialIsRaisedToInitial) {
  RetryDelay delay(milliseconds(500), milliseconds(100));
  for (int i = 0; i < 5; ++i) expect_jittered(delay.next(), 500);
}

TEST(RetryDelay, HugeMaxDoesNotOverflow) {
  RetryDelay delay(milliseconds(10), milliseconds(std::chrono::hours(24 * 365)));
  for (int i = 0; i < 200; ++i) {
    const auto d = delay.next();
    EXPECT_GT(d.count(), 0);
    EXPECT_LE(d, milliseconds(std::chrono::hours(24 * 365)) * 5 / 4);
  }
}

TEST(BlockingQueue, FifoAndSize) {
  BlockingQueue<int> queue;
  queue.push(1);
  queue.push(2);
  queue.push(3);
  EXPECT_EQ(queue.size(), 3u);
  EXPECT_EQ(queue.pop(milliseconds(0)), 1);
  EXPECT_EQ(queue.pop(milliseconds(0)), 2);
  EXPECT_EQ(queue.pop(milliseconds(0)), 3);
  EXPECT_EQ(queue.size(), 0u);
}

TEST(BlockingQueue, PopTimesOut) {
  BlockingQueue<int> queue;
  const auto start = Clock::now();
  EXPECT_EQ(queue.pop(milliseconds(50)), std::nullopt);
  EXPECT_GE(Clock::now() - start, milliseconds(45));
  EXPECT_EQ(queue.pop(std::chrono::microseconds(100)), std::nullopt);  // other duration types
}

TEST(BlockingQueue, PopWakesOnPush) {
  BlockingQueue<std::string> queue;
  auto popped = std::async(std::launch::async, [&] { return queue.pop(milliseconds(5000)); });
  std::this_thread::sleep_for(milliseconds(30));
  const auto start = Clock::now();
  queue.push("hello");
  EXPECT_EQ(popped.get(), "hello");
  EXPECT_LT(Clock::now() - start, milliseconds(2000));
}

TEST(BlockingQueue, CloseWakesAllWaiters) {
  BlockingQueue<int> queue;
  std::vector<std::future<std::optional<int>>> waiters;
  for (int i = 0; i < 3; ++i) {
    waiters.push_back(std::async(std::launch::async, [&] { return queue.pop(milliseconds(10000)); }));
  }
  std::this_thread::sleep_for(milliseconds(30));
  const auto start = Clock::now();
  queue.close();
  for (auto& w : waiters) EXPECT_EQ(w.get(), std::nullopt);
  EXPECT_LT(Clock::now() - start, milliseconds(2000));
  EXPECT_TRUE(queue.closed());
}

TEST(BlockingQueue, ClosedQueueDrainsThenReturnsEmptyWithoutWaiting) {
  BlockingQueue<int> queue;
  queue.push(7);
  queue.close();
  EXPECT_EQ(queue.pop(milliseconds(0)), 7);
  const auto start = Clock::now();
  EXPECT_EQ(queue.pop(milliseconds(5000)), std::nullopt);
  EXPECT_LT(Clock::now() - start, milliseconds(1000));
}

TEST(BlockingQueue, TakeAll) {
  BlockingQueue<int> queue;
  EXPECT_TRUE(queue.take_all().empty());
  for (int i = 0; i < 5; ++i) queue.push(i);
  const auto all = queue.take_all();
  EXPECT_EQ(std::vector<int>(all.begin(), all.end()), (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(queue.size(), 0u);
  EXPECT_EQ(queue.pop(milliseconds(0)), std::nullopt);
}

TEST(BlockingQueue, MoveOnlyValues) {
  BlockingQueue<std::unique_ptr<int>> queue;
  queue.push(std::make_unique<int>(5));
  auto value = queue.pop(milliseconds(0));
  ASSERT_TRUE(value && *value);
  EXPECT_EQ(**value, 5);
}

TEST(BlockingQueue, ConcurrentProducersAndConsumers) {
  BlockingQueue<int> queue;
  constexpr int kProducers = 3, kPerProducer = 5000;
  std::atomic<long long> sum{0};
  std::atomic<int> count{0};
  std::vector<std::thread> threads;
  for (int p = 0; p < kProducers; ++p) {
    threads.emplace_back([&, p] {
      for (int i = 0; i < kPerProducer; ++i) queue.push(p * kPerProducer + i);
    });
  }
  for (int c = 0; c < 2; ++c) {
    threads.emplace_back([&] {
      const auto give_up = Clock::now() + std::chrono::seconds(20);
      while (count.load() < kProducers * kPerProducer && Clock::now() < give_up) {
        if (auto v = queue.pop(milliseconds(20))) {
          sum += *v;
          ++count;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  const long long n = kProducers * kPerProducer;
  EXPECT_EQ(count.load(), n);
  EXPECT_EQ(sum.load(), n * (n - 1) / 2);
}

TEST(StopSignal, WaitForTimesOutWithoutRequest) {
  StopSignal stop;
  EXPECT_FALSE(stop.requested());
  const auto start = Clock::now();
  EXPECT_FALSE(stop.wait_for(milliseconds(50)));
  EXPECT_GE(Clock::now() - start, milliseconds(45));
}

TEST(StopSignal, WaitForReturnsEarlyOnRequest) {
  StopSignal stop;
  const auto start = Clock::now();
  auto waited = std::async(std::launch::async, [&] { return stop.wait_for(std::chrono::seconds(10)); });
  std::this_thread::sleep_for(milliseconds(30));
  stop.request();
  EXPECT_TRUE(waited.get());
  EXPECT_LT(Clock::now() - start, milliseconds(3000));
  EXPECT_TRUE(stop.requested());
}

TEST(StopSignal, WakesAllWaiters) {
  StopSignal stop;
  std::vector<std::future<bool>> waiters;
  for (int i = 0; i < 4; ++i) {
    waiters.push_back(std::async(std::launch::async, [&] { return stop.wait_for(std::chrono::seconds(10)); }));
  }
  std::this_thread::sleep_for(milliseconds(30));
  const auto start = Clock::now();
  stop.request();
  for (auto& w : waiters) EXPECT_TRUE(w.get());
  EXPECT_LT(Clock::now() - start, milliseconds(3000));
}

TEST(StopSignal, AlreadyRequestedReturnsImmediately) {
  StopSignal stop;
  stop.request();
  stop.request();  // idempotent
  const auto start = Clock::now();
  EXPECT_TRUE(stop.wait_for(std::chrono::seconds(10)));
  EXPECT_TRUE(stop.wait_for(milliseconds(0)));
  EXPECT_LT(Clock::now() - start, milliseconds(1000));
}

TEST(OncePerKey, FirstTimeIsTrueOncePerKeyEvenFromManyThreads) {
  OncePerKey once;
  EXPECT_TRUE(once.first_time("a"));
  EXPECT_FALSE(once.first_time("a"));
  EXPECT_TRUE(once.first_time("b"));
  std::atomic<int> firsts{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 100; ++i) firsts += once.first_time("shared") ? 1 : 0;
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(firsts.load(), 1);
  EXPECT_FALSE(once.first_time("b"));
}

}  // namespace
}  // namespace quick::util
