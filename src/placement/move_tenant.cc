// move_tenant: a whole move in connections of its own, as `quick tenant move` runs it.
#include "quick/database.h"
#include "quick/placement.h"
#include "store/sql_errors.h"

namespace quick {

namespace {

std::unique_ptr<pqxx::connection> connect_to(const PlacementConfig& config, const std::string& name) {
  for (const auto& database : config.databases) {
    if (database.name == name) return connect(with_default_connect_timeout(database.url, 5));
  }
  throw InvalidArgument("placement: no database named \"" + name + "\" in this configuration");
}

}  // namespace

MoveResult move_tenant(const PlacementConfig& config, const std::string& tenant, const std::string& to,
                       const MoveOptions& options,
                       const std::function<void(pqxx::work& source, pqxx::work& destination)>& move_application_rows,
                       const std::function<void(MoveStep)>& on_step) {
  validate(config);
  auto destination_conn = connect_to(config, to);  // an unknown `to` fails before anything runs
  resolve_moves(config);
  auto directory = connect_to(config, config.directory);
  std::string from;
  {
    pqxx::nontransaction session(*directory);
    const auto value = store::translating_input_errors(
        [&] { return session.exec_params("SELECT quick.tenant_database($1)", tenant).at(0).at(0); });
    if (value.is_null()) {
      throw InvalidArgument("placement: the directory in database \"" + config.directory +
                            "\" has no databases registered (quick tenant databases --register)");
    }
    from = value.as<std::string>();
  }
  if (from == to) {
    MoveResult result;
    result.tenant = tenant;
    result.from_database = from;
    result.to_database = to;
    result.already_there = true;
    return result;
  }
  auto source_conn = connect_to(config, from);
  TenantMove move(tenant, from, to, options);
  move.on_step = on_step;
  pqxx::work source(*source_conn);
  pqxx::work destination(*destination_conn);
  move.move_rows(source, destination);
  if (move_application_rows) move_application_rows(source, destination);
  move.commit(source, destination, *directory);
  return move.result();
}

}  // namespace quick
