// PlacementConfig validation, local tenant keys, and registering databases in the directory.
#include <set>

#include "placement/named_database.h"
#include "quick/database.h"
#include "quick/placement.h"
#include "store/sql_errors.h"

namespace quick {

namespace {
constexpr const char* kLocalPrefix = "@local:";
}  // namespace

void validate(const PlacementConfig& config) {
  if (config.databases.empty()) throw InvalidArgument("placement: databases must name at least one database");
  std::set<std::string> names;
  for (std::size_t i = 0; i < config.databases.size(); ++i) {
    const auto& database = config.databases[i];
    const std::string where = "placement: databases[" + std::to_string(i) + "]";
    if (database.name.empty() || database.name.size() > 100) {
      throw InvalidArgument(where + ".name must be 1 to 100 characters, got " + std::to_string(database.name.size()));
    }
    if (!names.insert(database.name).second) {
      throw InvalidArgument(where + ".name \"" + database.name + "\" is given to two databases");
    }
    try {
      validate_connection_string(database.url);
    } catch (const InvalidArgument& error) {
      throw InvalidArgument(where + ".url: " + error.what());
    }
  }
  if (names.count(config.directory) == 0) {
    throw InvalidArgument("placement: directory \"" + config.directory + "\" is not the name of one of the databases");
  }
  if (config.route_cache_ttl < Millis(0) || config.route_cache_ttl > Millis(3600000)) {
    throw InvalidArgument("placement: route_cache_ttl must be between 0 and 1h, got " +
                          std::to_string(config.route_cache_ttl.count()) + "ms");
  }
  if (config.route_cache_max < 1) throw InvalidArgument("placement: route_cache_max must be at least 1, got 0");
}

PlacementConfig placement_from(const ConsumerConfig& config, const std::string& directory) {
  PlacementConfig placement;
  placement.databases = config.databases;
  for (std::size_t i = 0; i < placement.databases.size(); ++i) {
    if (placement.databases[i].name.empty()) placement.databases[i].name = "db" + std::to_string(i + 1);
  }
  placement.directory = directory.empty() && !placement.databases.empty() ? placement.databases.front().name
                                                                          : directory;
  validate(placement);
  return placement;
}

std::string local_tenant(const std::string& name) {
  if (name.empty() || name.size() > 193) {
    throw InvalidArgument("local_tenant: name must be 1 to 193 characters, got " + std::to_string(name.size()));
  }
  return kLocalPrefix + name;
}

bool is_local_tenant(const std::string& tenant) { return tenant.rfind(kLocalPrefix, 0) == 0; }

std::vector<std::string> register_placement_databases(const PlacementConfig& config,
                                                      const std::vector<std::string>& default_rule) {
  validate(config);
  const std::set<std::string> in_rule(default_rule.begin(), default_rule.end());
  for (const auto& name : in_rule) {
    bool known = false;
    for (const auto& database : config.databases) known = known || database.name == name;
    if (!known) throw InvalidArgument("placement: default_rule names \"" + name + "\", which is not a database");
  }
  auto conn = placement::connect_to(config, config.directory);
  pqxx::work txn(*conn);
  std::vector<std::string> added;
  for (const auto& database : config.databases) {
    const bool in_default_rule = in_rule.empty() || in_rule.count(database.name) > 0;
    const bool is_new = store::translating_input_errors([&] {
      return txn.exec_params("SELECT quick.add_placement_database($1, $2)", database.name, in_default_rule)
          .at(0)
          .at(0)
          .as<bool>();
    });
    if (is_new) added.push_back(database.name);
  }
  txn.commit();
  return added;
}

}  // namespace quick
