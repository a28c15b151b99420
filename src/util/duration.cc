#include "util/duration.h"

#include <cmath>
#include <stdexcept>

namespace quick::util {

std::chrono::microseconds parse_duration(const std::string& text) {
  std::size_t consumed = 0;
  double value = 0;
  try {
    value = std::stod(text, &consumed);
  } catch (const std::exception&) {
    throw std::invalid_argument("'" + text + "' is not a duration: expected a number and a unit, e.g. 250ms, 1.5s, 2m");
  }
  const std::string unit = text.substr(consumed);
  double micros_per_unit = 0;
  if (unit == "us") micros_per_unit = 1;
  else if (unit == "ms") micros_per_unit = 1e3;
  else if (unit == "s") micros_per_unit = 1e6;
  else if (unit == "m" || unit == "min") micros_per_unit = 60e6;
  else if (unit == "h") micros_per_unit = 3600e6;
  else if (unit == "d") micros_per_unit = 86400e6;  // dead items' ages, retention
  else if (unit.empty()) throw std::invalid_argument("'" + text + "' has no unit: use us, ms, s, m, h or d");
  else throw std::invalid_argument("'" + text + "' has an unknown unit '" + unit + "': use us, ms, s, m, h or d");
  if (!std::isfinite(value) || value < 0) {
    throw std::invalid_argument("'" + text + "' must be a finite, non-negative duration");
  }
  const double micros = value * micros_per_unit;
  if (micros > 9.0e18) {  // beyond what 64-bit microseconds hold (~292,000 years)
    throw std::invalid_argument("'" + text + "' is too long a duration");
  }
  return std::chrono::microseconds(static_cast<long long>(std::llround(micros)));
}

std::string format_duration(std::chrono::microseconds duration) {
  const long long us = duration.count();
  if (us == 0) return "0s";
  if (us % 3600000000LL == 0) return std::to_string(us / 3600000000LL) + "h";
  if (us % 60000000LL == 0) return std::to_string(us / 60000000LL) + "m";
  if (us % 1000000LL == 0) return std::to_string(us / 1000000LL) + "s";
  if (us % 1000LL == 0) return std::to_string(us / 1000LL) + "ms";
  return std::to_string(us) + "us";
}

}  // namespace quick::util
