// TenantMove: one tenant's queue rows moved between two databases in the caller's transactions,
// committed together by two-phase commit with the decision recorded in the directory
// (docs/scaling.md#moving-a-tenant).
#include <cstdio>
#include <random>
#include <sstream>

#include "placement/move_statements.h"
#include "placement/named_database.h"
#include "quick/placement.h"
#include "store/sql_errors.h"

namespace quick {

namespace {

std::string random_uuid() {
  std::random_device device;
  std::mt19937_64 random((static_cast<std::uint64_t>(device()) << 32) ^ device());
  std::uint64_t high = random();
  std::uint64_t low = random();
  high = (high & 0xffffffffffff0fffULL) | 0x0000000000004000ULL;  // version 4
  low = (low & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;    // RFC 4122 variant
  char text[37];
  std::snprintf(text, sizeof text, "%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(high >> 32),
                static_cast<unsigned>((high >> 16) & 0xffff), static_cast<unsigned>(high & 0xffff),
                static_cast<unsigned>(low >> 48), static_cast<unsigned long long>(low & 0xffffffffffffULL));
  return text;
}

void require_read_committed(pqxx::transaction_base& txn, const char* which) {
  const auto level = txn.exec("SHOW transaction_isolation").at(0).at(0).as<std::string>();
  if (level != "read committed") {
    throw InvalidArgument(std::string("TenantMove: the ") + which +
                          " transaction must be READ COMMITTED (the move reads what it locked), got " + level);
  }
}

// PREPARE TRANSACTION found the transaction failed already, and rolled it back.
std::string not_prepared(const std::string& move_id, const char* which) {
  return "TenantMove " + move_id + ": the " + which +
         "'s transaction had failed before it was prepared (an SQL error in it was caught and the transaction used "
         "on; PREPARE TRANSACTION rolled it back): both transactions are rolled back, nothing moved";
}

}  // namespace

const char* to_string(MoveStep step) {
  switch (step) {
    case MoveStep::kLocked: return "locked";
    case MoveStep::kCopied: return "copied";
    case MoveStep::kDestinationPrepared: return "destination-prepared";
    case MoveStep::kSourcePrepared: return "source-prepared";
    case MoveStep::kDecided: return "decided";
    case MoveStep::kDestinationCommitted: return "destination-committed";
    case MoveStep::kSourceCommitted: return "source-committed";
  }
  return "unknown";
}

TenantMove::TenantMove(std::string tenant, std::string from_database, std::string to_database, MoveOptions options)
    : options_(options), started_(std::chrono::steady_clock::now()) {
  if (tenant.empty() || tenant.size() > 200) {
    throw InvalidArgument("TenantMove: tenant must be 1 to 200 characters, got " + std::to_string(tenant.size()));
  }
  if (is_local_tenant(tenant)) {
    throw InvalidArgument("TenantMove: tenant \"" + tenant + "\" is a local zone: local items are never moved");
  }
  for (const auto* name : {&from_database, &to_database}) {
    if (name->empty() || name->size() > 100) {
      throw InvalidArgument("TenantMove: database names must be 1 to 100 characters, got \"" + *name + "\"");
    }
  }
  if (from_database == to_database) {
    throw InvalidArgument("TenantMove: from and to are both database \"" + to_database + "\"");
  }
  if (options.lock_timeout < Millis(1) || options.lock_timeout > Millis(600000)) {
    throw InvalidArgument("MoveOptions: lock_timeout must be between 1ms and 10min, got " +
                          std::to_string(options.lock_timeout.count()) + "ms");
  }
  if (options.batch_items < 1 || options.batch_items > 100000) {
    throw InvalidArgument("MoveOptions: batch_items must be between 1 and 100000, got " +
                          std::to_string(options.batch_items));
  }
  result_.move_id = random_uuid();
  result_.tenant = std::move(tenant);
  result_.from_database = std::move(from_database);
  result_.to_database = std::move(to_database);
}

void TenantMove::step(MoveStep step) {
  if (on_step) on_step(step);
}

void TenantMove::move_rows(pqxx::transaction_base& source, pqxx::transaction_base& destination) {
  if (rows_moved_) throw Error("TenantMove::move_rows: the rows of move " + result_.move_id + " moved already");
  require_read_committed(source, "source");
  require_read_committed(destination, "destination");
  const std::string timeout = std::to_string(options_.lock_timeout.count()) + "ms";
  for (auto* txn : {&source, &destination}) txn->exec_params("SELECT set_config('lock_timeout', $1, true)", timeout);

  const auto& tenant = result_.tenant;
  const auto& id = result_.move_id;
  store::translating_input_errors([&] {
    placement::begin_move_in(destination, tenant, result_.from_database, id);
    const auto plan = placement::begin_move_out(source, tenant, result_.to_database, id);
    step(MoveStep::kLocked);

    const auto copied_items = placement::copy_batches(source, destination, tenant, options_.batch_items,
                                                      placement::Copied::kItems);
    const auto copied_dead = placement::copy_batches(source, destination, tenant, options_.batch_items,
                                                     placement::Copied::kDeadItems);
    const auto deleted = placement::finish_move_out(source, tenant, id);
    if (deleted.items != copied_items || deleted.dead_items != copied_dead || copied_items != plan.items) {
      std::ostringstream message;
      message << "TenantMove: tenant \"" << tenant << "\" had " << plan.items << " items at the start, " << copied_items
              << " were copied and " << deleted.items << " deleted (dead items: " << copied_dead << " copied, "
              << deleted.dead_items << " deleted): the move is abandoned";
      throw Error(message.str());
    }
    placement::finish_move_in(destination, tenant, plan.paused, plan.pause_reason);
    result_.items = copied_items;
    result_.dead_items = copied_dead;
    return 0;
  });
  rows_moved_ = true;
  step(MoveStep::kCopied);
}

void TenantMove::commit(pqxx::transaction_base& source, pqxx::transaction_base& destination,
                        pqxx::connection_base& directory) {
  if (!rows_moved_) throw Error("TenantMove::commit: call move_rows first");
  const std::string destination_gid = "quick_move:" + result_.move_id + ":destination";
  const std::string source_gid = "quick_move:" + result_.move_id + ":source";
  const placement::MoverLiveness alive(directory, result_.move_id);
  try {
    // A decision recorded in a database that is not the directory would be found by no recovery.
    placement::require_databases_registered(directory, "");
    placement::record_move_start(directory, result_);
    if (!placement::prepare(destination, destination_gid)) throw Error(not_prepared(result_.move_id, "destination"));
    step(MoveStep::kDestinationPrepared);
    if (!placement::prepare(source, source_gid)) throw Error(not_prepared(result_.move_id, "source"));
    step(MoveStep::kSourcePrepared);
  } catch (...) {
    // Nothing is decided: roll back both sides, whatever each got to (a failure here leaves a
    // prepared transaction to recovery, which finds the move aborted and rolls it back too).
    placement::try_decide(directory, result_.move_id, "abort");
    placement::abort_quietly(destination);
    placement::abort_quietly(source);
    placement::try_end_prepared(destination.conn(), destination_gid, false);
    placement::try_end_prepared(source.conn(), source_gid, false);
    throw;
  }

  std::string decision;
  try {
    decision = placement::decide(directory, result_.move_id, "commit", "mover", result_.items);
  } catch (const std::exception& error) {
    throw MoveInDoubt("TenantMove " + result_.move_id + ": recording the decision failed (" + error.what() +
                      "); resolve_moves (quick doctor) ends the move");
  }
  if (decision != "commit") {
    placement::try_end_prepared(destination.conn(), destination_gid, false);
    placement::try_end_prepared(source.conn(), source_gid, false);
    throw Error("TenantMove " + result_.move_id + ": recovery aborted this move before it was decided; nothing moved");
  }
  step(MoveStep::kDecided);
  // Both transactions were prepared, and only this mover ends them while it holds the liveness
  // lock: one that COMMIT PREPARED does not find was ended by someone else, committed or rolled
  // back, which the mover cannot tell. It stops there rather than commit the other side.
  const auto gone = [&](const char* which, const char* rest) {
    return MoveInDoubt("TenantMove " + result_.move_id + " is decided, but the " + which +
                       "'s prepared transaction was no longer there to commit (another process ended it); " + rest);
  };
  try {
    if (!placement::end_prepared(destination.conn(), destination_gid, true)) {
      throw gone("destination",
                 "the source's is left prepared: resolve_moves (quick doctor) ends it as the decision says");
    }
    step(MoveStep::kDestinationCommitted);
    if (!placement::end_prepared(source.conn(), source_gid, true)) {
      throw gone("source", "check that the tenant's items are in one database only");
    }
    step(MoveStep::kSourceCommitted);
  } catch (const pqxx::broken_connection& error) {
    throw MoveInDoubt("TenantMove " + result_.move_id + " is decided but not committed everywhere (" + error.what() +
                      "); resolve_moves (quick doctor) commits the rest");
  }
  placement::finish_move(directory, destination.conn(), result_.move_id);
  result_.took = std::chrono::duration_cast<Millis>(std::chrono::steady_clock::now() - started_);
}

}  // namespace quick
