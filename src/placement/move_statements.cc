#include "placement/move_statements.h"

#include <optional>

namespace quick::placement {

MoveOutPlan begin_move_out(pqxx::transaction_base& source, const std::string& tenant, const std::string& to,
                           const std::string& move_id) {
  const auto row =
      source.exec_params("SELECT * FROM quick.move_out_begin($1, $2, $3::uuid)", tenant, to, move_id).at(0);
  MoveOutPlan plan;
  plan.items = row["items"].as<std::int64_t>();
  plan.dead_items = row["dead_items"].as<std::int64_t>();
  plan.paused = row["paused"].as<bool>();
  plan.pause_reason = row["pause_reason"].is_null() ? "" : row["pause_reason"].as<std::string>();
  return plan;
}

void begin_move_in(pqxx::transaction_base& destination, const std::string& tenant, const std::string& from,
                   const std::string& move_id) {
  destination.exec_params("SELECT quick.move_in_begin($1, $2, $3::uuid)", tenant, from, move_id);
}

std::int64_t copy_batches(pqxx::transaction_base& source, pqxx::transaction_base& destination,
                          const std::string& tenant, int batch_items, Copied what) {
  // Each batch comes back as JSON text, passed to the destination as it is; only the keys of its
  // last element (where the next batch starts) are read out of it, by the source.
  const bool items = what == Copied::kItems;
  const std::string read = items ? "SELECT b::text, jsonb_array_length(b), jsonb_build_object('priority', "
                                   "b->-1->'priority', "
                                   "'vesting_time', b->-1->'vesting_time', 'id', b->-1->'id')::text "
                                   "FROM quick.move_out_items($1, $2::jsonb, $3) b"
                                 : "SELECT b::text, jsonb_array_length(b), jsonb_build_object('id', b->-1->'id')::text "
                                   "FROM quick.move_out_dead_items($1, $2::jsonb, $3) b";
  const std::string write = items ? "SELECT quick.move_in_items($1, $2::jsonb)"
                                  : "SELECT quick.move_in_dead_items($1, $2::jsonb)";
  std::int64_t copied = 0;
  std::optional<std::string> after;
  for (;;) {
    const auto row = source.exec_params(read, tenant, after, batch_items).at(0);
    const auto count = row[1].as<std::int64_t>();
    if (count == 0) break;
    destination.exec_params(write, tenant, row[0].as<std::string>());
    copied += count;
    if (count < batch_items) break;
    after = row[2].as<std::string>();
  }
  return copied;
}

Deleted finish_move_out(pqxx::transaction_base& source, const std::string& tenant, const std::string& move_id) {
  const auto row = source.exec_params("SELECT * FROM quick.move_out_finish($1, $2::uuid)", tenant, move_id).at(0);
  return {row["items"].as<std::int64_t>(), row["dead_items"].as<std::int64_t>()};
}

void finish_move_in(pqxx::transaction_base& destination, const std::string& tenant, bool paused,
                    const std::string& pause_reason) {
  destination.exec_params("SELECT quick.move_in_finish($1, $2, $3)", tenant, paused,
                          pause_reason.empty() ? std::optional<std::string>() : pause_reason);
}

void prepare(pqxx::transaction_base& txn, const std::string& gid) {
  txn.exec("PREPARE TRANSACTION " + txn.quote(gid));
  // The session has no transaction now, but the libpqxx object still has one open: give it an
  // empty one to commit, so that it ends cleanly (a bare COMMIT would draw a warning).
  txn.exec("BEGIN");
  txn.commit();
}

bool end_prepared(pqxx::connection_base& conn, const std::string& gid, bool commit) {
  pqxx::nontransaction session(conn);
  try {
    session.exec(std::string(commit ? "COMMIT PREPARED " : "ROLLBACK PREPARED ") + session.quote(gid));
  } catch (const pqxx::sql_error& error) {
    if (error.sqlstate() == "42704") return false;  // no prepared transaction with that identifier
    throw;
  }
  return true;
}

void try_end_prepared(pqxx::connection_base& conn, const std::string& gid, bool commit) noexcept {
  try {
    end_prepared(conn, gid, commit);
  } catch (...) {  // NOLINT(bugprone-empty-catch): recovery ends it (see the header)
  }
}

namespace {
constexpr const char* kLivenessKey = "SELECT hashtextextended('quick mover ' || $1, 0)";
}  // namespace

MoverLiveness::MoverLiveness(pqxx::connection_base& directory, const std::string& move_id)
    : directory_(directory), move_id_(move_id) {
  pqxx::nontransaction session(directory_);
  session.exec_params(std::string("SELECT pg_advisory_lock((") + kLivenessKey + "))", move_id_);
}

MoverLiveness::~MoverLiveness() { release(directory_, move_id_); }

bool MoverLiveness::try_take(pqxx::connection_base& directory, const std::string& move_id) {
  pqxx::nontransaction session(directory);
  return session.exec_params(std::string("SELECT pg_try_advisory_lock((") + kLivenessKey + "))", move_id)
      .at(0)
      .at(0)
      .as<bool>();
}

void MoverLiveness::release(pqxx::connection_base& directory, const std::string& move_id) noexcept {
  try {
    pqxx::nontransaction session(directory);
    session.exec_params(std::string("SELECT pg_advisory_unlock((") + kLivenessKey + "))", move_id);
  } catch (...) {  // NOLINT(bugprone-empty-catch): a broken session released it already
  }
}

void record_move_start(pqxx::connection_base& directory, const MoveResult& move) {
  pqxx::nontransaction session(directory);
  session.exec_params("SELECT quick.begin_move($1::uuid, $2, $3, $4)", move.move_id, move.tenant, move.from_database,
                      move.to_database);
}

std::string decide(pqxx::connection_base& directory, const std::string& move_id, const std::string& decision,
                   const std::string& decided_by, std::int64_t items) {
  pqxx::nontransaction session(directory);
  const auto value = session
                         .exec_params("SELECT quick.decide_move($1::uuid, $2, $3, $4)", move_id, decision, decided_by,
                                      items)
                         .at(0)
                         .at(0);
  return value.is_null() ? "" : value.as<std::string>();
}

void try_decide(pqxx::connection_base& directory, const std::string& move_id, const std::string& decision) noexcept {
  try {
    decide(directory, move_id, decision, "mover", 0);
  } catch (...) {  // NOLINT(bugprone-empty-catch): an undecided move is aborted by recovery
  }
}

void finish_move(pqxx::connection_base& directory, pqxx::connection_base& destination,
                 const std::string& move_id) noexcept {
  try {
    pqxx::nontransaction session(directory);
    session.exec_params("SELECT quick.finish_move($1::uuid)", move_id);
  } catch (...) {  // NOLINT(bugprone-empty-catch): bookkeeping only
  }
  try {
    pqxx::nontransaction session(destination);
    session.exec("SELECT quick.notify_consumers()");
  } catch (...) {  // NOLINT(bugprone-empty-catch): consumers find the zone on their next scan
  }
}

}  // namespace quick::placement
