#include "worker/lease_extender.h"

#include <algorithm>
#include <vector>

#include "core/database_session.h"
#include "core/lease_keeper.h"
#include "core/loop_errors.h"
#include "util/logging.h"
#include "util/retry_delay.h"

namespace quick::worker {

void run_lease_extender(std::shared_ptr<core::ConsumerCore> core_owner) {
  core::ConsumerCore& core = *core_owner;
  auto log = util::component_logger("quick.lease_keeper");
  std::vector<core::DatabaseSession> sessions;
  std::vector<util::RetryDelay> retry_delays;
  // Per database: a round's extension not yet done, because it failed; and when to try it again.
  // The delay is noted, not slept, so that a database that cannot be reached does not hold up the
  // extension of the other databases' leases (which could then run out).
  std::vector<bool> owed(core.databases.size(), false);
  std::vector<std::chrono::steady_clock::time_point> retry_at(core.databases.size());
  for (const auto& runtime : core.databases) {
    // A lock wait here would hold up every lease: the extension's UPDATE takes only the held
    // items' rows, which nothing else should hold for long, so wait at most a second.
    sessions.emplace_back(runtime->config.url, "quick/" + core.config.consumer_id + "/leases", std::nullopt,
                          std::chrono::milliseconds(1000), core::DatabaseSession::Connecting::kInBackground);
    retry_delays.emplace_back(std::chrono::milliseconds(20), core.config.reconnect_delay_max);
  }
  // Checks a few times per interval, so a round starts soon after it is due.
  const auto tick = std::clamp(core.config.effective_lease_extend_interval() / 4, std::chrono::milliseconds(1),
                               std::chrono::milliseconds(100));
  while (!core.stop_background.wait_for(tick)) {
    if (core.lease_keeper->due()) {
      core.lease_keeper->start_round();
      std::fill(owed.begin(), owed.end(), true);
    }
    for (std::size_t db = 0; db < sessions.size(); ++db) {
      if (!owed[db] || std::chrono::steady_clock::now() < retry_at[db]) continue;
      try {
        core.lease_keeper->extend(static_cast<int>(db), sessions[db].connection());
        owed[db] = false;
        retry_delays[db].reset();
      } catch (...) {
        // Tried again after the delay, not only at the next round: the leases may be running out.
        const auto noted = core::note_loop_error(core, *log, "lease extension", core.databases[db]->config.name,
                                                 &sessions[db], retry_delays[db]);
        retry_at[db] = std::chrono::steady_clock::now() + noted.retry_in;
      }
      if (core.stop_background.requested()) break;
    }
  }
}

}  // namespace quick::worker
