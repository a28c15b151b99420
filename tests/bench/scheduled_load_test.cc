// Open-loop producers and latency from the due time (bench/support/scheduled_load.h), as the
// wake_up experiment uses them: a stall in one enqueue must show in the latency of every job due
// during it, not only in the stalled job's.
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "support/latency_recorder.h"
#include "support/scheduled_load.h"

namespace quick::bench {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

TEST(ScheduledLoadTest, ThePayloadCarriesTheDueTime) {
  const auto due = Clock::now();
  EXPECT_EQ(since_due(due_payload(due), due + 5ms), std::chrono::microseconds(5000));
  EXPECT_EQ(since_due(due_payload(due), due), std::chrono::microseconds(0));
  EXPECT_FALSE(since_due("{}", due).has_value());
  EXPECT_FALSE(since_due(R"({"n": 1})", due).has_value());
  EXPECT_FALSE(since_due("not json", due).has_value());
}

// One producer, 1,000 jobs/s for 0.5 s; its 20th enqueue stalls 100 ms (a commit waiting for the
// WAL flush), so the ~100 jobs due meanwhile go out late. Each job "runs" as soon as its enqueue
// returns. From the due time their latency shows the stall (p99 near 100 ms); from the enqueue's
// start, as the experiment measured before, only the stalled job did (p99 near 0).
TEST(ScheduledLoadTest, AStalledEnqueueDelaysTheJobsDueDuringIt) {
  LatencyRecorder from_due, from_send;
  int calls = 0;
  const ScheduleResult result = run_schedule(1, 1000, 0.5, [&](int) {
    return [&](Clock::time_point due) {
      const auto started = Clock::now();
      if (++calls == 20) std::this_thread::sleep_for(100ms);
      const auto handler_start = Clock::now();
      from_due.record(*since_due(due_payload(due), handler_start));
      from_send.record(std::chrono::duration_cast<std::chrono::microseconds>(handler_start - started));
    };
  });
  EXPECT_EQ(result.scheduled, 500);
  EXPECT_EQ(result.sent, 500);
  EXPECT_EQ(result.unsent, 0);
  EXPECT_GE(from_due.summary().p99_ms, 80) << "the jobs queued behind the stall waited too";
  EXPECT_GE(result.lag.p99_ms, 80) << "the producer fell behind its schedule";
  EXPECT_GE(result.lag.max_ms, 95);
  EXPECT_LT(from_send.summary().p99_ms, from_due.summary().p99_ms);
}

TEST(ScheduledLoadTest, FailedEnqueuesAreCountedNotDropped) {
  int calls = 0;
  const ScheduleResult result = run_schedule(1, 2000, 0.1, [&](int) {
    return [&](Clock::time_point) {
      if (++calls % 10 == 0) throw std::runtime_error("connection lost");
    };
  });
  EXPECT_EQ(result.scheduled, 200);
  EXPECT_EQ(result.sent, 180);
  EXPECT_EQ(result.unsent, 20);
  EXPECT_EQ(result.first_error, "connection lost");
}

TEST(ScheduledLoadTest, AProducerThatCannotStartLeavesItsShareUnsent) {
  const ScheduleResult result = run_schedule(2, 2000, 0.1, [](int producer) -> std::function<void(Clock::time_point)> {
    if (producer == 1) throw std::runtime_error("could not connect");
    return [](Clock::time_point) {};
  });
  EXPECT_EQ(result.scheduled, 200);
  EXPECT_EQ(result.sent, 100);
  EXPECT_EQ(result.unsent, 100);
  EXPECT_EQ(result.first_error, "could not connect");
}

// The batching producers (steady_load, windowed_load, fairness_skew): every 5 ms the jobs due
// since the last commit. A job due at k / rate goes out in the first tick at or after it.
TEST(ScheduledLoadTest, JobsGoOutInTheTickTheyAreDueBy) {
  EXPECT_EQ(due_by_tick(1000, 5ms, 0ms), 0);
  EXPECT_EQ(due_by_tick(1000, 5ms, 4ms), 0) << "no tick has come yet";
  EXPECT_EQ(due_by_tick(1000, 5ms, 5ms), 5);
  EXPECT_EQ(due_by_tick(1000, 5ms, 9ms), 5);
  EXPECT_EQ(due_by_tick(1000, 5ms, 10ms), 10);
  EXPECT_EQ(due_by_tick(100, 5ms, 1000ms), 100) << "the job due on the last tick is in it";
  EXPECT_EQ(due_by_tick(150, 5ms, 15ms), 2);
  EXPECT_EQ(due_by_tick(150, 5ms, 2000ms), 300);
}

// One batching producer, 1,000 jobs/s in 5 ms ticks for 0.3 s; its 5th commit stalls 100 ms. The
// next call takes every tick missed meanwhile, and the jobs of those ticks, counted from their
// tick, carry the stall; counted from the commit that sent them, as the steady-state producers
// measured before, they would not.
TEST(ScheduledLoadTest, ABatchingProducerBehindItsTicksCountsTheDelay) {
  const auto start = Clock::now();
  const auto end = start + 300ms;
  LatencyRecorder from_tick, from_send;
  std::vector<std::size_t> batch_sizes;
  long sent = 0;
  int calls = 0;
  LatencyRecorder lags;
  run_ticks(
      start, end, 5ms,
      [&](const std::vector<Clock::time_point>& ticks) {
        const auto send_start = Clock::now();
        if (++calls == 5) std::this_thread::sleep_for(100ms);
        const auto handler_start = Clock::now();
        batch_sizes.push_back(ticks.size());
        for (const auto tick : ticks) {
          const long due = due_by_tick(1000, 5ms, tick - start);
          for (; sent < due; ++sent) {
            from_tick.record(*since_due(due_payload(tick), handler_start));
            from_send.record(std::chrono::duration_cast<std::chrono::microseconds>(handler_start - send_start));
          }
        }
      },
      lags);
  const Percentiles lag = lags.summary();
  EXPECT_EQ(sent, 300) << "every job of the run went out";
  std::size_t ticks = 0;
  for (const auto size : batch_sizes) ticks += size;
  EXPECT_EQ(ticks, 60u);
  ASSERT_GT(batch_sizes.size(), 5u);
  EXPECT_GE(batch_sizes[5], 19u) << "the call after the stall took the ticks missed";
  EXPECT_GE(lag.max_ms, 95) << "the producer fell behind its ticks";
  EXPECT_EQ(lag.count, 60);
  // The ~100 jobs of the ticks missed: from their ticks most waited well over 20 ms; from the
  // commit only the stalled commit's own 5 did.
  const auto over_20ms = [](const LatencyRecorder& recorder) {
    long n = 0;
    for (const double ms : recorder.samples_ms()) n += ms >= 20 ? 1 : 0;
    return n;
  };
  EXPECT_GE(over_20ms(from_tick), 60) << "the jobs of the ticks missed waited too";
  EXPECT_LE(over_20ms(from_send), 10) << "from the commit, as measured before, they looked fast";
  EXPECT_GE(from_tick.summary().p99_ms, 80);
}

}  // namespace
}  // namespace quick::bench
