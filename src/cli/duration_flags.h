// The tool's duration flags ("10s", "250ms"): validators that refuse a bad value while CLI11
// parses the command line, naming the flag ("--stats-interval: must be at least 1ms, got 0s"),
// before any database is touched; and the value of a flag they accepted.
#pragma once

#include <chrono>
#include <string>

#include <CLI/CLI.hpp>

namespace quick::cli {

// A period something repeats at (--stats-interval): at least 1ms once rounded down to whole
// milliseconds. Zero or less would make the loop spin.
CLI::Validator positive_interval();

// A delay (--delay): zero or more, in whole milliseconds.
CLI::Validator non_negative_delay();

// The value of a flag that one of the validators above accepted, in milliseconds.
std::chrono::milliseconds flag_duration(const std::string& text);

}  // namespace quick::cli
