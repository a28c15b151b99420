// quick tenant pause|resume|paused and quick job-type pause|resume|paused: steer what consumers
// take (quick.pause_tenant and friends, docs/operations.md#pausing-tenants-and-job-types).
#include <iostream>

#include "cli/commands.h"
#include "cli/database_target.h"
#include "cli/table_printer.h"

namespace quick::cli {
namespace {

struct PauseOptions {
  DatabaseOptions database;
  std::string name;
  std::string reason;
};

// What differs between the two families: the noun and the SQL functions' suffix.
struct PausedKind {
  const char* command;  // "tenant"
  const char* noun;     // "tenant", "job type"
  const char* suffix;   // quick.pause_<suffix>
};

void add_pause_family(CLI::App& app, const PausedKind kind, const std::string& description) {
  auto* family = app.add_subcommand(kind.command, description);
  family->require_subcommand(1);

  auto pause = std::make_shared<PauseOptions>();
  auto* pause_command = family->add_subcommand("pause",
                                               std::string("Stop consumers taking this ") + kind.noun + "'s items");
  add_database_options(*pause_command, pause->database);
  pause_command->add_option("name", pause->name, kind.noun)->required();
  pause_command->add_option("--reason", pause->reason, "why, shown in quick.paused and the dashboard");
  on_selected(*pause_command, [pause, kind] {
    auto conn = connect_at_current_schema(pause->database);
    pqxx::nontransaction session(*conn);
    const bool paused = session
                            .exec_params(std::string("SELECT quick.pause_") + kind.suffix + "($1, $2)", pause->name,
                                         pause->reason.empty() ? nullptr : pause->reason.c_str())
                            .at(0)[0]
                            .as<bool>();
    std::cout << kind.noun << " " << pause->name << (paused ? " paused" : " was already paused") << std::endl;
    return 0;
  });

  auto resume = std::make_shared<PauseOptions>();
  auto* resume_command = family->add_subcommand("resume",
                                                std::string("Let consumers take this ") + kind.noun + "'s items again");
  add_database_options(*resume_command, resume->database);
  resume_command->add_option("name", resume->name, kind.noun)->required();
  on_selected(*resume_command, [resume, kind] {
    auto conn = connect_at_current_schema(resume->database);
    pqxx::nontransaction session(*conn);
    const bool resumed = session.exec_params(std::string("SELECT quick.resume_") + kind.suffix + "($1)", resume->name)
                             .at(0)[0]
                             .as<bool>();
    std::cout << kind.noun << " " << resume->name << (resumed ? " resumed" : " was not paused") << std::endl;
    return 0;
  });

  auto list = std::make_shared<PauseOptions>();
  auto* list_command = family->add_subcommand("paused", std::string("List the paused ") + kind.noun + "s");
  add_database_options(*list_command, list->database);
  on_selected(*list_command, [list, kind] {
    auto conn = connect_at_current_schema(list->database);
    pqxx::nontransaction session(*conn);
    print_result(std::string("paused ") + kind.noun + "s",
                 session.exec_params("SELECT name, date_trunc('second', paused_at) AS paused_at, paused_by, reason "
                                     "FROM quick.paused WHERE kind = $1 ORDER BY name",
                                     std::string(kind.suffix)));
    return 0;
  });
}

}  // namespace

void add_pause_commands(CLI::App& app) {
  add_pause_family(app, PausedKind{"tenant", "tenant", "tenant"}, "Pause and resume tenants (queue zones)");
  add_pause_family(app, PausedKind{"job-type", "job type", "job_type"}, "Pause and resume job types");
}

}  // namespace quick::cli
