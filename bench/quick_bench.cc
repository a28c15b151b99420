// quick_bench: the benchmark suite (paper section 8 on Postgres), quick-pg next to the baseline
// SKIP LOCKED queue, on the same server in the same run. scripts/bench builds it, runs it and
// draws the plots; docs/benchmarks.md presents the results.
//
//   quick_bench --database URL --out DIR [--quick] [--experiment NAME]...
//
// Opt-in experiments (--list marks them) run only when named with --experiment.
#include <sys/utsname.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <thread>

#include <CLI/CLI.hpp>
#include <pqxx/pqxx>
#include <spdlog/cfg/env.h>
#include <spdlog/spdlog.h>

#include "quick/database.h"
#include "support/cleanup_on_signal.h"
#include "support/experiment.h"
#include "support/results_folder.h"

namespace {

using namespace quick::bench;

std::string memory_total() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key, value, unit;
  while (meminfo >> key >> value >> unit) {
    if (key == "MemTotal:") return fixed(std::stod(value) / 1024.0 / 1024.0, 1) + " GiB";
  }
  return "unknown";
}

std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown";
}

// The machine, the server and its non-default settings, the date: what every result depends on.
std::string describe_environment(const std::string& url, bool quick) {
  auto conn = quick::connect(url);
  pqxx::nontransaction session(*conn);
  const std::string version = session.exec("SELECT version()").at(0)[0].as<std::string>();
  std::vector<std::vector<std::string>> settings;
  for (const auto& row : session.exec(
           "SELECT name, setting || coalesce(' ' || unit, '') FROM pg_settings "
           "WHERE source NOT IN ('default', 'override') AND name NOT IN ('application_name', 'client_encoding', "
           "'DateStyle', 'TimeZone', 'lc_messages', 'lc_monetary', 'lc_numeric', 'lc_time', "
           "'default_text_search_config', "
           "'log_timezone', 'transaction_isolation', 'default_transaction_isolation') ORDER BY name")) {
    settings.push_back({row[0].as<std::string>(), row[1].as<std::string>()});
  }
  const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char date[64];
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  utsname system{};
  ::uname(&system);
  std::string text = "# quick-pg benchmark results\n\n";
  text += std::string("Run ") + date +
          (quick ? ", **--quick** (toy sizes: checks the suite runs, numbers not meaningful)" : "") + ".\n\n";
  text += markdown_table({"", ""}, {{"cores", std::to_string(std::thread::hardware_concurrency())},
                                    {"cpu", cpu_model()},
                                    {"memory", memory_total()},
                                    {"kernel", std::string(system.sysname) + " " + system.release},
                                    {"postgres", version},
                                    {"postgres on", "the same machine (all client and server load shares the cores)"}});
  text += "\nNon-default server settings:\n\n" + markdown_table({"setting", "value"}, settings);
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  // First, before any thread: a signal drops the scratch databases and stops the clusters of the
  // experiment running (support/cleanup_on_signal.h).
  quick::bench::handle_termination_signals([](int signal_number) {
    return std::string("quick_bench: ") + ::strsignal(signal_number) + ": dropping the scratch databases, then exiting";
  });
  // Consumers log their starts and stops at info: too chatty next to the progress lines.
  spdlog::set_level(spdlog::level::warn);
  spdlog::cfg::load_env_levels();
  CLI::App app{"quick_bench: quick-pg against the baseline SKIP LOCKED queue, same server, same run"};
  std::string url = quick::database_url_from_environment();
  std::string out = "bench-results/latest";
  bool quick_run = false;
  bool list = false;
  std::vector<std::string> selected;
  app.add_option("--database", url,
                 "server to measure (default $QUICK_DATABASE_URL); scratch databases are created there");
  app.add_option("--out", out, "results folder")->capture_default_str();
  app.add_flag("--quick", quick_run, "toy sizes: every experiment, under two minutes in all");
  app.add_option("--experiment", selected,
                 "run only these (repeatable); default all but the opt-in ones, which run only when named");
  app.add_flag("--list", list, "list the experiments and exit (opt-in ones end with a tab and \"opt-in\")");
  CLI11_PARSE(app, argc, argv);

  if (list) {
    for (const auto& experiment : all_experiments())
      std::cout << experiment.name << "\t" << experiment.description << (experiment.opt_in ? "\topt-in" : "") << "\n";
    return 0;
  }
  // Every name must be an experiment's, before anything runs: a typo beside a valid name would
  // otherwise leave its experiment out of a run that looks complete.
  {
    std::vector<std::string> unknown;
    for (const auto& name : selected) {
      const auto& all = all_experiments();
      const bool known = std::any_of(all.begin(), all.end(), [&](const auto& e) { return e.name == name; });
      if (!known && std::find(unknown.begin(), unknown.end(), name) == unknown.end()) unknown.push_back(name);
    }
    if (!unknown.empty()) {
      std::cerr << "quick_bench: no experiment named";
      for (std::size_t i = 0; i < unknown.size(); ++i) std::cerr << (i == 0 ? " " : ", ") << "'" << unknown[i] << "'";
      std::cerr << "; see --list" << std::endl;
      return 2;
    }
  }
  if (url.empty()) {
    std::cerr << "quick_bench: no database: pass --database or set QUICK_DATABASE_URL" << std::endl;
    return 2;
  }
  try {
    quick::validate_connection_string(url);
    ResultsFolder results(out);
    const std::string environment = describe_environment(url, quick_run);
    ExperimentContext ctx;
    ctx.server_url = url;
    ctx.quick = quick_run;
    ctx.results = &results;
    const auto suite_start = std::chrono::steady_clock::now();
    ctx.progress = [suite_start](const std::string& line) {
      const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - suite_start).count();
      std::cerr << "[" << fixed(elapsed, 0) << "s] " << line << std::endl;
    };
    int ran = 0;
    for (const auto& experiment : all_experiments()) {
      const bool named = std::find(selected.begin(), selected.end(), experiment.name) != selected.end();
      if (selected.empty() ? experiment.opt_in : !named) continue;
      ctx.progress("== " + experiment.name + ": " + experiment.description);
      experiment.run(ctx);
      ++ran;
    }
    if (ran == 0) {
      std::cerr << "quick_bench: no experiment matched; see --list" << std::endl;
      return 2;
    }
    results.finish(environment);
    ctx.progress("results in " + results.dir().string());
    return 0;
  } catch (const std::exception& error) {
    std::cerr << "quick_bench: " << error.what() << std::endl;
    return 1;
  }
}
