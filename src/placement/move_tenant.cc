// move_tenant: a whole move in connections of its own, as `quick tenant move` runs it.
#include "placement/named_database.h"
#include "quick/placement.h"

namespace quick {

using placement::connect_to;

MoveResult move_tenant(const PlacementConfig& config, const std::string& tenant, const std::string& to,
                       const MoveOptions& options,
                       const std::function<void(pqxx::work& source, pqxx::work& destination)>& move_application_rows,
                       const std::function<void(MoveStep)>& on_step) {
  validate(config);
  auto destination_conn = connect_to(config, to);  // an unknown `to` fails before anything runs
  resolve_moves(config);
  auto directory = connect_to(config, config.directory);
  const std::string from = placement::tenant_database(config, *directory, tenant);
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
