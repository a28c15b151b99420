// What every part of placement does with a PlacementConfig: find a database by name, connect to
// it, and ask the directory where a tenant is.
#pragma once

#include <memory>
#include <string>

#include <pqxx/pqxx>

#include "quick/placement.h"

namespace quick::placement {

// The database called `name`; InvalidArgument when the configuration has none.
const DatabaseConfig& database_named(const PlacementConfig& config, const std::string& name);

// A new connection to database `name` (connect_timeout 5 s unless its url sets one).
std::unique_ptr<pqxx::connection> connect_to(const PlacementConfig& config, const std::string& name);

// Throws InvalidArgument when the database `directory` is connected to (no transaction open) has no
// databases registered (quick.placement_databases): it is not the placement directory (a
// configuration listing the databases in another order, a wrong --directory), and nothing may be
// decided or recovered there. `name` is its name in the configuration ("" when not known).
void require_databases_registered(pqxx::connection_base& directory, const std::string& name);

// The directory's answer for `tenant` (quick.tenant_database), read on `directory`, a connection
// to config.directory with no transaction open. InvalidArgument when no database is registered.
std::string tenant_database(const PlacementConfig& config, pqxx::connection_base& directory, const std::string& tenant);

}  // namespace quick::placement
