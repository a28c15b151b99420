// Open-loop producers and latency from the due time (bench/support/scheduled_load.h), as the
// wake_up experiment uses them: a stall in one enqueue must show in the latency of every job due
// during it, not only in the stalled job's.
#include <chrono>
#include <stdexcept>
#include <thread>

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

}  // namespace
}  // namespace quick::bench
