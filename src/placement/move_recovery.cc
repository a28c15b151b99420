// resolve_moves: ends the moves that their movers left unfinished (the process killed, a database
// restarted) as their decisions in the directory say (docs/scaling.md#crash-safety).
#include <chrono>
#include <map>
#include <thread>

#include "placement/move_statements.h"
#include "placement/named_database.h"
#include "quick/placement.h"

namespace quick {

namespace {

// A mover that is still running holds its move's liveness lock: its transactions are not
// interrupted, they are about to be committed or rolled back by it. One that died a moment ago
// may still hold it, until its server process notices the closed connection: wait a little
// before taking the move for a live one.
bool take_abandoned_move(pqxx::connection_base& directory, const std::string& move_id) {
  for (int attempt = 0; attempt < 20; ++attempt) {
    if (placement::MoverLiveness::try_take(directory, move_id)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

struct Prepared {
  std::string database;
  std::string gid;
};

// Why the prepared transactions of moves the directory has no record of were left alone.
std::string describe_unknown(const PlacementConfig& config, const std::vector<ResolvedMove>& unknown) {
  std::string text = "resolve_moves: the directory in database \"" + config.directory + "\" has no record of ";
  std::string last_move;
  for (const auto& move : unknown) {
    if (move.move_id != last_move) {
      text += (last_move.empty() ? "move " : "), move ") + move.move_id + " (prepared: ";
    } else {
      text += ", ";
    }
    text += move.gid + " in database " + move.database;
    last_move = move.move_id;
  }
  return text +
         "): it may be the wrong database (every program must name the same directory: quick's --directory, else "
         "the first database of --config). Those transactions were left prepared, neither committed nor rolled "
         "back: run recovery against the directory the move was begun in";
}

}  // namespace

std::vector<ResolvedMove> resolve_moves(const PlacementConfig& config, std::vector<ResolvedMove>* unknown) {
  validate(config);
  std::map<std::string, std::unique_ptr<pqxx::connection>> connections;
  for (const auto& database : config.databases) {
    connections[database.name] = placement::connect_to(config, database.name);
  }
  pqxx::connection_base& directory = *connections.at(config.directory);
  placement::require_databases_registered(directory, config.directory);

  // The moves to look at: those with a prepared transaction somewhere, and those the directory
  // has as begun but undecided (a mover that died before it prepared anything, or while it did).
  std::map<std::string, std::vector<Prepared>> moves;
  for (const auto& database : config.databases) {
    pqxx::nontransaction session(*connections.at(database.name));
    for (const auto& row : session.exec("SELECT gid FROM pg_prepared_xacts WHERE database = current_database() "
                                        "AND gid LIKE 'quick_move:%' ORDER BY prepared")) {
      const std::string gid = row[0].as<std::string>();
      // quick_move:<36-character move id>:source|destination
      moves[gid.substr(std::string("quick_move:").size(), 36)].push_back({database.name, gid});
    }
  }
  {
    pqxx::nontransaction session(directory);
    for (const auto& row : session.exec("SELECT move_id::text FROM quick.tenant_moves WHERE decision IS NULL")) {
      moves[row[0].as<std::string>()];
    }
  }

  std::vector<ResolvedMove> resolved;
  std::vector<ResolvedMove> not_in_directory;
  for (const auto& [move_id, prepared] : moves) {
    if (!take_abandoned_move(directory, move_id)) continue;
    try {
      // An undecided move is aborted here, first in the directory, so that its mover, should it
      // still run, finds the decision taken and rolls back too.
      const std::string decision = placement::decide(directory, move_id, "abort", "recovery", 0);
      if (decision.empty()) {
        // The directory has no record of the move, although a mover records it (begin_move) before
        // it prepares anything: this is not the directory it was begun in, whose decision may be
        // "commit" and whose mover may be running (its liveness lock is that database's). Leave it.
        for (const auto& transaction : prepared) {
          not_in_directory.push_back({transaction.database, transaction.gid, move_id, ""});
        }
      } else {
        for (const auto& transaction : prepared) {
          if (placement::end_prepared(*connections.at(transaction.database), transaction.gid, decision == "commit")) {
            resolved.push_back({transaction.database, transaction.gid, move_id, decision});
          }
        }
        pqxx::nontransaction session(directory);
        session.exec_params("SELECT quick.finish_move($1::uuid)", move_id);
      }
    } catch (...) {
      placement::MoverLiveness::release(directory, move_id);
      throw;
    }
    placement::MoverLiveness::release(directory, move_id);
  }
  if (!not_in_directory.empty()) {
    if (unknown == nullptr) throw Error(describe_unknown(config, not_in_directory));
    unknown->insert(unknown->end(), not_in_directory.begin(), not_in_directory.end());
  }
  return resolved;
}

}  // namespace quick
