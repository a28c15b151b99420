// quick_bench's --experiment names: one that names no experiment (a typo) is an error before
// anything runs. With another, valid name beside it, quick_bench used to run only the valid one
// and exit 0, so a suite missing an experiment looked complete.
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/processes.h"
#include "support/test_database.h"

namespace quick::testing {
namespace {

using namespace std::chrono_literals;

struct Outcome {
  std::optional<int> exit_code;
  std::string err;
  bool results_written;
};

Outcome run_bench(const std::vector<std::string>& experiments) {
  const char* build_dir = std::getenv("QUICK_BUILD_DIR");
  EXPECT_NE(build_dir, nullptr) << "run through ctest, or export QUICK_BUILD_DIR";
  TempDir dir;
  std::vector<std::string> argv{std::string(build_dir ? build_dir : ".") + "/quick_bench",
                                "--database",
                                admin_url(),
                                "--out",
                                (dir / "results").string(),
                                "--quick"};
  for (const auto& name : experiments) {
    argv.push_back("--experiment");
    argv.push_back(name);
  }
  ChildProcess bench(argv, {}, dir / "out.txt", dir / "err.txt");
  EXPECT_TRUE(bench.wait_for(60s)) << "quick_bench ran on";
  return {bench.exit_code(), bench.err(), std::filesystem::exists(dir / "results" / "summary.md")};
}

TEST(QuickBenchArgumentsTest, AnUnknownExperimentBesideAKnownOneIsAnErrorBeforeAnythingRuns) {
  const Outcome outcome = run_bench({"enqueue", "typo_experiment"});
  EXPECT_EQ(outcome.exit_code, 2) << outcome.err;
  EXPECT_NE(outcome.err.find("typo_experiment"), std::string::npos) << outcome.err;
  EXPECT_EQ(outcome.err.find("== enqueue"), std::string::npos) << "an experiment ran:\n" << outcome.err;
  EXPECT_FALSE(outcome.results_written);
}

TEST(QuickBenchArgumentsTest, EveryUnknownNameIsNamed) {
  const Outcome outcome = run_bench({"typo_one", "typo_two"});
  EXPECT_EQ(outcome.exit_code, 2) << outcome.err;
  EXPECT_NE(outcome.err.find("typo_one"), std::string::npos) << outcome.err;
  EXPECT_NE(outcome.err.find("typo_two"), std::string::npos) << outcome.err;
}

}  // namespace
}  // namespace quick::testing
