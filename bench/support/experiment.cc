#include "support/experiment.h"

#include <algorithm>
#include <optional>
#include <thread>

namespace quick::bench {
namespace {

std::vector<Experiment>& registry() {
  static std::vector<Experiment> experiments;  // function-local: safe during static initialization
  return experiments;
}

}  // namespace

bool register_experiment(Experiment experiment) {
  registry().push_back(std::move(experiment));
  return true;
}

std::vector<Experiment> all_experiments() {
  auto experiments = registry();
  std::stable_sort(experiments.begin(), experiments.end(),
                   [](const Experiment& a, const Experiment& b) { return a.order < b.order; });
  return experiments;
}

ConsumerConfig bench_consumer_config(const std::string& url) {
  ConsumerConfig config;
  config.databases.push_back(DatabaseConfig{"bench", url});
  return config;
}

std::optional<std::chrono::duration<double>> wait_until_count(const std::function<std::uint64_t()>& done,
                                                              std::uint64_t target, std::chrono::seconds timeout) {
  const auto start = std::chrono::steady_clock::now();
  while (done() < target) {
    if (std::chrono::steady_clock::now() - start > timeout) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return std::chrono::steady_clock::now() - start;
}

}  // namespace quick::bench
