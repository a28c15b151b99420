#include "scanner/idle_wait.h"

#include <algorithm>
#include <cstdint>

namespace quick::scanner {
namespace {

using std::chrono::milliseconds;

// Until `moment`, rounded up so that what vests then has vested when the Scanner looks.
milliseconds until(IdleClock::time_point moment, IdleClock::time_point now) {
  return std::max(milliseconds(1), std::chrono::ceil<milliseconds>(moment - now));
}

}  // namespace

milliseconds left_over_pulls_wait(const LastScan& scan, milliseconds wait) {
  if (scan.left_over_in_a_row <= 0) return wait;
  // 2^30 ms is beyond any wait the configuration allows: from there on, `wait` itself.
  const milliseconds soon(std::int64_t{1} << std::min(scan.left_over_in_a_row - 1, 30));
  return std::max(milliseconds(1), std::min(wait, soon));
}

milliseconds left_over_pulls_wait(const std::vector<const LastScan*>& scans, milliseconds wait) {
  for (const LastScan* scan : scans) wait = left_over_pulls_wait(*scan, wait);
  return wait;
}

milliseconds idle_wait(const IdleWaitBounds& bounds, const std::vector<const LastScan*>& scans,
                       IdleClock::time_point now) {
  const milliseconds poll = std::max(milliseconds(1), std::min(bounds.idle_poll_interval, bounds.longest));
  if (!bounds.listening) return left_over_pulls_wait(scans, poll);
  milliseconds wait = std::max(milliseconds(1), bounds.longest);
  for (const LastScan* scan : scans) {
    if (scan->saw_vested) wait = std::min(wait, poll);
    if (!scan->next_vesting_in) {
      // Nothing vests within the horizon; a scan that did not read it (made while polling, or
      // none yet) counts as a poll.
      wait = std::min(wait, scan->looked_ahead.count() > 0 ? until(scan->sent_at + scan->looked_ahead, now) : poll);
    } else if (scan->next_vesting_in->count() <= 0) {
      wait = std::min(wait, left_over_pulls_wait(*scan, poll));
    } else {
      wait = std::min(wait, until(scan->sent_at + *scan->next_vesting_in, now));
    }
    if (scan->wide_scan_due) wait = std::min(wait, until(*scan->wide_scan_due, now));
  }
  return wait;
}

}  // namespace quick::scanner
