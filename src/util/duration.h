// Human-friendly durations for the command line and the YAML configuration: "250ms", "1.5s",
// "2m", "1h", "7d", "30us". A bare number is rejected, so a value's unit is always explicit.
#pragma once

#include <chrono>
#include <string>

namespace quick::util {

// Throws std::invalid_argument naming the problem ("'10' has no unit: use us, ms, s, m, h or d").
std::chrono::microseconds parse_duration(const std::string& text);

// The shortest exact rendering: 1500000us -> "1500ms", 2000000us -> "2s".
std::string format_duration(std::chrono::microseconds duration);

}  // namespace quick::util
