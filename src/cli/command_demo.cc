// quick demo: the point of quick-pg on one screen. The same noisy-neighbour load (a backlog for a
// few noisy tenants, single jobs trickling in for many quiet ones) runs through quick-pg, then
// through a plain FIFO queue with as many worker threads, on a database of its own (quick_demo,
// dropped and created anew each run, so it never touches real work). It prints a progress line per
// second, both runs side by side in one table, and a few sentences phrased from the numbers.
// Ctrl-C or SIGTERM stops it cleanly (stop_signals.h).
//
// The pieces: demo_load.{h,cc} (the load, the same for both queues), demo_quick_queue.cc and
// demo_fifo_queue.cc (the queues), demo_report.{h,cc} (what it prints).
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <regex>

#include <spdlog/spdlog.h>

#include "cli/commands.h"
#include "cli/database_target.h"
#include "cli/demo_load.h"
#include "cli/demo_queues.h"
#include "cli/demo_report.h"
#include "cli/stop_signals.h"
#include "quick/database.h"
#include "quick/errors.h"
#include "quick/migrate.h"
#include "util/redact.h"

namespace quick::cli {
namespace {

// What the demo does to the server, said in `quick demo --help` (and the README) before it runs.
constexpr const char* kWhatItChanges =
    "What it changes, on the server of --database or QUICK_DATABASE_URL (else the local cluster): it drops the "
    "database named by --demo-database (quick_demo) if it exists, with everything in it, creates it anew and "
    "migrates it, which also creates the roles quick_producer, quick_consumer and quick_admin if the server has no "
    "roles of those names, and makes the login a member of quick_admin if it is not one (as `quick migrate` does). "
    "The plain FIFO queue is the table demo_fifo.jobs in that same "
    "database. The database the connection string names is used only to drop and create the demo's; nothing else "
    "is touched, and the demo's database is left in place afterwards. The login needs the right to create "
    "databases, and to create roles unless they exist and it is a member of quick_admin (a superuser may do all of "
    "it).\n\n"
    "Ctrl-C or SIGTERM stops it: workers finish the job in hand, every connection closes, nothing stays leased "
    "or locked, and it exits with status 130 (SIGINT) or 143 (SIGTERM).";

struct DemoCommandOptions {
  DatabaseOptions database;
  std::string demo_database = "quick_demo";
  DemoLoad load;
};

// Drops and recreates the demo's database on the server of `url`, migrates it, and returns its
// connection string. Refuses to drop the database `url` itself names.
std::string recreate_demo_database(const std::string& url, const std::string& name) {
  auto admin = connect_with_timeout(url);
  pqxx::nontransaction session(*admin);
  if (session.exec("SELECT current_database()").at(0)[0].as<std::string>() == name) {
    throw InvalidArgument("--demo-database " + name +
                          " is the database the connection string names: the demo drops and recreates its "
                          "database, so choose another name");
  }
  session.exec("DROP DATABASE IF EXISTS " + session.quote_name(name) + " WITH (FORCE)");
  session.exec("CREATE DATABASE " + session.quote_name(name));
  const std::string demo_url = with_database_name(url, name);
  auto conn = connect_with_timeout(demo_url);
  migrate(*conn);
  return demo_url;
}

void print_header(const DemoCommandOptions& options, const std::string& server_url, bool local) {
  const DemoLoad& load = options.load;
  std::cout << "quick demo: the same noisy-neighbour load through quick-pg, then through a plain FIFO queue\n"
            << "  (one table; SELECT ... ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED; DELETE when done).\n"
            << "load: " << load.noisy_tenants << " noisy tenants with " << load.noisy_backlog
            << " jobs each queued up front; " << human_number(load.quiet_rate) << " jobs/s for " << load.quiet_tenants
            << " quiet tenants over " << load.seconds << " s;\n"
            << "  each job takes " << load.job_ms << " ms; " << load.worker_threads()
            << " worker threads per queue (quick-pg: " << load.consumers
            << (load.consumers == 1 ? " consumer" : " consumers") << " x " << load.workers << ").\n"
            << "demo database: " << options.demo_database << ", dropped and created anew, on the server of\n  "
            << util::redact_passwords(server_url)
            << (local ? "\n  (the local cluster: `build/quick db stop` stops it)" : "") << "\n"
            << std::endl;
}

int stopped(StopSignals& stop, const std::vector<DemoRun>& runs) {
  std::cout << "\nstopped by " << stop.signal_name();
  if (runs.empty()) {
    std::cout << " before any queue ran; nothing to compare.\n";
  } else {
    std::cout << "; measured so far (no conclusions from a run cut short):\n\n";
    print_comparison(std::cout, runs);
  }
  std::cout << std::flush;
  return stop.exit_status();
}

int run_demo(const DemoCommandOptions& options) {
  // The consumers log at info when they start and stop (their counters included), which would
  // break up the one screen the demo prints; warnings and errors still show. SPDLOG_LEVEL wins.
  if (std::getenv("SPDLOG_LEVEL") == nullptr) spdlog::set_level(spdlog::level::warn);
  ExitOnStopSignal while_preparing("preparing the demo's database");
  const auto target = resolve_database(options.database, /*migrate_local=*/false);
  // The header says which database is dropped, before it is.
  print_header(options, target.url, target.local);
  const std::string demo_url = recreate_demo_database(target.url, options.demo_database);
  StopSignals stop;  // before any thread starts, so that every thread inherits the blocked signals
  std::vector<DemoRun> runs;

  const auto progress = progress_printer(std::cout, ::isatty(STDOUT_FILENO) == 1);
  for (const auto& make_queue : {make_quick_demo_queue, make_fifo_demo_queue}) {
    if (stop.received()) return stopped(stop, runs);
    auto queue = make_queue(demo_url, options.load);
    DemoRun run = run_demo_load(*queue, demo_url, options.load, stop, progress);
    if (run.interrupted) {
      if (run.elapsed_s > 0) runs.push_back(std::move(run));  // its workers had started
      return stopped(stop, runs);
    }
    runs.push_back(std::move(run));
  }
  std::cout << "\n";
  print_comparison(std::cout, runs);
  std::cout << "\n";
  print_summary(std::cout, runs[0], runs[1]);
  std::cout << std::flush;
  return 0;
}

}  // namespace

void add_demo_command(CLI::App& app) {
  auto options = std::make_shared<DemoCommandOptions>();
  auto& load = options->load;
  auto* command = app.add_subcommand(
      "demo", "Run the same noisy-neighbour load through quick-pg and a plain FIFO queue; compare");
  command->footer(kWhatItChanges);
  add_database_options(*command, options->database);
  command
      ->add_option("--demo-database", options->demo_database,
                   "the database the demo drops, recreates and runs in (next to the configured one)")
      ->capture_default_str()
      ->check(CLI::Validator(
          [](const std::string& name) {
            static const std::regex plain("[a-z_][a-z0-9_]{0,62}");
            return std::regex_match(name, plain) ? std::string()
                                                 : "a database name of lowercase letters, digits and _ is expected";
          },
          "NAME"));
  command->add_option("--noisy-tenants", load.noisy_tenants)->capture_default_str()->check(CLI::Range(1, 1000));
  command->add_option("--noisy-backlog", load.noisy_backlog, "jobs per noisy tenant, queued before the workers start")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000000));
  command->add_option("--quiet-tenants", load.quiet_tenants)->capture_default_str()->check(CLI::Range(1, 1000000));
  command->add_option("--quiet-rate", load.quiet_rate, "quiet jobs per second")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 100000.0));
  command->add_option("--seconds", load.seconds, "how long quiet jobs arrive, in each run")
      ->capture_default_str()
      ->check(CLI::Range(1, 3600));
  command->add_option("--job-ms", load.job_ms, "simulated work per job")
      ->capture_default_str()
      ->check(CLI::Range(0, 60000));
  command->add_option("--consumers", load.consumers, "quick-pg consumers")
      ->capture_default_str()
      ->check(CLI::Range(1, 32));
  command->add_option("--workers", load.workers, "worker threads per consumer (the FIFO queue gets as many in all)")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  on_selected(*command, [options] { return run_demo(*options); });
}

}  // namespace quick::cli
