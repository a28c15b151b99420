// One drain of the throughput experiments (many_tenants, one_tenant: bench/experiments/
// drain_throughput.cc): a full queue drained by quick-pg consumers or the baseline's workers.
#pragma once

#include <cstdint>
#include <string>

namespace quick::bench {

struct DrainRun {
  std::string system;   // "quick-pg", "baseline batch 1", ...
  int parallelism = 0;  // consumers (quick) or worker connections (baseline)
  int connections = 0;
  long long items = 0;
  double seconds = 0;
  bool timed_out = false;  // the drain did not end (seconds is then 0)
  // The queue's database errors (quick-pg's consumers' database_errors, the baseline's failed
  // claim transactions): each retried, so they only showed as a lower rate.
  std::uint64_t errors = 0;
  double jobs_per_second() const { return seconds > 0 ? static_cast<double>(items) / seconds : 0; }
  // Whether the drain measured what it claims: it ended, without database errors. Otherwise no
  // target is met with it; problems() says what went wrong ("" when nothing did).
  bool complete() const { return !timed_out && errors == 0 && seconds > 0; }
  std::string problems() const {
    std::string text;
    if (timed_out) text += "; the drain timed out";
    if (errors > 0) text += "; " + std::to_string(errors) + " database errors";
    if (!timed_out && seconds <= 0) text += "; no time measured";
    return text.empty() ? text : text.substr(2);
  }
  // A table cell about this run, marked when the run is incomplete.
  std::string marked(const std::string& cell) const {
    return complete() ? cell : cell + " **(INCOMPLETE: " + problems() + ")**";
  }
};

// Whether quick's rate is at least `at_least` times the baseline's, both drains complete.
inline bool ratio_met(const DrainRun& quick, const DrainRun& baseline, double at_least) {
  return quick.complete() && baseline.complete() && quick.jobs_per_second() >= at_least * baseline.jobs_per_second();
}

}  // namespace quick::bench
