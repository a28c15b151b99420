// The delay before a background loop retries after an error: exponential from `initial` up to
// `max`, with +-25% jitter so that many consumers hitting the same outage do not retry in step.
// reset() after a success.
//
// Thread safety: one instance per loop (not shared).
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

namespace quick::util {

class RetryDelay {
 public:
  RetryDelay(std::chrono::milliseconds initial, std::chrono::milliseconds max)
      : initial_(initial), max_(std::max(initial, max)), next_(initial), random_(std::random_device{}()) {}

  std::chrono::milliseconds next() {
    const auto base = next_;
    next_ = std::min(max_, next_ * 2);
    std::uniform_real_distribution<double> jitter(0.75, 1.25);
    return std::chrono::milliseconds(std::llround(static_cast<double>(base.count()) * jitter(random_)));
  }

  void reset() { next_ = initial_; }

 private:
  std::chrono::milliseconds initial_, max_, next_;
  std::mt19937 random_;
};

}  // namespace quick::util
