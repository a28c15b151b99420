// Shrinks a database's visits when they run past p_duration, and lets them grow back.
//
// A visit is one statement, cancelled by the Manager session's statement_timeout (p_duration).
// A cancelled visit changes nothing, so when every visit of the Scanner's size runs past it (a
// long-held snapshot makes each zone's scan walk every entry consumed since it began, and the
// walk grows with the snapshot's age: docs/benchmarks.md#10-held-snapshot), retrying the same
// size makes no progress at all, however long the database stays slow. So a cancelled visit of n
// zones halves the zones the next visits may take (at least 1), and visits that keep finishing
// well within p_duration double it again, back to the configured size. The Scanner applies the
// limit when it splits its selection into visits; the Managers report each visit's outcome.
//
// Thread safety: all methods may be called from any thread (one mutex; a few calls per visit).
#pragma once

#include <chrono>
#include <mutex>
#include <optional>

namespace quick::core {

class VisitSizeLimit {
 public:
  // Visits in a row that must finish within a quarter of p_duration, each of more than half the
  // limit (what a selection split by the limit yields), before the limit doubles; doubled by
  // every cut that follows a growth, up to kMostFastVisitsToGrow.
  static constexpr int kFastVisitsToGrow = 8;
  static constexpr int kMostFastVisitsToGrow = 256;

  // The zones a visit takes now: `configured` (the Scanner's size), or less while limited.
  int apply(int configured);

  // A visit of `zones` zones was cancelled at p_duration. Returns the new limit if it changed.
  std::optional<int> cancelled(int zones);

  // A visit of `zones` zones ended in `took`. Returns the new limit if it changed (0: none, the
  // configured size again).
  std::optional<int> finished(int zones, std::chrono::milliseconds took, std::chrono::milliseconds p_duration);

  // The limit now (0: none).
  int limit() const;
  // The fast visits in a row the limit needs now to double.
  int fast_visits_to_grow() const;

 private:
  mutable std::mutex mutex_;
  int limit_ = 0;                               // guarded by mutex_; 0 = no limit
  int configured_ = 0;                          // guarded by mutex_; the Scanner's size at its last apply()
  int fast_visits_ = 0;                         // guarded by mutex_; fast visits at the limit in a row
  int fast_visits_needed_ = kFastVisitsToGrow;  // guarded by mutex_
  bool grown_since_cut_ = false;                // guarded by mutex_
};

}  // namespace quick::core
