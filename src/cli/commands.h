// The `quick` command-line tool: one function per subcommand family registers it with CLI11.
// Every command returns its exit status through the callback it registers (see main.cc).
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace quick::cli {

// What a subcommand runs once arguments are parsed; returns the process exit status.
using CommandAction = std::function<int()>;

// Registers `action` to run when `command` was selected on the command line.
void on_selected(CLI::App& command, CommandAction action);

void add_db_commands(CLI::App& app);         // db start | stop | status | url
void add_migrate_command(CLI::App& app);     // migrate
void add_enqueue_command(CLI::App& app);     // enqueue
void add_stats_command(CLI::App& app);       // stats
void add_demo_command(CLI::App& app);        // demo
void add_worker_command(CLI::App& app);      // worker
void add_pause_commands(CLI::App& app);      // tenant | job-type  pause | resume | paused
void add_placement_commands(CLI::App& app);  // tenant databases|where|place|move|rebalance, doctor
void add_dead_commands(CLI::App& app);       // dead list | retry | purge, item cancel
void add_dashboard_command(CLI::App& app);   // dashboard
void add_top_command(CLI::App& app);         // top

}  // namespace quick::cli
