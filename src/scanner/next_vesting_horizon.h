// How far ahead an idle scan looks for the next pointer to vest (docs/consumer.md#waking-up).
//
// A scan that finds nothing vested also reads when the next pointer vests, so that the Scanner can
// sleep until then. That read walks the pointers_vesting index forwards from now, and while a long
// snapshot holds vacuum back every dead version of a parked or requeued pointer lies there: with
// 1,000 busy tenants it stepped over 3,900 to 5,500 of them (1 to 2 ms) in every idle round, and
// the Scanner spent more than half its time on it. Yet only the part up to the Scanner's next
// wake-up matters: it looks again by then anyway. So the read is bounded by a horizon: the
// shortest idle wait after a round that saw vested pointers (a busy queue, where notifications
// wake the Scanner every few milliseconds), doubling with each round in a row that found nothing
// vested, up to the longest idle wait (listening_poll_interval), where an idle queue settles. A
// round that finds nothing vesting within its horizon sleeps no later than the horizon's end,
// counted from when its scan was sent (idle_wait.h).
//
// Thread safety: the Scanner thread only.
#pragma once

#include <chrono>

namespace quick::scanner {

class NextVestingHorizon {
 public:
  // shortest: idle_poll_interval; longest: the longest the Scanner ever sleeps when idle.
  NextVestingHorizon(std::chrono::milliseconds shortest, std::chrono::milliseconds longest);

  // The horizon for the next scan.
  std::chrono::milliseconds next() const { return horizon_; }

  // After a scan: whether its peek returned vested pointers (the queue is busy: start short again)
  // or not (look twice as far the next time).
  void observe(bool saw_vested);

 private:
  std::chrono::milliseconds shortest_;
  std::chrono::milliseconds longest_;
  std::chrono::milliseconds horizon_;
};

}  // namespace quick::scanner
