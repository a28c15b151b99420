// A wake-up call between threads that never gets lost: signal() bumps a generation counter; a
// waiter passes the generation it read before it last looked for work, so a signal that came
// while it was busy ends its next wait at once instead of being missed.
//
// Thread safety: all members may be called from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace quick::util {

class WakeSignal {
 public:
  std::uint64_t generation() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return generation_;
  }

  void signal() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++generation_;
    }
    changed_.notify_all();
  }

  // Waits until signal() has been called since generation() returned `seen`, or `timeout`
  // passes. Returns true when signalled.
  template <typename Rep, typename Period>
  bool wait_for(std::uint64_t seen, std::chrono::duration<Rep, Period> timeout) const {
    std::unique_lock<std::mutex> lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] { return generation_ != seen; });
  }

 private:
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  std::uint64_t generation_ = 0;  // guarded by mutex_
};

}  // namespace quick::util
