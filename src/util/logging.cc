#include "util/logging.h"

#include <mutex>

#include <spdlog/details/registry.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>

#include "quick/logging.h"

namespace quick::util {
namespace {

spdlog::level::level_enum to_spdlog(LogLevel level) {
  switch (level) {
    case LogLevel::kTrace: return spdlog::level::trace;
    case LogLevel::kDebug: return spdlog::level::debug;
    case LogLevel::kInfo: return spdlog::level::info;
    case LogLevel::kWarn: return spdlog::level::warn;
    case LogLevel::kError: return spdlog::level::err;
    case LogLevel::kCritical: return spdlog::level::critical;
    case LogLevel::kOff: return spdlog::level::off;
  }
  return spdlog::level::info;
}

LogLevel from_spdlog(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::trace: return LogLevel::kTrace;
    case spdlog::level::debug: return LogLevel::kDebug;
    case spdlog::level::info: return LogLevel::kInfo;
    case spdlog::level::warn: return LogLevel::kWarn;
    case spdlog::level::err: return LogLevel::kError;
    case spdlog::level::critical: return LogLevel::kCritical;
    default: return LogLevel::kOff;
  }
}

// The one sink every component logger writes to: standard error (colored, formatted as the
// formatter set on it says), or the application's LogSink once it has set one.
class DispatchSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  void set_application_sink(LogSink sink) {
    std::lock_guard<std::mutex> lock(mutex_);
    application_sink_ = std::move(sink);
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    if (application_sink_) {
      try {
        application_sink_(LogRecord{from_spdlog(msg.level),
                                    std::string_view(msg.logger_name.data(), msg.logger_name.size()),
                                    std::string_view(msg.payload.data(), msg.payload.size()), msg.time});
      } catch (...) {
        // The application's sink must not throw; dropping its exception keeps the logging thread alive.
      }
      return;
    }
    stderr_sink_->log(msg);
  }
  void flush_() override { stderr_sink_->flush(); }
  void set_formatter_(std::unique_ptr<spdlog::formatter> formatter) override {
    stderr_sink_->set_formatter(std::move(formatter));
  }
  void set_pattern_(const std::string& pattern) override { stderr_sink_->set_pattern(pattern); }

 private:
  // base_sink's mutex_ serializes sink_it_ and these setters.
  std::shared_ptr<spdlog::sinks::sink> stderr_sink_ = std::make_shared<spdlog::sinks::stderr_color_sink_st>();
  LogSink application_sink_;
};

struct LoggingState {
  std::mutex mutex;
  std::shared_ptr<DispatchSink> sink = std::make_shared<DispatchSink>();
  bool level_set = false;  // guarded by mutex
  spdlog::level::level_enum level = spdlog::level::info;
};

LoggingState& state() {
  static LoggingState* instance = new LoggingState();  // never destroyed: threads may log at exit
  return *instance;
}

bool is_component(const std::string& name) { return name.rfind("quick.", 0) == 0; }

}  // namespace

std::shared_ptr<spdlog::logger> component_logger(const std::string& name) {
  auto& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (auto existing = spdlog::get(name)) return existing;
  auto logger = std::make_shared<spdlog::logger>(name, s.sink);
  // The registry gives a new logger the global formatter and level, or the level SPDLOG_LEVEL set
  // for this name (spdlog::cfg::load_env_levels); set_log_level overrides both.
  spdlog::initialize_logger(logger);
  if (s.level_set) logger->set_level(s.level);
  return logger;
}

}  // namespace quick::util

namespace quick {

std::string to_string(LogLevel level) {
  switch (level) {
    case LogLevel::kTrace: return "trace";
    case LogLevel::kDebug: return "debug";
    case LogLevel::kInfo: return "info";
    case LogLevel::kWarn: return "warn";
    case LogLevel::kError: return "error";
    case LogLevel::kCritical: return "critical";
    case LogLevel::kOff: return "off";
  }
  return "info";
}

void set_log_level(LogLevel level) {
  auto& s = util::state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.level_set = true;
  s.level = util::to_spdlog(level);
  spdlog::apply_all([&](const std::shared_ptr<spdlog::logger>& logger) {
    if (util::is_component(logger->name())) logger->set_level(s.level);
  });
}

void set_log_sink(LogSink sink) { util::state().sink->set_application_sink(std::move(sink)); }

}  // namespace quick
