// Remembers the keys it has seen, so that something, typically a warning, happens once per key
// (once per job type without a handler, for instance) however often the key comes up.
//
// Thread safety: first_time() may be called from any thread.
#pragma once

#include <mutex>
#include <set>
#include <string>

namespace quick::util {

class OncePerKey {
 public:
  // True for the first call with `key`, false for every later one.
  bool first_time(const std::string& key) {
    std::lock_guard<std::mutex> lock(mutex_);
    return seen_.insert(key).second;
  }

 private:
  std::mutex mutex_;
  std::set<std::string> seen_;  // guarded by mutex_
};

}  // namespace quick::util
