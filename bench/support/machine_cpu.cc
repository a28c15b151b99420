#include "support/machine_cpu.h"

#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <vector>

namespace quick::bench {

std::optional<CpuTicks> parse_proc_stat_cpu_line(const std::string& line) {
  std::istringstream in(line);
  std::string label;
  if (!(in >> label) || label != "cpu") return std::nullopt;
  // user nice system idle iowait irq softirq steal [guest guest_nice]; guest time is already
  // counted in user, so only the first eight fields add up to the total.
  std::vector<unsigned long long> fields;
  unsigned long long value = 0;
  while (fields.size() < 8 && in >> value) fields.push_back(value);
  if (fields.size() < 4) return std::nullopt;
  fields.resize(8, 0);
  CpuTicks ticks;
  const unsigned long long idle = fields[3] + fields[4];
  for (const auto f : fields) ticks.total += f;
  ticks.busy = ticks.total - idle;
  return ticks;
}

std::optional<CpuTicks> read_machine_cpu() {
  std::ifstream stat("/proc/stat");
  std::string line;
  if (!stat || !std::getline(stat, line)) return std::nullopt;
  return parse_proc_stat_cpu_line(line);
}

CpuUse cpu_use_between(const CpuTicks& before, const CpuTicks& after) {
  CpuUse use;
  if (after.total <= before.total || after.busy < before.busy) return use;
  const long ticks_per_second = sysconf(_SC_CLK_TCK);
  use.busy_core_seconds = static_cast<double>(after.busy - before.busy) /
                          static_cast<double>(ticks_per_second > 0 ? ticks_per_second : 100);
  use.busy_fraction = static_cast<double>(after.busy - before.busy) / static_cast<double>(after.total - before.total);
  return use;
}

double own_cpu_seconds() {
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  const auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

CpuUse CpuMeter::finish() const {
  const auto now = read_machine_cpu();
  CpuUse use;
  if (start_ && now) use = cpu_use_between(*start_, *now);
  use.own_core_seconds = own_cpu_seconds() - own_start_;
  return use;
}

}  // namespace quick::bench
