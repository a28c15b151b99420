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
