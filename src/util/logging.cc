#include "util/logging.h"

#include <mutex>

#include <spdlog/sinks/stdout_color_sinks.h>

namespace quick::util {

std::shared_ptr<spdlog::logger> component_logger(const std::string& name) {
  static std::mutex creation;
  std::lock_guard<std::mutex> lock(creation);
  if (auto existing = spdlog::get(name)) return existing;
  // The registry gives a new logger its level: the global one, or the one SPDLOG_LEVEL set for
  // this name (spdlog::cfg::load_env_levels).
  return spdlog::stderr_color_mt(name);
}

}  // namespace quick::util
