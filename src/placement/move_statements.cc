#include "placement/move_statements.h"

#include <algorithm>
#include <optional>
#include <vector>

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
  // The ids first, then the rows in batches of ids (each found through the primary key), each
  // batch as JSON text passed to the destination as it is.
  const bool items = what == Copied::kItems;
  std::vector<std::int64_t> ids;
  for (const auto& row : source.exec_params("SELECT id FROM quick.move_out_ids($1, $2) id", tenant, !items)) {
    ids.push_back(row[0].as<std::int64_t>());
  }
  const std::string read = items ? "SELECT quick.move_out_items($1, $2::bigint[])::text"
                                 : "SELECT quick.move_out_dead_items($1, $2::bigint[])::text";
  const std::string write = items ? "SELECT quick.move_in_items($1, $2::jsonb)"
                                  : "SELECT quick.move_in_dead_items($1, $2::jsonb)";
  for (std::size_t start = 0; start < ids.size(); start += static_cast<std::size_t>(batch_items)) {
    const auto end = std::min(ids.size(), start + static_cast<std::size_t>(batch_items));
    std::string id_array = "{";
    for (std::size_t i = start; i < end; ++i) {
      if (i > start) id_array += ',';
      id_array += std::to_string(ids[i]);
    }
    id_array += '}';
    const auto batch = source.exec_params(read, tenant, id_array).at(0).at(0).as<std::string>();
    destination.exec_params(write, tenant, batch);
  }
  return static_cast<std::int64_t>(ids.size());
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

bool prepare(pqxx::transaction_base& txn, const std::string& gid) {
  try {
    txn.exec("PREPARE TRANSACTION " + txn.quote(gid));
  } catch (...) {
    abort_quietly(txn);  // a failed PREPARE TRANSACTION rolled the transaction back
    throw;
  }
  // The session has no transaction now, but the libpqxx object still has one open: give it an
  // empty one to commit, so that it ends cleanly (a bare COMMIT would draw a warning). In it, see
  // that the transaction was prepared: one that had failed already (an error the caller caught
  // and went on from: libpqxx keeps the object open) is not, Postgres rolls it back and answers
  // ROLLBACK, with no error. (libpqxx 6 does not show the command status.)
  txn.exec("BEGIN");
  const bool prepared = txn.exec_params("SELECT EXISTS (SELECT FROM pg_catalog.pg_prepared_xacts WHERE gid = $1)", gid)
                            .at(0)
                            .at(0)
                            .as<bool>();
  txn.commit();
  return prepared;
}

void abort_quietly(pqxx::transaction_base& txn) noexcept {
  try {
    txn.abort();
  } catch (...) {  // NOLINT(bugprone-empty-catch): ended already (committed by prepare)
  }
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
  // The moved zone's pointer vests at move_in_finish's statement start (or its earliest item),
  // which lies before the commit by as long as the prepare, the decision and the commit took:
  // maybe below the Scanners' wide floors. The payload (a start time, sql/functions/
  // notify_consumers.sql) has their next wide scan reach back as far as they ever do (10 min,
  // scanner/scan_floors.h): a move is rare, and its exact start is not known here.
  try {
    pqxx::nontransaction session(destination);
    session.exec(
        "SELECT pg_catalog.pg_notify('quick_wakeup', "
        "((EXTRACT(epoch FROM pg_catalog.statement_timestamp()) - 600) * 1000000)::bigint::text)");
  } catch (...) {  // NOLINT(bugprone-empty-catch): consumers find the zone by their next full scan
  }
}

}  // namespace quick::placement
