// How busy this machine's processors were over an interval, from /proc/stat (Linux). The
// benchmarks run client and, usually, server on the same cores, so the machine-wide figure is
// what says whether a run was limited by CPU, and how much processor time each item cost.
#pragma once

#include <optional>
#include <string>

namespace quick::bench {

// Cumulative processor time of all cores since boot, in clock ticks.
struct CpuTicks {
  unsigned long long busy = 0;   // user, nice, system, irq, softirq, steal
  unsigned long long total = 0;  // busy + idle + iowait
};

// Parses the aggregate "cpu ..." line of /proc/stat; nullopt if it is not one.
std::optional<CpuTicks> parse_proc_stat_cpu_line(const std::string& line);

// The machine's counters now; nullopt where /proc/stat is missing (not Linux).
std::optional<CpuTicks> read_machine_cpu();

// Processor time spent between two readings, in core-seconds, and as a share of the
// machine's capacity over the interval (0..1).
struct CpuUse {
  double busy_core_seconds = 0;
  double busy_fraction = 0;
  // Of busy_core_seconds, the time this process spent (user + system): the benchmark's client
  // side, i.e. producers, the consumer library and its workers. The rest is mostly the server's.
  double own_core_seconds = 0;
};
CpuUse cpu_use_between(const CpuTicks& before, const CpuTicks& after);

// This process's processor time so far (user + system, all threads), in seconds.
double own_cpu_seconds();

// Measures from construction to finish(); the machine's figures are zero where /proc/stat
// cannot be read.
class CpuMeter {
 public:
  CpuMeter() : start_(read_machine_cpu()), own_start_(own_cpu_seconds()) {}
  CpuUse finish() const;

 private:
  std::optional<CpuTicks> start_;
  double own_start_;
};

}  // namespace quick::bench
