#include "placement/named_database.h"

#include "quick/database.h"
#include "store/sql_errors.h"

namespace quick::placement {

const DatabaseConfig& database_named(const PlacementConfig& config, const std::string& name) {
  for (const auto& database : config.databases) {
    if (database.name == name) return database;
  }
  throw InvalidArgument("placement: no database named \"" + name + "\" in this configuration");
}

std::unique_ptr<pqxx::connection> connect_to(const PlacementConfig& config, const std::string& name) {
  return connect(with_default_connect_timeout(database_named(config, name).url, 5));
}

void require_databases_registered(pqxx::connection_base& directory, const std::string& name) {
  pqxx::nontransaction session(directory);
  const auto row = session.exec("SELECT EXISTS (SELECT 1 FROM quick.placement_databases), current_database()").at(0);
  if (row[0].as<bool>()) return;
  const std::string which = name.empty() ? "the Postgres database " + row[1].as<std::string>()
                                         : "database \"" + name + "\"";
  throw InvalidArgument("placement: the directory in " + which +
                        " has no databases registered (quick tenant databases --register): it may be the wrong "
                        "database (every program must name the same directory: quick's --directory, else the first "
                        "database of --config), and no move is decided or recovered there");
}

std::string tenant_database(const PlacementConfig& config, pqxx::connection_base& directory,
                            const std::string& tenant) {
  pqxx::nontransaction session(directory);
  const auto value = store::translating_input_errors(
      [&] { return session.exec_params("SELECT quick.tenant_database($1)", tenant).at(0).at(0); });
  if (value.is_null()) {
    throw InvalidArgument("placement: the directory in database \"" + config.directory +
                          "\" has no databases registered (quick tenant databases --register)");
  }
  return value.as<std::string>();
}

}  // namespace quick::placement
