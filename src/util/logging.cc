#include "util/logging.h"

#include <mutex>

#include <spdlog/sinks/stdout_color_sinks.h>

namespace quick::util {

std::shared_ptr<spdlog::logger> component_logger(const std::string& name) {
  static std::mutex creation;
  std::lock_guard<std::mutex> lock(creation);
  if (auto existing = spdlog::get(name)) return existing;
  auto logger = spdlog::stderr_color_mt(name);
  logger->set_level(spdlog::get_level());
  return logger;
}

}  // namespace quick::util
