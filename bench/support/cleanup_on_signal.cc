#include "support/cleanup_on_signal.h"

#include <pthread.h>
#include <signal.h>

#include <csignal>
#include <cstdlib>
#include <iostream>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace quick::bench {
namespace {

// Never destroyed: the signal thread may use them while the main thread runs static destructors.
std::mutex& registry_mutex() {
  static auto* mutex = new std::mutex;
  return *mutex;
}
std::map<std::uint64_t, std::function<void()>>& registry() {  // guarded by registry_mutex()
  static auto* cleanups = new std::map<std::uint64_t, std::function<void()>>;
  return *cleanups;
}
std::uint64_t next_id = 1;  // guarded by registry_mutex()

sigset_t termination_signals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGHUP);
  return signals;
}

}  // namespace

CleanupOnSignal::CleanupOnSignal(std::function<void()> cleanup) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  id_ = next_id++;
  registry().emplace(id_, std::move(cleanup));
}

CleanupOnSignal::~CleanupOnSignal() {
  // Waits for the signal thread if it is running the cleanups (the process then ends).
  std::lock_guard<std::mutex> lock(registry_mutex());
  registry().erase(id_);
}

void handle_termination_signals(const std::function<std::string(int)>& message) {
  const sigset_t signals = termination_signals();
  if (pthread_sigmask(SIG_BLOCK, &signals, nullptr) != 0) throw std::runtime_error("pthread_sigmask failed");
  std::thread([signals, message] {
    int signal_number = 0;
    while (sigwait(&signals, &signal_number) != 0) {
    }
    std::cerr << message(signal_number) << std::endl;
    {
      // Held until the process ends: an owner's destructor now waits rather than racing the cleanup.
      std::unique_lock<std::mutex> lock(registry_mutex());
      for (auto it = registry().rbegin(); it != registry().rend(); ++it) {
        try {
          it->second();
        } catch (...) {
          // Best effort: the others still run.
        }
      }
      // End as the signal would have: a shell or a supervisor sees the process killed by it.
      std::signal(signal_number, SIG_DFL);
      sigset_t just_this;
      sigemptyset(&just_this);
      sigaddset(&just_this, signal_number);
      pthread_sigmask(SIG_UNBLOCK, &just_this, nullptr);
      ::raise(signal_number);
      std::_Exit(128 + signal_number);
    }
  }).detach();
}

}  // namespace quick::bench
