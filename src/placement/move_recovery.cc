// resolve_moves: ends the prepared transactions that interrupted moves left behind, as their
// decisions in the directory say (docs/scaling.md#crash-safety).
#include <chrono>
#include <thread>

#include "placement/move_statements.h"
#include "quick/database.h"
#include "quick/placement.h"

namespace quick {

std::vector<ResolvedMove> resolve_moves(const PlacementConfig& config) {
  validate(config);
  std::unique_ptr<pqxx::connection> directory;
  for (const auto& database : config.databases) {
    if (database.name == config.directory) directory = connect(with_default_connect_timeout(database.url, 5));
  }
  std::vector<ResolvedMove> resolved;
  for (const auto& database : config.databases) {
    auto conn = connect(with_default_connect_timeout(database.url, 5));
    std::vector<std::string> gids;
    {
      pqxx::nontransaction session(*conn);
      for (const auto& row : session.exec("SELECT gid FROM pg_prepared_xacts WHERE database = current_database() "
                                          "AND gid LIKE 'quick_move:%' ORDER BY prepared")) {
        gids.push_back(row[0].as<std::string>());
      }
    }
    for (const auto& gid : gids) {
      // quick_move:<36-character move id>:source|destination
      const std::string move_id = gid.substr(std::string("quick_move:").size(), 36);
      // A mover that is still running holds its move's liveness lock: its transactions are not
      // interrupted, they are about to be committed or rolled back by it.
      // A mover that died a moment ago may still hold it, until its server process notices the
      // closed connection: wait a little before taking the move for a live one.
      bool taken = false;
      for (int attempt = 0; attempt < 20 && !taken; ++attempt) {
        taken = placement::MoverLiveness::try_take(*directory, move_id);
        if (!taken) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      if (!taken) continue;
      try {
        // An undecided move is aborted here, first in the directory, so that its mover, should
        // it still run, finds the decision taken and rolls back too.
        std::string decision = placement::decide(*directory, move_id, "abort", "recovery", 0);
        if (decision.empty()) decision = "abort";  // never begun: nothing can commit it
        if (placement::end_prepared(*conn, gid, decision == "commit")) {
          resolved.push_back({database.name, gid, move_id, decision});
        }
      } catch (...) {
        placement::MoverLiveness::release(*directory, move_id);
        throw;
      }
      placement::MoverLiveness::release(*directory, move_id);
    }
  }
  // Moves whose every prepared transaction is ended are finished.
  for (const auto& move : resolved) {
    pqxx::nontransaction session(*directory);
    session.exec_params("SELECT quick.finish_move($1::uuid)", move.move_id);
  }
  return resolved;
}

}  // namespace quick
