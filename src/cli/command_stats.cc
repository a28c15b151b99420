// quick stats: the operator views (sql/views.sql), printed.
#include <iostream>

#include "cli/commands.h"
#include "cli/database_target.h"
#include "cli/table_printer.h"

namespace quick::cli {
namespace {

struct StatsOptions {
  DatabaseOptions database;
  int zones = 10;
};

}  // namespace

void add_stats_command(CLI::App& app) {
  auto options = std::make_shared<StatsOptions>();
  auto* command = app.add_subcommand("stats", "Show queue totals, the deepest zones and job types");
  add_database_options(*command, options->database);
  command->add_option("--zones", options->zones, "how many of the deepest zones to list")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000000));
  on_selected(*command, [options] {
    auto conn = connect_at_current_schema(options->database);
    pqxx::nontransaction session(*conn);
    print_query(session, "queue", "SELECT * FROM quick.queue_summary");
    print_query(session, "deepest zones",
                "SELECT tenant, items, vested, leased, delayed, failing, "
                "date_trunc('second', oldest_item_age) AS oldest_item_age "
                "FROM quick.zone_depth ORDER BY items DESC, tenant LIMIT " +
                    std::to_string(options->zones));
    print_query(session, "job types", "SELECT * FROM quick.job_type_counts ORDER BY items DESC");
    return 0;
  });
}

}  // namespace quick::cli
