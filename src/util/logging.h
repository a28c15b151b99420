// One named spdlog logger per component ("quick.scanner", "quick.local_postgres", ...), all
// writing to standard error so that a command's standard output stays machine-readable. Levels
// follow spdlog's global level (set with spdlog::set_level, or SPDLOG_LEVEL via the tool).
//
// Thread safety: spdlog loggers are thread-safe (the _mt sinks); creation is idempotent.
#pragma once

#include <memory>
#include <string>

#include <spdlog/spdlog.h>

namespace quick::util {

std::shared_ptr<spdlog::logger> component_logger(const std::string& name);

}  // namespace quick::util
