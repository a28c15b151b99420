// How the tool's long-running commands (`quick worker`, `demo`, `top`, `dashboard`) hear Ctrl-C
// (SIGINT) and SIGTERM. The signals are blocked in the thread that creates a StopSignals, and so
// in every thread it starts afterwards (consumers, FIFO workers, producers, servers): none of them
// is interrupted halfway through a transaction. Only the main thread takes them, with
// sigtimedwait, between steps and while it waits, and then stops everything in order: no handler
// runs in a signal context, and nothing is left leased or locked.
#pragma once

#include <signal.h>

#include <chrono>

namespace quick::cli {

// Before a command has anything to stop in order (while it connects: up to the connect_timeout,
// or while the demo recreates its database), SIGINT and SIGTERM end it at once, as their default
// does, but with a line on stderr saying what was interrupted, and 128 + the signal. A StopSignals
// made while one of these lives takes the signals over (it blocks them: the handler never runs).
// The destructor restores the previous handlers.
class ExitOnStopSignal {
 public:
  explicit ExitOnStopSignal(const char* doing);  // e.g. "connecting to the database"; must outlive this
  ~ExitOnStopSignal();
  ExitOnStopSignal(const ExitOnStopSignal&) = delete;
  ExitOnStopSignal& operator=(const ExitOnStopSignal&) = delete;

 private:
  struct sigaction previous_int_ {};
  struct sigaction previous_term_ {};
};

class StopSignals {
 public:
  StopSignals();  // blocks SIGINT and SIGTERM in the calling thread
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // Waits up to `timeout` for SIGINT or SIGTERM; true once one has arrived (now or before).
  bool wait_for(std::chrono::milliseconds timeout);
  // Whether one has arrived, without waiting.
  bool received() { return wait_for(std::chrono::milliseconds(0)); }
  // The signal received (0 before one is), its name, and the exit status it calls for: 128 + the
  // signal number, as a shell reports a command a signal ended (130 for Ctrl-C).
  int signal_number() const { return signal_; }
  const char* signal_name() const;
  int exit_status() const { return 128 + signal_; }

 private:
  sigset_t signals_;
  int signal_ = 0;
};

}  // namespace quick::cli
