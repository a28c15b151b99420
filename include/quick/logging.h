// The library's log: where it goes and how much of it, without linking spdlog yourself.
//
// Every component logs under its own name (quick.consumer, quick.scanner, quick.listener,
// quick.manager, quick.worker, quick.lease_keeper, quick.acker, ...), to standard error by
// default, at level info. Both calls below take effect for loggers that exist already and for
// those created later.
//
//   quick::set_log_level(quick::LogLevel::kWarn);
//   quick::set_log_sink([](const quick::LogRecord& record) {
//     my_logger.write(quick::to_string(record.level), record.logger, record.message);
//   });
//
// Thread safety: all functions may be called from any thread. The sink is called from the
// library's threads, one record at a time (calls are serialized).
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <string_view>

namespace quick {

enum class LogLevel { kTrace, kDebug, kInfo, kWarn, kError, kCritical, kOff };

// "trace", "debug", "info", "warn", "error", "critical", "off".
std::string to_string(LogLevel level);

// Records below `level` are dropped. kOff silences the library.
void set_log_level(LogLevel level);

struct LogRecord {
  LogLevel level = LogLevel::kInfo;
  // Both views are valid only during the sink's call: copy what you keep.
  std::string_view logger;   // "quick.scanner", ...
  std::string_view message;  // one line, without time or level
  std::chrono::system_clock::time_point time;
};

// Receives every record instead of standard error; an empty function restores standard error.
// The sink must not throw (an exception from it is dropped) and should return quickly: the
// thread that logged waits for it. It must not log through the library or call set_log_sink
// itself (it runs under the lock that serializes records).
using LogSink = std::function<void(const LogRecord&)>;
void set_log_sink(LogSink sink);

}  // namespace quick
