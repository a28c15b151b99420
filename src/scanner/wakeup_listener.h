// The wake-up listener (docs/consumer.md#waking-up): one thread with one more connection per
// database, LISTENing on channel quick_wakeup, which new pointers and pull requests notify
// (sql/functions/wake_consumers.sql). Each notification signals core.wakeups, ending the
// Scanner's idle sleep. While a database's connection is down, core.databases_listening says so
// and the Scanner falls back to polling every scanner.idle_poll_interval; after every
// (re)connect it signals once, since notifications sent meanwhile are lost.
#pragma once

#include <memory>

#include "core/consumer_core.h"

namespace quick::scanner {

// The thread's body; returns once core.stop_scanning is requested (core.listener_stop wakes it).
void run_wakeup_listener(std::shared_ptr<core::ConsumerCore> core);

}  // namespace quick::scanner
