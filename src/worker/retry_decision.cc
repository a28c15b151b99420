#include "worker/retry_decision.h"

#include <algorithm>
#include <cmath>

#include "util/duration.h"

namespace quick::worker {

std::chrono::milliseconds backoff_delay(const RetryPolicy& policy, int failures_before, double unit_random) {
  const double base = static_cast<double>(policy.backoff_base.count());
  const double cap = static_cast<double>(policy.backoff_max.count());
  const double exponent = std::min(std::max(failures_before, 0), 62);
  const double raw = std::min(cap, base * std::pow(2.0, exponent));
  const double jittered = raw * (1.0 + policy.backoff_jitter * (2.0 * unit_random - 1.0));
  return std::chrono::milliseconds(static_cast<long long>(std::max(0.0, std::round(jittered))));
}

FailureDecision decide_after_failure(const RetryPolicy& policy, const FailureFacts& facts, double unit_random) {
  FailureDecision decision;
  const int failures_before = facts.error_count + facts.inline_retries_done;
  const int attempts = failures_before + 1;  // including this one
  if (facts.permanent) {
    decision.kind = FailureDecision::Kind::kGiveUp;
    decision.reason = "permanent failure";
    return decision;
  }
  if (policy.max_attempts > 0 && attempts >= policy.max_attempts) {
    decision.kind = FailureDecision::Kind::kGiveUp;
    decision.reason = "gave up after " + std::to_string(attempts) + " attempts (max_attempts)";
    return decision;
  }
  if (policy.give_up_after.count() > 0 && facts.age >= policy.give_up_after) {
    decision.kind = FailureDecision::Kind::kGiveUp;
    decision.reason = "gave up " +
                      util::format_duration(
                          std::chrono::duration_cast<std::chrono::microseconds>(policy.give_up_after)) +
                      " after enqueue (give_up_after)";
    return decision;
  }
  if (facts.inline_retries_done < policy.inline_retries && !facts.requested_delay) {
    decision.kind = FailureDecision::Kind::kRetryInline;
    return decision;
  }
  decision.kind = FailureDecision::Kind::kRequeue;
  decision.delay = facts.requested_delay ? *facts.requested_delay : backoff_delay(policy, failures_before, unit_random);
  return decision;
}

}  // namespace quick::worker
