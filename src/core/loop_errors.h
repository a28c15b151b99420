// What every consumer loop does with an exception: classify it, count it, log it on the
// component's logger, drop the connection if it is unusable, and wait before retrying (the wait
// ends early on stop). Call from inside a catch block.
//
// A thread that serves several databases must not sleep one database's delay (the others would
// wait with it): it calls note_loop_error, which does all but the wait and returns it.
#pragma once

#include <spdlog/spdlog.h>

#include <chrono>
#include <string>

#include "core/consumer_core.h"
#include "core/database_session.h"
#include "store/error_classification.h"
#include "util/retry_delay.h"
#include "util/stop_signal.h"

namespace quick::core {

struct NotedLoopError {
  store::ErrorClassification error;
  std::chrono::milliseconds retry_in{0};  // wait this long before trying that database again
};

NotedLoopError note_loop_error(ConsumerCore& core, spdlog::logger& log, const char* activity,
                               const std::string& database, DatabaseSession* session, util::RetryDelay& delay);

store::ErrorClassification handle_loop_error(ConsumerCore& core, spdlog::logger& log, const char* activity,
                                             const std::string& database, DatabaseSession* session,
                                             util::RetryDelay& delay, const util::StopSignal& stop);

}  // namespace quick::core
