// Waiting in tests without sleeping as an assertion: poll a condition up to a deadline.
#pragma once

#include <chrono>
#include <thread>

namespace quick::testing {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

// Polls `condition` every `poll` until it holds or `timeout` passes; returns whether it held.
// Use as ASSERT_TRUE(eventually(...)) << "what we waited for".
template <typename Condition>
bool eventually(Condition condition, milliseconds timeout, milliseconds poll = milliseconds(20)) {
  const auto deadline = Clock::now() + timeout;
  while (true) {
    if (condition()) return true;
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(poll);
  }
}

inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace quick::testing
