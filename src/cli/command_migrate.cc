// quick migrate: apply pending schema migrations.
#include <iostream>

#include "cli/commands.h"
#include "cli/database_target.h"
#include "quick/database.h"
#include "quick/migrate.h"

namespace quick::cli {

void add_migrate_command(CLI::App& app) {
  auto options = std::make_shared<DatabaseOptions>();
  auto* command = app.add_subcommand("migrate",
                                     "Apply pending migrations (each in a transaction, under an advisory lock), as the "
                                     "schema's owner: from schema version 15 on that is quick_admin, and any "
                                     "member of it may run this");
  add_database_options(*command, *options);
  auto migrate_options = std::make_shared<MigrateOptions>();
  command->add_flag("--allow-older-definitions", migrate_options->allow_older_definitions,
                    "Replace SQL functions a newer quick-pg installed with this build's (going back on purpose); "
                    "without it such a database is refused");
  on_selected(*command, [options, migrate_options] {
    auto conn = connect_with_timeout(resolve_database(*options, /*migrate_local=*/false).url);
    const auto report = migrate(*conn, *migrate_options);
    for (const auto& name : report.applied) std::cout << "applied " << name << "\n";
    std::cout << "quick schema version " << report.version_after
              << (report.applied.empty() ? " (already up to date)" : "") << std::endl;
    return 0;
  });
}

}  // namespace quick::cli
