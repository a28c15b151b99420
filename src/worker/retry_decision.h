// What happens to an item after a failed attempt (Algorithm 3, lines 3-5, with the per-job-type
// retry policy of paper section 6): retry in line, requeue after an exponential backoff computed
// from the error count, or give up (permanent failure: dead item or deletion).
//
// Pure functions; the jitter comes in as a number in [0, 1) so tests control it.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "quick/config.h"

namespace quick::worker {

// min(backoff_max, backoff_base * 2^failures_before), then scaled by 1 + backoff_jitter * (2u - 1).
// failures_before is the number of failures before this one (0 for the first failure).
std::chrono::milliseconds backoff_delay(const RetryPolicy& policy, int failures_before, double unit_random);

struct FailureDecision {
  enum class Kind { kRetryInline, kRequeue, kGiveUp };
  Kind kind = Kind::kRequeue;
  std::chrono::milliseconds delay{0};  // kRequeue
  std::string reason;                  // kGiveUp: why
};

// Attempts are numbered error_count + inline_retries_done + 1: every failed attempt counts,
// in-line retries included, for max_attempts and for the backoff.
struct FailureFacts {
  int error_count = 0;               // item.error_count: failures recorded before this visit
  int inline_retries_done = 0;       // in-line retries already made in this visit (each one a failure)
  std::chrono::microseconds age{0};  // time since enqueue
  bool permanent = false;            // the handler said so
  std::optional<std::chrono::milliseconds> requested_delay;  // JobResult::retry_after
};

FailureDecision decide_after_failure(const RetryPolicy& policy, const FailureFacts& facts, double unit_random);

}  // namespace quick::worker
