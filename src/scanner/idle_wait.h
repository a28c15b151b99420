// How long a Scanner round that selected nothing sleeps, unless woken (docs/consumer.md#waking-up).
//
// Listening on every database, and no database showed vested pointers: until the earliest moment
// new work can vest unannounced. For each database that is the next parked pointer's vesting
// time or, when none vests within the horizon its last scan read within, the end of that horizon;
// and, after a narrow scan, the next wide one, which reads what landed below the narrow floor
// (scan_floors.h). At most the longest idle wait. Those moments count from when the database's
// last scan was sent, not from the sleep: the rest of the round (other databases' scans, a
// backoff, an error's retry delay) has used part of them already. Vested pointers this consumer
// left alone (to their owners, or to other consumers' visits) are looked at again after
// idle_poll_interval, as a poll would: the queue is busy, not idle. Pull requests left over are
// looked at again sooner (left_over_pulls_wait). Not listening: idle_poll_interval (never more
// than the longest idle wait), sooner after left-over pull requests.
//
// Thread safety: the Scanner thread only.
#pragma once

#include <algorithm>
#include <chrono>
#include <optional>
#include <vector>

namespace quick::scanner {

using IdleClock = std::chrono::steady_clock;

// What a database's last scan found, for the sleep after it.
struct LastScan {
  IdleClock::time_point sent_at{};  // when its statement was sent: the times below count from then
  bool saw_vested = false;          // its peek returned vested pointers (taken, busy, or left to owners)
  // How long until work vests that no notification will announce: unset, nothing within
  // `looked_ahead`; zero or less, pull requests are left over.
  std::optional<std::chrono::microseconds> next_vesting_in;
  // The horizon it read that within; zero: it did not read it. A peek that returned vested
  // pointers skips the read, but then saw_vested has the Scanner poll anyway.
  std::chrono::milliseconds looked_ahead{0};
  std::optional<IdleClock::time_point> wide_scan_due;  // after a narrow scan: when the next wide one is due
  int left_over_in_a_row = 0;  // scans in a row, this one included, that left pull requests over

  // After each scan: whether it left pull requests over (next_vesting_in zero or less).
  void note_left_over(bool left_over) {
    left_over_in_a_row = left_over ? std::min(left_over_in_a_row + 1, kLeftOverCount) : 0;
  }
  static constexpr int kLeftOverCount = 64;  // counted up to this many (the wait has long stopped doubling)

  // No scan to go by (before the first, or after one that failed): look again after idle_poll_interval.
  void forget() { *this = LastScan{}; }
};

struct IdleWaitBounds {
  std::chrono::milliseconds idle_poll_interval;
  std::chrono::milliseconds longest;  // the longest idle wait while listening
  bool listening;                     // a notification wakes the Scanner (else it polls)
};

// How soon to look again after scans that left pull requests over, at most `wait`: 1 ms after the
// first, doubling with each further one (the Scanner's pacing, scanner.min_scan_interval, may
// make it later: while pacing is on, a scan comes no sooner than that after the one before).
// Another Scanner applying them right now (the enqueue's notification woke both, and this one's
// scan skipped the requests the other had locked) commits within a moment, and its pulls then
// wait for this consumer, whose tenants they may be (tenant_partition.h): nothing else would tell
// it before its busy wait or poll ends. A pointer locked for longer (a visit, an open enqueue) is
// soon looked at no more often than before. `wait` when the scan left nothing over.
std::chrono::milliseconds left_over_pulls_wait(const LastScan& scan, std::chrono::milliseconds wait);

// The same over every database's last scan: the soonest. The wait of a round that selected
// nothing because this consumer is busy with every vested zone it may take (`wait`: scanner.cc's
// quarter of idle_poll_interval), and of a polling Scanner's round (`wait`: the poll).
std::chrono::milliseconds left_over_pulls_wait(const std::vector<const LastScan*>& scans,
                                               std::chrono::milliseconds wait);

// The sleep, at least 1 ms (a moment already past is looked at again at once, not in a busy loop).
std::chrono::milliseconds idle_wait(const IdleWaitBounds& bounds, const std::vector<const LastScan*>& scans,
                                    IdleClock::time_point now);

}  // namespace quick::scanner
