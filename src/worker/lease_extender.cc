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
  for (const auto& runtime : core.databases) {
    // A lock wait here would hold up every lease: the extension's UPDATE takes only the held
    // items' rows, which nothing else should hold for long, so wait at most a second.
    sessions.emplace_back(runtime->config.url, "quick/" + core.config.consumer_id + "/leases", std::nullopt,
                          std::chrono::milliseconds(1000));
    retry_delays.emplace_back(std::chrono::milliseconds(20), core.config.reconnect_delay_max);
  }
  // Checks a few times per interval, so a round starts soon after it is due.
  const auto tick = std::clamp(core.config.effective_lease_extend_interval() / 4, std::chrono::milliseconds(1),
                               std::chrono::milliseconds(100));
  while (!core.stop_background.wait_for(tick)) {
    if (!core.lease_keeper->due()) continue;
    core.lease_keeper->start_round();
    for (std::size_t db = 0; db < sessions.size(); ++db) {
      try {
        core.lease_keeper->extend(static_cast<int>(db), sessions[db].connection());
        retry_delays[db].reset();
      } catch (...) {
        core::handle_loop_error(core, *log, "lease extension", core.databases[db]->config.name, &sessions[db],
                                retry_delays[db], core.stop_background);
      }
    }
  }
}

}  // namespace quick::worker
