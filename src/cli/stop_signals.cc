#include "cli/stop_signals.h"

#include <pthread.h>

#include <cerrno>
#include <ctime>

namespace quick::cli {

StopSignals::StopSignals() {
  sigemptyset(&signals_);
  sigaddset(&signals_, SIGINT);
  sigaddset(&signals_, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals_, nullptr);
}

bool StopSignals::wait_for(std::chrono::milliseconds timeout) {
  if (signal_ != 0) return true;
  const auto millis = timeout.count() < 0 ? 0 : timeout.count();
  timespec wait{static_cast<time_t>(millis / 1000), static_cast<long>((millis % 1000) * 1000000)};
  int received = -1;
  do {
    received = sigtimedwait(&signals_, nullptr, &wait);
  } while (received < 0 && errno == EINTR);  // another signal (SIGWINCH, ...) woke it: wait again
  if (received == SIGINT || received == SIGTERM) signal_ = received;
  return signal_ != 0;
}

const char* StopSignals::signal_name() const {
  switch (signal_) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    default: return "no signal";
  }
}

}  // namespace quick::cli
