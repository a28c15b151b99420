// The statements of a tenant move, one function each (the SQL side is sql/functions/move_*.sql and
// the directory's begin_move / decide_move / finish_move). Kept apart from TenantMove so that its
// file reads as the protocol.
#pragma once

#include <cstdint>
#include <string>

#include <pqxx/pqxx>

#include "quick/placement.h"

namespace quick::placement {

struct MoveOutPlan {
  std::int64_t items = 0;
  std::int64_t dead_items = 0;
  bool paused = false;
  std::string pause_reason;  // "" when none
};

struct Deleted {
  std::int64_t items = 0;
  std::int64_t dead_items = 0;
};

enum class Copied { kItems, kDeadItems };

MoveOutPlan begin_move_out(pqxx::transaction_base& source, const std::string& tenant, const std::string& to,
                           const std::string& move_id);
void begin_move_in(pqxx::transaction_base& destination, const std::string& tenant, const std::string& from,
                   const std::string& move_id);
// Copies the tenant's items (or dead items) in batches; returns how many were read at the source.
std::int64_t copy_batches(pqxx::transaction_base& source, pqxx::transaction_base& destination,
                          const std::string& tenant, int batch_items, Copied what);
Deleted finish_move_out(pqxx::transaction_base& source, const std::string& tenant, const std::string& move_id);
void finish_move_in(pqxx::transaction_base& destination, const std::string& tenant, bool paused,
                    const std::string& pause_reason);

// PREPARE TRANSACTION `gid`, ending `txn` whether it succeeds or throws (it must not be used
// afterwards). Returns false when the transaction had failed before (an SQL error that the caller
// caught and went on from): Postgres then rolls it back instead, without an error.
bool prepare(pqxx::transaction_base& txn, const std::string& gid);
// Rolls back `txn` unless it has ended already; never throws.
void abort_quietly(pqxx::transaction_base& txn) noexcept;
// COMMIT PREPARED / ROLLBACK PREPARED on a connection with no transaction open. Returns false when
// there was no such prepared transaction (another process, recovery or the mover, ended it: how,
// it cannot tell).
bool end_prepared(pqxx::connection_base& conn, const std::string& gid, bool commit);
// The same, for clean-up on an error path: failures are swallowed (recovery ends what is left).
void try_end_prepared(pqxx::connection_base& conn, const std::string& gid, bool commit) noexcept;

// A session-level advisory lock in the directory that a mover holds from before it prepares
// until it has committed, so that recovery leaves a live mover's prepared transactions alone (it
// ends them only when it can take the lock: the mover finished, or its session ended with it).
class MoverLiveness {
 public:
  MoverLiveness(pqxx::connection_base& directory, const std::string& move_id);  // waits for the lock
  ~MoverLiveness();
  MoverLiveness(const MoverLiveness&) = delete;
  MoverLiveness& operator=(const MoverLiveness&) = delete;
  // Takes the lock of move `move_id` if no mover holds it; the caller releases it with release().
  static bool try_take(pqxx::connection_base& directory, const std::string& move_id);
  static void release(pqxx::connection_base& directory, const std::string& move_id) noexcept;

 private:
  pqxx::connection_base& directory_;
  std::string move_id_;
};

void record_move_start(pqxx::connection_base& directory, const MoveResult& move);
// The decision in force after this call ("" for a move never begun).
std::string decide(pqxx::connection_base& directory, const std::string& move_id, const std::string& decision,
                   const std::string& decided_by, std::int64_t items);
void try_decide(pqxx::connection_base& directory, const std::string& move_id, const std::string& decision) noexcept;
// Marks the move finished in the directory and wakes the destination's consumers; failures are
// swallowed (the move is complete; only its bookkeeping is late).
void finish_move(pqxx::connection_base& directory, pqxx::connection_base& destination,
                 const std::string& move_id) noexcept;

}  // namespace quick::placement
