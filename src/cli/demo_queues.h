// The two queues `quick demo` compares, both in the demo's own database.
#pragma once

#include <memory>
#include <string>

#include "cli/demo_load.h"

namespace quick::cli {

// quick-pg: load.consumers quick::Consumers with load.workers Worker threads each, at the
// library's defaults otherwise. The database must be migrated.
std::unique_ptr<DemoQueue> make_quick_demo_queue(const std::string& url, const DemoLoad& load);

// The queue most Postgres applications write: one table; load.worker_threads() workers, each on
// its own connection, claim the oldest job with SELECT ... ORDER BY id LIMIT 1 FOR UPDATE SKIP
// LOCKED, run it and DELETE it in the same transaction. Drops and recreates schema demo_fifo.
std::unique_ptr<DemoQueue> make_fifo_demo_queue(const std::string& url, const DemoLoad& load);

}  // namespace quick::cli
