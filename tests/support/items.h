// Helpers shared by the zone, store and producer tests: building items, reading rows back, and
// waiting on the DATABASE clock (leases and vesting times are computed by the server, so tests
// wait for the server's clock to pass a time, never for a fixed local sleep).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include <pqxx/pqxx>

#include "quick/item.h"
#include "quick/producer.h"

namespace quick::testing {

using namespace std::chrono_literals;

inline NewItem make_item(std::string tenant, std::string job_type = "job", std::string payload = "{}",
                         std::chrono::milliseconds vesting_delay = std::chrono::milliseconds{0}, int priority = 0,
                         std::optional<std::string> client_item_id = std::nullopt) {
  NewItem item;
  item.tenant = std::move(tenant);
  item.job_type = std::move(job_type);
  item.payload = std::move(payload);
  item.vesting_delay = vesting_delay;
  item.priority = priority;
  item.client_item_id = std::move(client_item_id);
  return item;
}

// Enqueues one item in its own committed transaction.
inline std::int64_t enqueue_committed(pqxx::connection& conn, const NewItem& item) {
  pqxx::work txn(conn);
  const auto result = enqueue_in(txn, item);
  txn.commit();
  return result.item_id;
}

inline std::int64_t to_micros(DbTime time) {
  return std::chrono::duration_cast<std::chrono::microseconds>(time.time_since_epoch()).count();
}

// A timestamptz SQL expression for a database-clock time point, exact to the microsecond.
inline std::string sql_time(DbTime time) {
  return "(timestamptz 'epoch' + " + std::to_string(to_micros(time)) + " * interval '1 microsecond')";
}

// The database server's clock right now.
inline DbTime db_clock(pqxx::connection& conn) {
  pqxx::nontransaction session(conn);
  const auto micros =
      session.exec("SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint").at(0)[0].as<std::int64_t>();
  return DbTime{std::chrono::duration_cast<DbTime::duration>(std::chrono::microseconds{micros})};
}

// Sleeps (in the server) until the database clock is past the time `timestamptz_sql` evaluates to.
// Bounded: throws after ~20 s, so a broken lease computation fails the test instead of hanging it.
inline void wait_until_db_clock_passes_sql(pqxx::connection& conn, const std::string& timestamptz_sql) {
  pqxx::nontransaction session(conn);
  for (int attempt = 0; attempt < 40; ++attempt) {
    const auto row = session
                         .exec("SELECT pg_sleep(least(0.5, greatest(0, extract(epoch FROM ((" + timestamptz_sql +
                               ") - clock_timestamp()))) + 0.005)), clock_timestamp() > (" + timestamptz_sql + ")")
                         .at(0);
    if (row[1].as<bool>()) return;
  }
  throw std::runtime_error("the database clock did not pass " + timestamptz_sql + " within 20 s");
}

inline void wait_until_db_clock_passes(pqxx::connection& conn, DbTime time) {
  wait_until_db_clock_passes_sql(conn, sql_time(time));
}

// Runs `scenario(duration)` with a short lease (or delay). A scenario checks that something is
// still hidden while the lease is live; on a loaded machine the lease may run out before those
// checks ran, which the scenario reports by returning false (it checks the database clock after
// them); then it runs again, on fresh tenants, with a longer duration.
template <typename Scenario>
void with_short_lease(Scenario&& scenario) {
  for (const std::chrono::milliseconds duration : {250ms, 1'000ms, 4'000ms}) {
    if (scenario(duration)) return;
  }
  throw std::runtime_error("the database was too slow even for a 4 s lease");
}

// Waits until the item's current vesting time (its lease expiry, when leased) has passed.
inline void wait_until_item_vests(pqxx::connection& conn, std::int64_t item_id) {
  wait_until_db_clock_passes_sql(conn, "SELECT vesting_time FROM quick.items WHERE id = " + std::to_string(item_id));
}

// One item's row as stored, read on a separate autocommit statement.
struct StoredItem {
  std::string tenant;
  std::string job_type;
  int priority = 0;
  DbTime vesting_time;
  std::optional<std::string> lease_id;
  int error_count = 0;
  std::string payload;
  std::optional<std::string> client_item_id;
  std::optional<std::string> last_error;
};

inline std::optional<StoredItem> stored_item(pqxx::connection& conn, std::int64_t item_id) {
  pqxx::nontransaction session(conn);
  const auto result = session.exec_params(
      "SELECT tenant, job_type, priority, (extract(epoch FROM vesting_time) * 1000000)::bigint,"
      "       lease_id::text, error_count, payload::text, client_item_id, last_error"
      "  FROM quick.items WHERE id = $1",
      item_id);
  if (result.empty()) return std::nullopt;
  const auto row = result.at(0);
  StoredItem item;
  item.tenant = row[0].as<std::string>();
  item.job_type = row[1].as<std::string>();
  item.priority = row[2].as<int>();
  item.vesting_time = DbTime{
      std::chrono::duration_cast<DbTime::duration>(std::chrono::microseconds{row[3].as<std::int64_t>()})};
  if (!row[4].is_null()) item.lease_id = row[4].as<std::string>();
  item.error_count = row[5].as<int>();
  item.payload = row[6].as<std::string>();
  if (!row[7].is_null()) item.client_item_id = row[7].as<std::string>();
  if (!row[8].is_null()) item.last_error = row[8].as<std::string>();
  return item;
}

// One pointer's row as stored.
struct StoredPointer {
  DbTime vesting_time;
  std::optional<std::string> lease_id;
  DbTime last_active_time;
};

inline std::optional<StoredPointer> stored_pointer(pqxx::connection& conn, const std::string& tenant) {
  pqxx::nontransaction session(conn);
  const auto result = session.exec_params(
      "SELECT (extract(epoch FROM vesting_time) * 1000000)::bigint, lease_id::text,"
      "       (extract(epoch FROM last_active_time) * 1000000)::bigint"
      "  FROM quick.pointers WHERE tenant = $1",
      tenant);
  if (result.empty()) return std::nullopt;
  const auto row = result.at(0);
  const auto from_micros = [](std::int64_t micros) {
    return DbTime{std::chrono::duration_cast<DbTime::duration>(std::chrono::microseconds{micros})};
  };
  StoredPointer pointer;
  pointer.vesting_time = from_micros(row[0].as<std::int64_t>());
  if (!row[1].is_null()) pointer.lease_id = row[1].as<std::string>();
  pointer.last_active_time = from_micros(row[2].as<std::int64_t>());
  return pointer;
}

// Waits until the backend `pid` is blocked waiting for a lock (bounded: throws after ~10 s).
inline void wait_until_blocked_on_lock(pqxx::connection& observer, int pid) {
  pqxx::nontransaction session(observer);
  for (int attempt = 0; attempt < 400; ++attempt) {
    const auto result = session.exec_params("SELECT coalesce(wait_event_type, '') FROM pg_stat_activity WHERE pid = $1",
                                            pid);
    if (!result.empty() && result.at(0)[0].as<std::string>() == "Lock") return;
    session.exec("SELECT pg_sleep(0.025)");
  }
  throw std::runtime_error("backend " + std::to_string(pid) + " never blocked on a lock");
}

inline int count_rows(pqxx::connection& conn, const std::string& sql) {
  pqxx::nontransaction session(conn);
  return session.exec(sql).at(0)[0].as<int>();
}

}  // namespace quick::testing
