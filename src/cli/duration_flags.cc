#include "cli/duration_flags.h"

#include <stdexcept>

#include "util/duration.h"

namespace quick::cli {
namespace {

// CLI11 calls a validator with the flag's text and takes a non-empty return as the error,
// which it prefixes with the flag's name.
CLI::Validator duration_validator(std::chrono::microseconds minimum, const std::string& description) {
  return CLI::Validator(
      [minimum](std::string& text) -> std::string {
        std::chrono::microseconds value{};
        try {
          value = util::parse_duration(text);
        } catch (const std::invalid_argument& error) {
          return error.what();
        }
        if (value % std::chrono::milliseconds(1) != std::chrono::microseconds(0)) {
          return "must be a whole number of milliseconds, got " + text;
        }
        if (value < minimum) {
          return "must be at least " + util::format_duration(minimum) + ", got " + util::format_duration(value);
        }
        return "";
      },
      description);
}

}  // namespace

CLI::Validator positive_interval() { return duration_validator(std::chrono::milliseconds(1), "DURATION>0"); }

CLI::Validator non_negative_delay() { return duration_validator(std::chrono::microseconds(0), "DURATION"); }

std::chrono::milliseconds flag_duration(const std::string& text) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(util::parse_duration(text));
}

}  // namespace quick::cli
