// What `quick demo` prints: the progress of a run, the table of both runs side by side, and a few
// plain sentences phrased from the measured numbers. Every number is written in fixed notation.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "cli/demo_load.h"

namespace quick::cli {

// A duration for people: "0.4 ms", "12.3 ms", "412 ms", "4.98 s", "31.2 s".
std::string human_ms(double ms);
// A rate or count as given: "40", "2.5".
std::string human_number(double value);

// Progress lines: rewritten in place when `out` is a terminal, one line per call otherwise.
DemoProgressPrinter progress_printer(std::ostream& out, bool terminal);

// The runs, one row each (a run cut short by a signal is marked "stopped"), with a legend.
void print_comparison(std::ostream& out, const std::vector<DemoRun>& runs);

// Two to four sentences comparing quick-pg's run with the FIFO queue's, from their numbers.
void print_summary(std::ostream& out, const DemoRun& quick, const DemoRun& fifo);

}  // namespace quick::cli
