// A small multi-producer, multi-consumer queue with a timeout on pop and a close() that wakes
// everyone: how the Scanner hands pointer batches to Managers and Workers hand acknowledgments
// to the Acknowledger.
//
// Thread safety: all methods may be called from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>

namespace quick::util {

template <typename T>
class BlockingQueue {
 public:
  void push(T value) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      values_.push_back(std::move(value));
    }
    available_.notify_one();
  }

  // The next value; waits up to `timeout`. Empty on timeout, or when closed and drained.
  template <typename Rep, typename Period>
  std::optional<T> pop(std::chrono::duration<Rep, Period> timeout) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!available_.wait_for(lock, timeout, [this] { return !values_.empty() || closed_; })) return std::nullopt;
    if (values_.empty()) return std::nullopt;
    T value = std::move(values_.front());
    values_.pop_front();
    return value;
  }

  // Everything queued now, without waiting.
  std::deque<T> take_all() {
    std::lock_guard<std::mutex> lock(mutex_);
    std::deque<T> all;
    all.swap(values_);
    return all;
  }

  void close() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      closed_ = true;
    }
    available_.notify_all();
  }

  bool closed() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return closed_;
  }

  std::size_t size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return values_.size();
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable available_;
  std::deque<T> values_;  // guarded by mutex_
  bool closed_ = false;   // guarded by mutex_
};

}  // namespace quick::util
