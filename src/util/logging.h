// One named spdlog logger per component ("quick.scanner", "quick.local_postgres", ...), all
// writing to one sink: standard error (so that a command's standard output stays
// machine-readable), or the application's sink (include/quick/logging.h). Levels follow spdlog's
// global level (spdlog::set_level, or SPDLOG_LEVEL via the tool) unless set_log_level was called.
//
// Thread safety: spdlog loggers are thread-safe (the _mt sinks); creation is idempotent.
#pragma once

#include <memory>
#include <string>

#include <spdlog/spdlog.h>

namespace quick::util {

std::shared_ptr<spdlog::logger> component_logger(const std::string& name);

}  // namespace quick::util
