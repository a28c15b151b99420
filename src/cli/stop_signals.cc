#include "cli/stop_signals.h"

#include <pthread.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <initializer_list>

namespace quick::cli {
namespace {

const char* volatile interrupted_doing = "";

// A signal handler: only async-signal-safe calls (write, strlen, _exit).
void exit_on_stop_signal(int signal_number) {
  const char* name = signal_number == SIGINT ? "SIGINT" : "SIGTERM";
  const char* doing = interrupted_doing;
  for (const char* part : {"\nquick: interrupted by ", name, " while ", doing, "\n"}) {
    (void)!::write(STDERR_FILENO, part, std::strlen(part));
  }
  ::_exit(128 + signal_number);
}

}  // namespace

ExitOnStopSignal::ExitOnStopSignal(const char* doing) {
  interrupted_doing = doing;
  struct sigaction action {};
  action.sa_handler = exit_on_stop_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, &previous_int_);
  sigaction(SIGTERM, &action, &previous_term_);
}

ExitOnStopSignal::~ExitOnStopSignal() {
  sigaction(SIGINT, &previous_int_, nullptr);
  sigaction(SIGTERM, &previous_term_, nullptr);
}

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
