// What every experiment gets: the server to measure, the size to run at, where to write, and
// a progress printer. Experiments are registered by name in experiments/registry.cc.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "quick/config.h"
#include "support/results_folder.h"

namespace quick::bench {

struct ExperimentContext {
  std::string server_url;  // the server; experiments create their own scratch databases on it
  bool quick = false;      // toy sizes: the whole suite in under two minutes
  ResultsFolder* results = nullptr;
  std::function<void(const std::string&)> progress;  // one line per step, to stderr

  // Scales a full-size count down for --quick runs.
  int size(int full, int quick_size) const { return quick ? quick_size : full; }
  std::chrono::milliseconds duration(std::chrono::milliseconds full, std::chrono::milliseconds quick_duration) const {
    return quick ? quick_duration : full;
  }
};

struct Experiment {
  int order = 0;            // the suite runs experiments by increasing order
  std::string name;         // used with --experiment
  std::string description;  // one line
  std::function<void(ExperimentContext&)> run;
  // Runs only when named with --experiment (not in the default run nor in --quick runs of the
  // whole suite): for experiments that need more than the server under test, or take long.
  bool opt_in = false;
};

// Every registered experiment, by order.
std::vector<Experiment> all_experiments();

// Adds an experiment to the suite (at static initialization; see QUICK_BENCH_EXPERIMENT).
bool register_experiment(Experiment experiment);

// In an experiment's .cc file, at namespace scope:
//   QUICK_BENCH_EXPERIMENT(20, "many_tenants", "drain ...", run_many_tenants);
#define QUICK_BENCH_EXPERIMENT(order, name, description, function)                           \
  static const bool quick_bench_registered_##function = ::quick::bench::register_experiment( \
      {order, name, description, function})

// The same for an opt-in experiment (Experiment::opt_in).
#define QUICK_BENCH_OPT_IN_EXPERIMENT(order, name, description, function)                    \
  static const bool quick_bench_registered_##function = ::quick::bench::register_experiment( \
      {order, name, description, function, true})

// The consumer settings every experiment starts from: the library defaults plus short polling
// intervals suited to a benchmark; experiments override what they study.
ConsumerConfig bench_consumer_config(const std::string& url);

// Polls `done` every millisecond until it reaches `target` or `timeout` passes; returns the
// elapsed time (or nullopt on timeout).
std::optional<std::chrono::duration<double>> wait_until_count(const std::function<std::uint64_t()>& done,
                                                              std::uint64_t target, std::chrono::seconds timeout);

}  // namespace quick::bench
