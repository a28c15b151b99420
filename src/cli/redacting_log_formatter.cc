#include "cli/redacting_log_formatter.h"

#include "util/redact.h"

namespace quick::cli {

RedactingLogFormatter::RedactingLogFormatter(std::string pattern) : pattern_(std::move(pattern)), layout_(pattern_) {}

void RedactingLogFormatter::format(const spdlog::details::log_msg& message, spdlog::memory_buf_t& destination) {
  const std::string redacted = util::redact_passwords(std::string(message.payload.data(), message.payload.size()));
  spdlog::details::log_msg copy = message;
  copy.payload = redacted;
  layout_.format(copy, destination);
  // The color sinks read where the level's color goes from the message they passed in.
  message.color_range_start = copy.color_range_start;
  message.color_range_end = copy.color_range_end;
}

std::unique_ptr<spdlog::formatter> RedactingLogFormatter::clone() const {
  return std::make_unique<RedactingLogFormatter>(pattern_);
}

}  // namespace quick::cli
