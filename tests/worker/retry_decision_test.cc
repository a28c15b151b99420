// Unit tests (no database) for worker::backoff_delay and worker::decide_after_failure.
#include "worker/retry_decision.h"

#include <gtest/gtest.h>

#include <chrono>
#include <limits>

namespace quick::worker {
namespace {

using std::chrono::milliseconds;
using std::chrono::microseconds;
using Kind = FailureDecision::Kind;

RetryPolicy no_jitter(milliseconds base, milliseconds max) {
  RetryPolicy policy;
  policy.backoff_base = base;
  policy.backoff_max = max;
  policy.backoff_jitter = 0;
  return policy;
}

TEST(BackoffDelay, DoublesPerErrorFromBase) {
  const auto policy = no_jitter(milliseconds(100), milliseconds(1000000));
  EXPECT_EQ(backoff_delay(policy, 0, 0.5), milliseconds(100));
  EXPECT_EQ(backoff_delay(policy, 1, 0.5), milliseconds(200));
  EXPECT_EQ(backoff_delay(policy, 2, 0.5), milliseconds(400));
  EXPECT_EQ(backoff_delay(policy, 5, 0.5), milliseconds(3200));
}

TEST(BackoffDelay, CappedAtMax) {
  const auto policy = no_jitter(milliseconds(100), milliseconds(1000));
  EXPECT_EQ(backoff_delay(policy, 3, 0.5), milliseconds(800));
  EXPECT_EQ(backoff_delay(policy, 4, 0.5), milliseconds(1000));
  EXPECT_EQ(backoff_delay(policy, 20, 0.5), milliseconds(1000));
}

TEST(BackoffDelay, NoOverflowForHugeErrorCounts) {
  const auto policy = no_jitter(milliseconds(1000), milliseconds(600000));
  EXPECT_EQ(backoff_delay(policy, 62, 0.5), milliseconds(600000));
  EXPECT_EQ(backoff_delay(policy, 63, 0.5), milliseconds(600000));
  EXPECT_EQ(backoff_delay(policy, 1000, 0.5), milliseconds(600000));
  EXPECT_EQ(backoff_delay(policy, std::numeric_limits<int>::max(), 0.5), milliseconds(600000));
  RetryPolicy jittered = policy;
  jittered.backoff_jitter = 1.0;
  EXPECT_EQ(backoff_delay(jittered, std::numeric_limits<int>::max(), 1.0), milliseconds(1200000));
  EXPECT_EQ(backoff_delay(jittered, std::numeric_limits<int>::max(), 0.0), milliseconds(0));
}

TEST(BackoffDelay, NegativeErrorCountIsTreatedAsZero) {
  const auto policy = no_jitter(milliseconds(100), milliseconds(1000));
  EXPECT_EQ(backoff_delay(policy, -5, 0.5), milliseconds(100));
}

TEST(BackoffDelay, JitterBounds) {
  RetryPolicy policy = no_jitter(milliseconds(1000), milliseconds(600000));
  policy.backoff_jitter = 0.2;
  EXPECT_EQ(backoff_delay(policy, 0, 0.0), milliseconds(800));
  EXPECT_EQ(backoff_delay(policy, 0, 1.0), milliseconds(1200));
  EXPECT_EQ(backoff_delay(policy, 0, 0.5), milliseconds(1000));
  EXPECT_EQ(backoff_delay(policy, 2, 0.0), milliseconds(3200));
  EXPECT_EQ(backoff_delay(policy, 2, 1.0), milliseconds(4800));
  for (double u = 0; u < 1.0; u += 0.01) {
    const auto d = backoff_delay(policy, 1, u);
    EXPECT_GE(d, milliseconds(1600)) << u;
    EXPECT_LE(d, milliseconds(2400)) << u;
  }
  // Jitter applies to the capped value too.
  EXPECT_EQ(backoff_delay(policy, 30, 0.0), milliseconds(480000));
  EXPECT_EQ(backoff_delay(policy, 30, 1.0), milliseconds(720000));
}

TEST(BackoffDelay, JitterIsMonotonicInUnitRandom) {
  RetryPolicy policy = no_jitter(milliseconds(500), milliseconds(600000));
  policy.backoff_jitter = 0.5;
  milliseconds previous{0};
  for (double u = 0; u < 1.0; u += 0.05) {
    const auto d = backoff_delay(policy, 3, u);
    EXPECT_GE(d, previous);
    previous = d;
  }
}

TEST(DecideAfterFailure, PermanentGivesUp) {
  RetryPolicy policy;
  policy.inline_retries = 5;
  policy.max_attempts = 0;
  FailureFacts facts;
  facts.permanent = true;
  const auto decision = decide_after_failure(policy, facts, 0.5);
  EXPECT_EQ(decision.kind, Kind::kGiveUp);
  EXPECT_FALSE(decision.reason.empty());
}

TEST(DecideAfterFailure, MaxAttemptsCountsThisAttempt) {
  RetryPolicy policy;
  policy.max_attempts = 3;
  FailureFacts facts;
  facts.error_count = 0;  // attempt 1
  EXPECT_EQ(decide_after_failure(policy, facts, 0.5).kind, Kind::kRequeue);
  facts.error_count = 1;  // attempt 2
  EXPECT_EQ(decide_after_failure(policy, facts, 0.5).kind, Kind::kRequeue);
  facts.error_count = 2;  // attempt 3: the last allowed
  const auto decision = decide_after_failure(policy, facts, 0.5);
  EXPECT_EQ(decision.kind, Kind::kGiveUp);
  EXPECT_NE(decision.reason.find("3"), std::string::npos) << decision.reason;
  facts.error_count = 10;
  EXPECT_EQ(decide_after_failure(policy, facts, 0.5).kind, Kind::kGiveUp);
}

TEST(DecideAfterFailure, MaxAttemptsOneGivesUpOnFirstFailure) {
  RetryPolicy policy;
  policy.max_attempts = 1;
  policy.inline_retries = 3;
  FailureFacts facts;
  EXPECT_EQ(decide_after_failure(policy, facts, 0.5).kind, Kind::kGiveUp);
}

TEST(DecideAfterFailure, MaxAttemptsZeroMeansNoLimit) {
  RetryPolicy policy;
  policy.max_attempts = 0;
  FailureFacts facts;
  facts.error_count = 1000000;
  EXPECT_EQ(decide_after_failure(policy, facts, 0.5).kind, Kind::kRequeue);
}

TEST(DecideAfterFailure, GiveUpAfterByAge) {
  RetryPolicy policy;
  policy.max_attempts = 0;
  policy.give_up_after = milliseconds(60000);
  FailureFacts facts;
  facts.age = microseconds(59999999);
  EXPECT_EQ(decide_after_failure(policy, facts, 0.5).kind, Kind::kRequeue);
  facts.age = microseconds(60000000);
  const auto decision = decide_after_failure(policy, facts, 0.5);
  EXPECT_EQ(decision.kind, Kind::kGiveUp);
  EXPECT_NE(decision.reason.find("give_up_after"), std::string::npos) << decision.reason;
  facts.age = std::chrono::hours(24 * 365);
  EXPECT_EQ(decide_after_failure(policy, facts, 0.5).kind, Kind::kGiveUp);
}

TEST(DecideAfterFailure, GiveUpAfterZeroMeansNever) {
  RetryPolicy policy;
  policy.max_attempts = 0;
  policy.give_up_after = milliseconds(0);
  FailureFacts facts;
  facts.age = std::chrono::hours(24 * 365);
  EXPECT_EQ(decide_after_failure(policy, facts, 0.5).kind, Kind::kRequeue);
}

TEST(DecideAfterFailure, InlineRetriesWhileBudgetLeft) {
  RetryPolicy policy;
  policy.inline_retries = 2;
  FailureFacts facts;
  facts.inline_retries_done = 0;
  EXPECT_EQ(decide_after_failure(policy, facts, 0.5).kind, Kind::kRetryInline);
  facts.inline_retries_done = 1;
  EXPECT_EQ(decide_after_failure(policy, facts, 0.5).kind, Kind::kRetryInline);
  facts.inline_retries_done = 2;
  EXPECT_EQ(decide_after_failure(policy, facts, 0.5).kind, Kind::kRequeue);
}

TEST(DecideAfterFailure, NoInlineRetriesWhenDisabled) {
  RetryPolicy policy;
  policy.inline_retries = 0;
  FailureFacts facts;
  EXPECT_EQ(decide_after_failure(policy, facts, 0.5).kind, Kind::kRequeue);
}

TEST(DecideAfterFailure, RequestedDelaySuppressesInlineRetry) {
  RetryPolicy policy;
  policy.inline_retries = 5;
  FailureFacts facts;
  facts.requested_delay = milliseconds(0);
  const auto decision = decide_after_failure(policy, facts, 0.5);
  EXPECT_EQ(decision.kind, Kind::kRequeue);
  EXPECT_EQ(decision.delay, milliseconds(0));
}

TEST(DecideAfterFailure, RequestedDelayOverridesBackoff) {
  RetryPolicy policy = no_jitter(milliseconds(1000), milliseconds(600000));
  FailureFacts facts;
  facts.error_count = 5;
  facts.requested_delay = milliseconds(1234);
  const auto decision = decide_after_failure(policy, facts, 0.0);
  EXPECT_EQ(decision.kind, Kind::kRequeue);
  EXPECT_EQ(decision.delay, milliseconds(1234));
}

TEST(DecideAfterFailure, RequeueUsesBackoffFromErrorCount) {
  RetryPolicy policy = no_jitter(milliseconds(100), milliseconds(600000));
  policy.max_attempts = 0;
  FailureFacts facts;
  facts.error_count = 3;
  const auto decision = decide_after_failure(policy, facts, 0.5);
  EXPECT_EQ(decision.kind, Kind::kRequeue);
  EXPECT_EQ(decision.delay, milliseconds(800));
  policy.backoff_jitter = 0.25;
  EXPECT_EQ(decide_after_failure(policy, facts, 0.0).delay, milliseconds(600));
  EXPECT_EQ(decide_after_failure(policy, facts, 1.0).delay, milliseconds(1000));
}

TEST(DecideAfterFailure, GiveUpTakesPrecedenceOverInlineRetryAndRequestedDelay) {
  RetryPolicy policy;
  policy.inline_retries = 5;
  policy.max_attempts = 2;
  FailureFacts facts;
  facts.error_count = 1;
  facts.requested_delay = milliseconds(10);
  EXPECT_EQ(decide_after_failure(policy, facts, 0.5).kind, Kind::kGiveUp);
  facts.error_count = 0;
  facts.permanent = true;
  EXPECT_EQ(decide_after_failure(policy, facts, 0.5).kind, Kind::kGiveUp);
}

}  // namespace
}  // namespace quick::worker
