// A one-shot "please stop" flag that sleeping threads can wait on. Every wait in a consumer loop
// goes through one of these, never a bare sleep, so that stop() is prompt.
//
// Thread safety: all methods may be called from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>

namespace quick::util {

class StopSignal {
 public:
  void request() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      requested_.store(true);
    }
    changed_.notify_all();
  }

  bool requested() const { return requested_.load(); }

  // Sleeps up to `timeout`; returns true (early) if stop was requested.
  template <typename Rep, typename Period>
  bool wait_for(std::chrono::duration<Rep, Period> timeout) const {
    std::unique_lock<std::mutex> lock(mutex_);
    return changed_.wait_for(lock, timeout, [this] { return requested_.load(); });
  }

 private:
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  std::atomic<bool> requested_{false};  // written by request(), read by any thread
};

}  // namespace quick::util
