// Cleanup that must happen however a benchmark run ends: scratch databases to drop, clusters to
// stop. Their owners' destructors do it when the run ends or fails, but a signal (Ctrl-C's SIGINT,
// SIGTERM from a supervisor or `timeout`, SIGHUP) would end the process without running them,
// and a scratch database is named after the process (<name>_<pid>), so no later run drops it.
// So each owner also registers its cleanup here while it lives, and quick_bench's signal thread
// runs whatever is registered before the process ends by the signal.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace quick::bench {

// Registers `cleanup` from construction to destruction. Cleanups must be safe to run from another
// thread while their owner works, and again after it has done the same work itself.
class CleanupOnSignal {
 public:
  explicit CleanupOnSignal(std::function<void()> cleanup);
  ~CleanupOnSignal();
  CleanupOnSignal(const CleanupOnSignal&) = delete;
  CleanupOnSignal& operator=(const CleanupOnSignal&) = delete;

 private:
  std::uint64_t id_;
};

// Call first in main, before any thread starts: blocks SIGINT, SIGTERM and SIGHUP in the calling
// thread (so in every thread started later) and starts a thread that waits for them. On one it
// prints `message(signal)` to stderr, runs the registered cleanups (newest first), and ends the
// process by that signal, as if it had not been caught.
void handle_termination_signals(const std::function<std::string(int)>& message);

}  // namespace quick::bench
