// quick tenant databases|where|place|move|rebalance and quick doctor: tenants placed across the
// databases of a consumer configuration and moved between them with their queued work
// (include/quick/placement.h, docs/scaling.md, docs/operations.md#several-databases).
#include <iostream>
#include <set>
#include <sstream>
#include <vector>

#include "cli/commands.h"
#include "cli/database_target.h"
#include "cli/duration_flags.h"
#include "cli/table_printer.h"
#include "quick/config.h"
#include "quick/database.h"
#include "quick/errors.h"
#include "quick/migrate.h"
#include "quick/placement.h"
#include "store/sql_errors.h"
#include "util/duration.h"
#include "util/printable.h"
#include "util/redact.h"

namespace quick::cli {
namespace {

using util::escape_unprintable;
using util::redact_passwords;

// --config and --directory, which every command here takes.
struct PlacementOptions {
  std::string config_file;
  std::string directory;
};

void add_placement_options(CLI::App& command, PlacementOptions& options) {
  command
      .add_option("--config", options.config_file,
                  "a consumer's YAML configuration (docs/configuration.md): its databases, by the names placement "
                  "knows them by")
      ->required()
      ->check(CLI::ExistingFile);
  command.add_option("--directory", options.directory,
                     "the database (its name in --config) holding the placement directory (default: the first one)");
}

std::string names_of(const PlacementConfig& config) {
  std::string names;
  for (const auto& database : config.databases) names += (names.empty() ? "" : ", ") + database.name;
  return names;
}

// The database called `name` in the configuration; InvalidArgument naming `flag` otherwise.
const DatabaseConfig& database_named(const PlacementConfig& config, const std::string& name, const std::string& flag) {
  for (const auto& database : config.databases) {
    if (database.name == name) return database;
  }
  throw InvalidArgument(flag + ": no database named \"" + name +
                        "\" in the configuration (its databases: " + names_of(config) + ")");
}

PlacementConfig load_placement(const PlacementOptions& options) {
  PlacementConfig config = placement_from(load_config_file(options.config_file));  // directory: the first
  if (!options.directory.empty()) {
    database_named(config, options.directory, "--directory");
    config.directory = options.directory;
  }
  return config;
}

// A connection to `database`, which must run this build's schema; errors name the database.
std::unique_ptr<pqxx::connection> connect_to(const DatabaseConfig& database) {
  std::unique_ptr<pqxx::connection> conn;
  try {
    conn = connect_with_timeout(database.url);
  } catch (const pqxx::broken_connection& error) {
    throw pqxx::broken_connection("database " + database.name + ": " + error.what());
  }
  try {
    require_current_schema(*conn);
  } catch (const SchemaError& error) {
    throw SchemaError("database " + database.name + ": " + error.what());
  }
  return conn;
}

std::unique_ptr<pqxx::connection> connect_to_directory(const PlacementConfig& config) {
  return connect_to(database_named(config, config.directory, "--directory"));
}

// What the directory says about `tenant`: its database ("" when no database is registered).
std::string tenant_database(pqxx::connection& directory, const std::string& tenant) {
  pqxx::nontransaction session(directory);
  const auto value = store::translating_input_errors(
      [&] { return session.exec_params("SELECT quick.tenant_database($1)", tenant).at(0).at(0); });
  return value.is_null() ? "" : value.as<std::string>();
}

std::string no_databases_registered(const PlacementConfig& config) {
  return "the placement directory in database " + config.directory +
         " has no databases registered: run `quick tenant databases --register` first";
}

// --lock-timeout and --batch-items of the commands that move tenants.
struct MoveFlags {
  std::string lock_timeout = "10s";
  int batch_items = 1000;
};

void add_move_flags(CLI::App& command, MoveFlags& flags) {
  command
      .add_option("--lock-timeout", flags.lock_timeout,
                  "the longest a move waits for one lock (a consumer visiting the tenant's zone, a producer's open "
                  "transaction) before it gives up, changing nothing; at most 10min")
      ->capture_default_str()
      ->check(positive_interval());
  command.add_option("--batch-items", flags.batch_items, "items copied per statement")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
}

MoveOptions move_options(const MoveFlags& flags) {
  MoveOptions options;
  options.lock_timeout = flag_duration(flags.lock_timeout);
  if (options.lock_timeout > Millis(600000)) {
    throw InvalidArgument("--lock-timeout: must be at most 10min, got " + flags.lock_timeout);
  }
  options.batch_items = flags.batch_items;
  return options;
}

// The lock a move's statement gave up on, from the PL/pgSQL context of its lock_timeout error.
std::string lock_named_in(const std::string& error_text) {
  if (error_text.find("pg_advisory_xact_lock") != std::string::npos) {
    return "the tenant's move lock (held by another move of the tenant, or by a producer creating its zone)";
  }
  if (error_text.find("placement_guards") != std::string::npos) {
    return "the tenant's placement guard (held by another move of a tenant sharing its guard)";
  }
  if (error_text.find("quick.pointers") != std::string::npos) {
    return "the lock on the tenant's zone (held by a consumer visiting it, or by a producer's open transaction "
           "enqueuing for the tenant)";
  }
  if (error_text.find("quick.dead_items") != std::string::npos) return "the locks on the tenant's dead items";
  if (error_text.find("quick.items") != std::string::npos) {
    return "the locks on the tenant's items (held by workers finishing them)";
  }
  return "a lock on the tenant's rows";
}

// Why a move of `tenant` to `to` failed, in words an operator can act on.
std::string describe_move_failure(const std::exception& error, const PlacementConfig& config, const std::string& tenant,
                                  const std::string& to, const MoveFlags& flags) {
  const std::string what = redact_passwords(error.what());
  if (const auto* moved = dynamic_cast<const TenantMoved*>(&error)) {
    std::string text = "the directory in database " + config.directory + " and the databases disagree: " + what;
    if (!moved->moved_to().empty()) {
      text += ". If database " + moved->moved_to() + " holds the tenant's work, `quick tenant place " +
              escape_unprintable(tenant) + " --in " + moved->moved_to() + "` repairs the directory";
    }
    return text;
  }
  if (dynamic_cast<const MoveInDoubt*>(&error) != nullptr) {
    return what +
           ". The move is decided and will complete: `quick tenant move --resume` or `quick doctor` "
           "finishes it";
  }
  if (const auto* sql = dynamic_cast<const pqxx::sql_error*>(&error); sql != nullptr && sql->sqlstate() == "55P03") {
    std::string where = "in a database";
    if (sql->query().find("move_out_begin") != std::string::npos) where = "in the source database";
    if (sql->query().find("move_in_begin") != std::string::npos) where = "in the destination database " + to;
    return "gave up after --lock-timeout " + flags.lock_timeout + " waiting for " + lock_named_in(sql->what()) + " " +
           where + "; nothing moved. Try again, or give a larger --lock-timeout";
  }
  if (dynamic_cast<const pqxx::broken_connection*>(&error) != nullptr) return "cannot reach a database: " + what;
  return what;
}

std::string decision_words(const std::string& decision) { return decision == "commit" ? "committed" : "rolled back"; }

// One line per prepared transaction resolve_moves ended.
void print_resolved(const std::vector<ResolvedMove>& resolved, const std::vector<ResolvedMove>& unknown) {
  if (resolved.empty() && unknown.empty()) {
    std::cout << "no interrupted moves: no prepared transaction was left" << std::endl;
  }
  for (const auto& move : resolved) {
    std::cout << "ended " << move.gid << " in database " << move.database << ": " << move.decision << " ("
              << decision_words(move.decision) << ")" << std::endl;
  }
}

// A prepared transaction resolve_moves left alone: the directory has no record of its move.
std::string unknown_move(const PlacementConfig& config, const ResolvedMove& move) {
  return "move " + move.move_id + ": " + move.gid + " is prepared in database " + move.database +
         ", but the directory in database " + config.directory +
         " has no record of the move: the directory may be the wrong database (--directory, else the first database "
         "of --config; every program must name the same one). Left prepared, neither committed nor rolled back: "
         "run `quick doctor` with the directory the move was begun in";
}

std::string describe_result(const MoveResult& result) {
  std::ostringstream text;
  text << result.items << " items, " << result.dead_items << " dead items in "
       << util::format_duration(std::chrono::duration_cast<std::chrono::microseconds>(result.took)) << " (move "
       << result.move_id << ")";
  return text.str();
}

// ---- quick tenant databases

struct DatabasesCommand {
  PlacementOptions placement;
  bool register_them = false;
  std::vector<std::string> default_rule;
};

int run_databases(const DatabasesCommand& command) {
  const auto config = load_placement(command.placement);
  auto directory = connect_to_directory(config);
  if (!command.register_them) {
    pqxx::nontransaction session(*directory);
    print_result("placement databases in " + config.directory,
                 session.exec("SELECT name, in_default_rule, date_trunc('second', added_at) AS added_at "
                              "FROM quick.placement_databases ORDER BY name"));
    return 0;
  }
  for (const auto& name : command.default_rule) database_named(config, name, "--default-rule");
  std::set<std::string> registered;
  {
    pqxx::nontransaction session(*directory);
    for (const auto& row : session.exec("SELECT name FROM quick.placement_databases")) {
      registered.insert(row[0].as<std::string>());
    }
  }
  // Without --default-rule every new database joins the default rule, which re-places about 1/n
  // of the tenants nobody placed: fine for the first registration, not once tenants have work.
  if (command.default_rule.empty() && !registered.empty()) {
    for (const auto& database : config.databases) {
      if (registered.count(database.name) == 0) {
        throw InvalidArgument("--default-rule: the directory has databases registered already, and adding database " +
                              database.name +
                              " to the default rule would re-place about 1/n of the tenants nobody placed, away "
                              "from their queued work: give --default-rule with the databases that share those "
                              "tenants (databases registered already keep their setting)");
      }
    }
  }
  const auto added = register_placement_databases(config, command.default_rule);
  const std::set<std::string> in_rule(command.default_rule.begin(), command.default_rule.end());
  for (const auto& name : added) {
    const bool shares = in_rule.empty() || in_rule.count(name) > 0;
    std::cout << "registered database " << name << (shares ? " (in the default rule)" : " (outside the default rule)")
              << std::endl;
  }
  if (added.empty()) {
    std::cout << "nothing to register: every database of " << command.placement.config_file << " is registered already"
              << std::endl;
  }
  return 0;
}

// ---- quick tenant where

struct WhereCommand {
  PlacementOptions placement;
  std::string tenant;
};

int run_where(const WhereCommand& command) {
  const auto config = load_placement(command.placement);
  auto directory = connect_to_directory(config);
  const std::string database = tenant_database(*directory, command.tenant);
  if (database.empty()) {
    std::cerr << "quick tenant where: " << no_databases_registered(config) << std::endl;
    return 1;
  }
  pqxx::nontransaction session(*directory);
  const auto placed = session.exec_params(
      "SELECT move_id::text, date_trunc('second', placed_at)::text FROM quick.tenant_placements WHERE tenant = $1",
      command.tenant);
  std::cout << "tenant " << escape_unprintable(command.tenant) << " is in database " << database;
  if (placed.empty()) {
    std::cout << " (by the default rule)";
  } else if (placed[0][0].is_null()) {
    std::cout << " (placed explicitly by an operator at " << placed[0][1].c_str() << ")";
  } else {
    std::cout << " (placed explicitly by move " << placed[0][0].c_str() << " at " << placed[0][1].c_str() << ")";
  }
  std::cout << std::endl;
  bool known = false;
  for (const auto& each : config.databases) known = known || each.name == database;
  if (!known) {
    std::cerr << "warning: database " << database << " is not in " << command.placement.config_file
              << ": programs using this configuration cannot reach the tenant" << std::endl;
  }
  return 0;
}

// ---- quick tenant place

struct PlaceCommand {
  PlacementOptions placement;
  std::string tenant;
  std::string database;
};

int run_place(const PlaceCommand& command) {
  const auto config = load_placement(command.placement);
  auto directory = connect_to_directory(config);
  std::string before;
  bool before_explicit = false;
  {
    pqxx::work txn(*directory);
    store::translating_input_errors([&] {
      const auto was = txn.exec_params("SELECT quick.tenant_database($1)", command.tenant).at(0).at(0);
      before = was.is_null() ? "" : was.as<std::string>();
      before_explicit =
          !txn.exec_params("SELECT quick.place_tenant($1, $2)", command.tenant, command.database).at(0).at(0).is_null();
      return 0;
    });
    txn.commit();
  }
  const std::string tenant = escape_unprintable(command.tenant);
  std::cout << "tenant " << tenant << " placed in database " << command.database;
  if (before.empty()) {
    std::cout << " (it had no database before)";
  } else {
    std::cout << " (it was in database " << before
              << (before_explicit ? ", placed explicitly)" : ", by the default rule)");
  }
  std::cout << "; nothing was moved" << std::endl;
  if (before.empty() || before == command.database) return 0;
  // Work left behind stays where it is: say so.
  for (const auto& database : config.databases) {
    if (database.name != before) continue;
    auto conn = connect_to(database);
    pqxx::nontransaction session(*conn);
    const auto row = session
                         .exec_params(
                             "SELECT (SELECT count(*) FROM quick.items WHERE tenant = $1), "
                             "(SELECT count(*) FROM quick.dead_items WHERE tenant = $1)",
                             command.tenant)
                         .at(0);
    const auto items = row[0].as<std::int64_t>();
    const auto dead_items = row[1].as<std::int64_t>();
    if (items + dead_items > 0) {
      std::cerr << "warning: tenant " << tenant << " still has " << items << " items and " << dead_items
                << " dead items in database " << before
                << ", which stay there: `quick tenant move` moves a tenant with its work" << std::endl;
    }
  }
  return 0;
}

// ---- quick tenant move

struct MoveCommand {
  PlacementOptions placement;
  std::string tenant;
  std::string to;
  MoveFlags flags;
  bool resume = false;
};

int run_move(const MoveCommand& command) {
  if (command.tenant.empty() && !command.to.empty()) throw InvalidArgument("quick tenant move: --to needs a TENANT");
  if (!command.tenant.empty() && command.to.empty()) throw InvalidArgument("quick tenant move: TENANT needs --to NAME");
  if (!command.resume && command.tenant.empty()) {
    throw InvalidArgument("quick tenant move: give TENANT and --to NAME, or --resume to end interrupted moves");
  }
  const auto config = load_placement(command.placement);
  const auto options = move_options(command.flags);
  if (!command.to.empty()) database_named(config, command.to, "--to");
  if (command.resume) {
    std::vector<ResolvedMove> unknown;
    print_resolved(resolve_moves(config, &unknown), unknown);
    for (const auto& move : unknown) std::cerr << "quick tenant move: " << unknown_move(config, move) << std::endl;
    if (!unknown.empty()) return 1;
  }
  if (command.tenant.empty()) return 0;

  const std::string tenant = escape_unprintable(command.tenant);
  MoveResult result;
  try {
    result = move_tenant(config, command.tenant, command.to, options);
  } catch (const InvalidArgument&) {
    throw;
  } catch (const std::exception& error) {
    std::cerr << "quick tenant move: tenant " << tenant << " was not moved to " << command.to << ": "
              << describe_move_failure(error, config, command.tenant, command.to, command.flags) << std::endl;
    return 1;
  }
  if (result.already_there) {
    std::cout << "tenant " << tenant << " is already in " << command.to << ": nothing to move" << std::endl;
    return 0;
  }
  std::cout << "tenant " << tenant << " moved from " << result.from_database << " to " << result.to_database << ": "
            << describe_result(result) << std::endl;
  return 0;
}

// ---- quick tenant rebalance

struct RebalanceCommand {
  PlacementOptions placement;
  std::string from;
  std::vector<std::string> to;
  int max_tenants = 100;
  MoveFlags flags;
};

int run_rebalance(const RebalanceCommand& command) {
  const auto config = load_placement(command.placement);
  const auto options = move_options(command.flags);
  const auto& source = database_named(config, command.from, "--from");
  for (const auto& name : command.to) {
    database_named(config, name, "--to");
    if (name == command.from) throw InvalidArgument("--to: database " + name + " is --from too");
  }
  std::vector<std::string> tenants;
  {
    auto conn = connect_to(source);
    pqxx::nontransaction session(*conn);
    for (const auto& row : session.exec_params("SELECT DISTINCT tenant FROM quick.pointers "
                                               "WHERE left(tenant, 7) <> '@local:' ORDER BY tenant LIMIT $1",
                                               command.max_tenants)) {
      tenants.push_back(row[0].as<std::string>());
    }
  }
  if (tenants.empty()) {
    std::cout << "no tenant has a zone in database " << command.from << ": nothing to move" << std::endl;
    return 0;
  }
  auto directory = connect_to_directory(config);
  std::int64_t moved = 0, failed = 0, items = 0, dead_items = 0;
  std::size_t next_target = 0;
  for (const auto& tenant : tenants) {
    const std::string printable = escape_unprintable(tenant);
    const std::string& to = command.to[next_target % command.to.size()];
    try {
      // A zone left where the directory does not place the tenant is not what --from asks to move.
      const std::string placed = tenant_database(*directory, tenant);
      if (placed != command.from) {
        std::cout << printable << ": skipped: the directory places it in "
                  << (placed.empty() ? "no database" : "database " + placed) << ", not in " << command.from
                  << std::endl;
        ++failed;
        continue;
      }
      ++next_target;
      const auto result = move_tenant(config, tenant, to, options);
      std::cout << printable << " -> " << to << ": " << describe_result(result) << std::endl;
      ++moved;
      items += result.items;
      dead_items += result.dead_items;
    } catch (const std::exception& error) {
      std::cout << printable << " -> " << to
                << ": failed: " << describe_move_failure(error, config, tenant, to, command.flags) << std::endl;
      ++failed;
    }
  }
  std::cout << "moved " << moved << " of " << tenants.size() << " tenants from " << command.from << " (" << items
            << " items, " << dead_items << " dead items); " << failed << " failed" << std::endl;
  return failed == 0 ? 0 : 1;
}

// ---- quick doctor

struct DoctorCommand {
  PlacementOptions placement;
};

// The databases holding a prepared transaction of move `move_id` now.
std::vector<std::string> still_prepared(const PlacementConfig& config, const std::string& move_id) {
  std::vector<std::string> where;
  for (const auto& database : config.databases) {
    auto conn = connect_to(database);
    pqxx::nontransaction session(*conn);
    if (session
            .exec_params("SELECT 1 FROM pg_prepared_xacts WHERE database = current_database() AND gid LIKE $1",
                         "quick_move:" + move_id + ":%")
            .size() > 0) {
      where.push_back(database.name);
    }
  }
  return where;
}

int run_doctor(const DoctorCommand& command) {
  const auto config = load_placement(command.placement);
  int problems = 0;
  auto problem = [&problems](const std::string& text) {
    std::cout << "PROBLEM: " << text << std::endl;
    ++problems;
  };
  std::cout << "placement directory: database " << config.directory << std::endl;
  bool all_reachable = true;
  for (const auto& database : config.databases) {
    try {
      auto conn = connect_to(database);
      pqxx::nontransaction session(*conn);
      const auto prepared = session.exec("SELECT current_setting('max_prepared_transactions')::int").at(0).at(0);
      if (prepared.as<int>() <= 0) {
        problem("database " + database.name +
                ": max_prepared_transactions is 0, so tenant moves cannot commit there (they use PREPARE "
                "TRANSACTION): set it above 0 and restart Postgres");
      } else {
        std::cout << "database " << database.name << ": ok (max_prepared_transactions = " << prepared.c_str() << ")"
                  << std::endl;
      }
    } catch (const std::exception& error) {
      problem(redact_passwords(error.what()));
      all_reachable = false;
    }
  }
  if (!all_reachable) {
    problem("interrupted moves not checked: every database must be reachable and migrated for that");
    return 1;
  }

  const auto summary = [&problems] {
    std::cout << (problems == 0 ? "healthy" : std::to_string(problems) + " problem(s)") << std::endl;
    return problems == 0 ? 0 : 1;
  };
  // Recovery against a database that is not the directory would find no move's decision there.
  auto directory = connect_to_directory(config);
  pqxx::nontransaction session(*directory);
  const auto registered = session.exec("SELECT name FROM quick.placement_databases ORDER BY name");
  if (registered.empty()) {
    problem(no_databases_registered(config) + " (or it is not the directory: --directory, else the first database of " +
            command.placement.config_file + "); interrupted moves not checked");
    return summary();
  }

  std::vector<ResolvedMove> unknown;
  const auto resolved = resolve_moves(config, &unknown);
  std::cout << "interrupted moves: " << (resolved.empty() ? "none" : std::to_string(resolved.size()) + " ended")
            << std::endl;
  for (const auto& move : resolved) {
    std::cout << "  ended " << move.gid << " in database " << move.database << ": " << move.decision << " ("
              << decision_words(move.decision) << ")" << std::endl;
  }
  for (const auto& move : unknown) problem(unknown_move(config, move));

  for (const auto& row : registered) {
    const std::string name = row[0].as<std::string>();
    bool known = false;
    for (const auto& database : config.databases) known = known || database.name == name;
    if (!known) {
      problem("database " + name + " is registered in the directory but not in " + command.placement.config_file +
              ": programs using this configuration cannot reach the tenants placed there");
    }
  }

  const auto undecided = session.exec(
      "SELECT move_id::text, tenant, from_database, to_database, date_trunc('second', started_at) AS started_at "
      "FROM quick.tenant_moves WHERE decision IS NULL ORDER BY started_at");
  for (const auto& row : undecided) {
    problem("move " + std::string(row[0].c_str()) + " of tenant " + escape_unprintable(row[1].c_str()) + " from " +
            row[2].c_str() + " to " + row[3].c_str() + " (started " + row[4].c_str() +
            ") is undecided and its mover is still running (recovery leaves a live mover alone): run `quick doctor` "
            "again when it is done");
  }
  // Decided moves whose transactions are all ended are finished in fact: mark them so. (A move
  // that failed before its decision is aborted without being marked finished.)
  const auto unfinished = session.exec(
      "SELECT move_id::text, tenant, decision FROM quick.tenant_moves "
      "WHERE decision IS NOT NULL AND finished_at IS NULL ORDER BY decided_at");
  for (const auto& row : unfinished) {
    const std::string move_id = row[0].c_str();
    const auto where = still_prepared(config, move_id);
    if (where.empty()) {
      session.exec_params("SELECT quick.finish_move($1::uuid)", move_id);
      std::cout << "move " << move_id << " of tenant " << escape_unprintable(row[1].c_str()) << " (" << row[2].c_str()
                << "): nothing left prepared; marked finished" << std::endl;
      continue;
    }
    std::string databases;
    for (const auto& name : where) databases += (databases.empty() ? "" : ", ") + name;
    problem("move " + move_id + " of tenant " + escape_unprintable(row[1].c_str()) + " is decided (" + row[2].c_str() +
            ") but still prepared in database " + databases +
            ": a mover is finishing it now, or run `quick doctor` again");
  }
  return summary();
}

}  // namespace

void add_placement_commands(CLI::App& app) {
  auto* tenant = app.get_subcommand("tenant");  // add_pause_commands made it
  tenant->description("Pause, resume, place and move tenants (queue zones)");

  auto databases = std::make_shared<DatabasesCommand>();
  auto* databases_command = tenant->add_subcommand(
      "databases", "List the databases tenants may be placed in (quick.placement_databases), or --register them");
  add_placement_options(*databases_command, databases->placement);
  auto* register_flag = databases_command->add_flag(
      "--register", databases->register_them,
      "register the databases of --config in the directory (those registered already are left as they are)");
  databases_command
      ->add_option("--default-rule", databases->default_rule,
                   "with --register: the databases that share the tenants nobody placed (default: all, allowed "
                   "only when none is registered yet); the others take tenants only by moves")
      ->delimiter(',')
      ->needs(register_flag);
  on_selected(*databases_command, [databases] { return run_databases(*databases); });

  auto where = std::make_shared<WhereCommand>();
  auto* where_command = tenant->add_subcommand("where", "Say which database holds a tenant, and why");
  add_placement_options(*where_command, where->placement);
  where_command->add_option("tenant", where->tenant, "tenant")->required();
  on_selected(*where_command, [where] { return run_where(*where); });

  auto place = std::make_shared<PlaceCommand>();
  auto* place_command = tenant->add_subcommand(
      "place",
      "Record in the directory that a tenant is in a database. MOVES NOTHING: its queued work stays where it is; "
      "for new tenants, or to repair the directory. `quick tenant move` moves a tenant with its work");
  add_placement_options(*place_command, place->placement);
  place_command->add_option("tenant", place->tenant, "tenant")->required();
  place_command->add_option("--in", place->database, "the database's name (registered in the directory)")->required();
  on_selected(*place_command, [place] { return run_place(*place); });

  auto move = std::make_shared<MoveCommand>();
  auto* move_command = tenant->add_subcommand(
      "move", "Move a tenant with its queued items, dead items and pause to another database (two-phase commit)");
  add_placement_options(*move_command, move->placement);
  move_command->add_option("tenant", move->tenant, "tenant (optional with --resume)");
  move_command->add_option("--to", move->to, "the destination database's name in --config");
  add_move_flags(*move_command, move->flags);
  move_command->add_flag("--resume", move->resume,
                         "first end the prepared transactions interrupted moves left, as their decisions say");
  on_selected(*move_command, [move] { return run_move(*move); });

  auto rebalance = std::make_shared<RebalanceCommand>();
  auto* rebalance_command = tenant->add_subcommand(
      "rebalance", "Move the tenants with zones in one database to others, round-robin, one at a time");
  add_placement_options(*rebalance_command, rebalance->placement);
  rebalance_command->add_option("--from", rebalance->from, "the database to take tenants from")->required();
  rebalance_command->add_option("--to", rebalance->to, "the databases to move them to, comma-separated")
      ->required()
      ->delimiter(',');
  rebalance_command->add_option("--max-tenants", rebalance->max_tenants, "move at most this many (by tenant name)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  add_move_flags(*rebalance_command, rebalance->flags);
  on_selected(*rebalance_command, [rebalance] { return run_rebalance(*rebalance); });

  auto doctor = std::make_shared<DoctorCommand>();
  auto* doctor_command = app.add_subcommand(
      "doctor",
      "Check the databases of a configuration for tenant moves: end interrupted moves, report undecided ones, "
      "check max_prepared_transactions; exit 0 when healthy");
  add_placement_options(*doctor_command, doctor->placement);
  on_selected(*doctor_command, [doctor] { return run_doctor(*doctor); });
}

}  // namespace quick::cli
