// quick: the command-line tool of quick-pg. `quick --help` lists the commands.
#include <csignal>
#include <iostream>
#include <sstream>

#include <pqxx/pqxx>
#include <spdlog/cfg/env.h>
#include <spdlog/spdlog.h>

#include "cli/commands.h"
#include "cli/redacting_log_formatter.h"
#include "quick/errors.h"
#include "util/redact.h"

namespace quick::cli {
namespace {
CommandAction selected_action;
}

void on_selected(CLI::App& command, CommandAction action) {
  command.callback([action = std::move(action)] { selected_action = action; });
}

}  // namespace quick::cli

using quick::util::redact_passwords;

int main(int argc, char** argv) {
  // A reader that goes away (`quick stats | head -1`, a worker whose stdout was a pipe) must not
  // kill the tool: its writes fail instead. Commands it spawns get the default back
  // (process/child.cc), so `yes | head` inside a job command behaves as usual.
  std::signal(SIGPIPE, SIG_IGN);
  // Ignored SIGCHLD is inherited across exec (a parent that ignores it, `nohup`-style wrappers):
  // the kernel would then reap the job commands of `quick worker` itself, and their exit statuses
  // would be lost. The tool waits for its children, so it needs the default.
  std::signal(SIGCHLD, SIG_DFL);
  spdlog::set_formatter(std::make_unique<quick::cli::RedactingLogFormatter>("%H:%M:%S.%e %^%l%$ [%n] %v"));
  spdlog::cfg::load_env_levels();  // SPDLOG_LEVEL=debug, or per logger: SPDLOG_LEVEL=quick.scanner=debug
  CLI::App app{"quick: a fair multi-tenant queue on PostgreSQL (QuiCK)", "quick"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Show help for every command");
  quick::cli::add_db_commands(app);
  quick::cli::add_migrate_command(app);
  quick::cli::add_enqueue_command(app);
  quick::cli::add_stats_command(app);
  quick::cli::add_demo_command(app);
  quick::cli::add_worker_command(app);
  quick::cli::add_pause_commands(app);
  quick::cli::add_placement_commands(app);
  quick::cli::add_dead_commands(app);
  quick::cli::add_dashboard_command(app);
  quick::cli::add_top_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    // CLI11's messages quote the arguments they refuse, a misplaced connection string included.
    std::ostringstream out, err;
    const int status = app.exit(error, out, err);
    std::cout << redact_passwords(out.str());
    std::cerr << redact_passwords(err.str());
    return status;
  }

  try {
    return quick::cli::selected_action ? quick::cli::selected_action() : 0;
  } catch (const quick::InvalidArgument& error) {
    std::cerr << "quick: invalid argument: " << redact_passwords(error.what()) << std::endl;
    return 2;
  } catch (const std::invalid_argument& error) {
    std::cerr << "quick: invalid argument: " << redact_passwords(error.what()) << std::endl;
    return 2;
  } catch (const pqxx::broken_connection& error) {
    std::cerr << "quick: cannot reach the database: " << redact_passwords(error.what()) << std::endl;
    return 1;
  } catch (const std::exception& error) {
    std::cerr << "quick: " << redact_passwords(error.what()) << std::endl;
    return 1;
  }
}
