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

// min(backoff_max, backoff_base * 2^error_count), then scaled by 1 + backoff_jitter * (2u - 1).
// error_count is the number of failures before this one (0 for the first failure).
std::chrono::milliseconds backoff_delay(const RetryPolicy& policy, int error_count, double unit_random);

struct FailureDecision {
  enum class Kind { kRetryInline, kRequeue, kGiveUp };
  Kind kind = Kind::kRequeue;
  std::chrono::milliseconds delay{0};  // kRequeue
  std::string reason;                  // kGiveUp: why
};

struct FailureFacts {
  int error_count = 0;            // item.error_count: failures recorded before this attempt
  int inline_retries_done = 0;    // in-line retries already made in this Worker
  std::chrono::microseconds age{0};  // time since enqueue
  bool permanent = false;         // the handler said so
  std::optional<std::chrono::milliseconds> requested_delay;  // JobResult::retry_after
};

FailureDecision decide_after_failure(const RetryPolicy& policy, const FailureFacts& facts, double unit_random);

}  // namespace quick::worker
