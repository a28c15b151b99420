// quick top: a live terminal view of one database's queue, redrawn in place every --interval: the
// totals, the deepest zones and the zones waiting longest, the live consumers with their roles,
// and what is paused. It reads the dashboard's functions (sql/functions/dashboard_*.sql), whose
// cost is bounded however many tenants there are (docs/operations.md#watching-from-a-terminal-quick-top).
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "cli/database_target.h"
#include "cli/duration_flags.h"
#include "cli/stop_signals.h"
#include "cli/table_printer.h"

namespace quick::cli {
namespace {

struct TopOptions {
  DatabaseOptions database;
  std::string interval = "2s";
  int zones = 10;
  bool once = false;
};

// A zone's items, counted up to the dashboard functions' cap (100,000 rows): a count that reached
// it shows a "+", as on the dashboard, since it is then a lower bound (and so are the vested,
// leased and failing counts beside it).
const std::string kItemsWithCap = "items::text || CASE WHEN capped THEN '+' ELSE '' END AS items";

// One frame, as text: every query of it runs before anything is printed, so a redraw never
// shows half a frame.
std::string frame(pqxx::connection& conn, const TopOptions& options) {
  pqxx::nontransaction session(conn);
  std::ostringstream out;
  out << "quick top: database " << conn.dbname() << ", every " << options.interval << " (Ctrl-C quits)\n\n";
  print_result(out, "queue",
               session.exec("SELECT date_trunc('second', database_time) AS at, pointers AS zones, vested_pointers, "
                            "items, vested_items, leased_items, delayed_items, failing_items, dead_items, "
                            "round(max_pointer_lag_seconds::numeric, 3) AS max_lag_s, estimated "
                            "FROM quick.dashboard_summary()"));
  print_result(out, "deepest zones",
               session.exec_params("SELECT tenant, " + kItemsWithCap +
                                       ", vested, leased, failing, "
                                       "round(oldest_item_age_seconds::numeric, 1) AS oldest_item_age_s, "
                                       "round(pointer_lag_seconds::numeric, 3) AS pointer_lag_s, estimated "
                                       "FROM quick.dashboard_deepest_zones($1)",
                                   options.zones));
  print_result(out, "zones waiting longest",
               session.exec_params("SELECT tenant, round(pointer_lag_seconds::numeric, 3) AS pointer_lag_s, "
                                   "pointer_leased, " +
                                       kItemsWithCap +
                                       ", vested, failing "
                                       "FROM quick.dashboard_lagging_zones($1)",
                                   options.zones));
  print_result(out, "consumers",
               session.exec("SELECT consumer_id, in_order_scanner, roles, "
                            "round(lease_expires_in_seconds::numeric, 1) AS lease_expires_in_s, "
                            "date_trunc('second', member_since) AS member_since FROM quick.dashboard_consumers()"));
  print_result(out, "paused",
               session.exec("SELECT kind, name, date_trunc('second', paused_at) AS paused_at, paused_by, reason "
                            "FROM quick.paused ORDER BY kind, name"));
  return out.str();
}

int run_top(const TopOptions& options) {
  const auto interval = flag_duration(options.interval);
  ExitOnStopSignal while_connecting("connecting to the database");
  auto conn = connect_at_current_schema(options.database);
  StopSignals stop_signals;  // from here on, a signal ends the loop below
  // On a terminal each frame replaces the last (cursor home, clear screen); into a pipe or a file
  // frames follow one another.
  const bool terminal = isatty(STDOUT_FILENO) == 1;
  do {
    const std::string text = frame(*conn, options);
    std::cout << (terminal ? "\x1b[H\x1b[2J" : "") << text << std::flush;
  } while (!options.once && !stop_signals.wait_for(interval));
  return 0;
}

}  // namespace

void add_top_command(CLI::App& app) {
  auto options = std::make_shared<TopOptions>();
  auto* command = app.add_subcommand("top", "Watch the busiest and oldest zones and the consumers, live");
  add_database_options(*command, options->database);
  command->add_option("--interval", options->interval, "how often to redraw, e.g. 1s, 500ms")
      ->capture_default_str()
      ->check(positive_interval());
  command->add_option("--zones", options->zones, "zones listed in each zone table")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  command->add_flag("--once", options->once, "print one frame and exit (for scripts)");
  on_selected(*command, [options] { return run_top(*options); });
}

}  // namespace quick::cli
