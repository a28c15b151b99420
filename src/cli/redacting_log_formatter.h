// The tool's log format, with passwords hidden: every message, the tool's and the library's,
// goes through util::redact_passwords before the pattern lays it out, so that no log line shows
// a password, whatever a command printed or an error message quoted.
#pragma once

#include <memory>
#include <string>

#include <spdlog/formatter.h>
#include <spdlog/pattern_formatter.h>

namespace quick::cli {

class RedactingLogFormatter : public spdlog::formatter {
 public:
  explicit RedactingLogFormatter(std::string pattern);
  void format(const spdlog::details::log_msg& message, spdlog::memory_buf_t& destination) override;
  std::unique_ptr<spdlog::formatter> clone() const override;

 private:
  std::string pattern_;
  spdlog::pattern_formatter layout_;
};

}  // namespace quick::cli
