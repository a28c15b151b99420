// One database's side of skipping the one-call enqueue's wake-up while every listening Scanner is
// awake (sql/functions/scanner_sleep.sql; docs/consumer.md#skipping-the-wake-up-while-every-scanner-is-awake,
// which also says what it does not cover: a session cut while the Scanner sleeps).
//
// A listening Scanner holds the database's sleepers' lock from just before it sleeps until it has
// been busy for kBusyRoundsToWake rounds in a row: while it holds it, enqueues send their wake-ups
// as before; once every Scanner has let it go, they skip them, and the Scanners, scanning anyway,
// find the work. Letting it go only after a few busy rounds keeps a Scanner that wakes for one
// job and sleeps again from paying for the handshake at every job.
//
// Before sleeping, the Scanner announces it (before_sleep): that waits for the enqueues that
// skipped their wake-up to commit, and then it must scan once more before it sleeps. A new session
// (after a reconnect) holds no lock: the announcement starts again.
//
// Thread safety: the Scanner thread only.
#pragma once

#include <chrono>

#include "core/database_session.h"

namespace quick::scanner {

class SleepAnnouncement {
 public:
  static constexpr int kBusyRoundsToWake = 3;
  enum class BeforeSleep {
    kSleep,         // announced already: sleep
    kScanOnceMore,  // announced now: scan once more, then sleep
    kPoll,          // could not announce (enqueues kept the barrier, or an error): poll, do not sleep long
  };

  // Before an idle sleep of a listening Scanner. Never throws (errors are logged).
  BeforeSleep before_sleep(core::DatabaseSession& session);
  // After each round, whether it selected work (in any database). Lets the lock go after
  // kBusyRoundsToWake busy rounds in a row. Never throws.
  void after_round(core::DatabaseSession& session, bool selected);

 private:
  bool holds(const core::DatabaseSession& session) const {
    return announced_ && session.connected() && session.connects() == announced_connects_;
  }
  bool announced_ = false;
  int announced_connects_ = -1;  // session.connects() when announced: a later session holds nothing
  int busy_rounds_ = 0;
  // The database refused quick.scanner_sleeps() itself (functions older than the handshake, or no
  // EXECUTE): sleep without announcing, as before the handshake, until then; tried again after
  // kRefusedRetry (a migrate may have come meanwhile).
  std::chrono::steady_clock::time_point refused_until_{};
  static constexpr std::chrono::seconds kRefusedRetry{10};
  // Any other failure: poll, and try again after kFailedRetry.
  std::chrono::steady_clock::time_point failed_until_{};
  static constexpr std::chrono::seconds kFailedRetry{1};
};

}  // namespace quick::scanner
