#include "support/baseline_queue.h"

#include <nlohmann/json.hpp>

#include "quick/database.h"
#include "support/load.h"

namespace quick::bench {
namespace {

constexpr const char* kClaim =
    "SELECT id, tenant, (extract(epoch FROM statement_timestamp() - run_at) * 1000000)::bigint "
    "FROM bench_baseline.jobs WHERE run_at <= now() ORDER BY priority, run_at LIMIT $1 "
    "FOR UPDATE SKIP LOCKED";
// The same, also reading the payload (for handlers that need it; the others keep the lighter claim).
constexpr const char* kClaimWithPayload =
    "SELECT id, tenant, (extract(epoch FROM statement_timestamp() - run_at) * 1000000)::bigint, payload::text "
    "FROM bench_baseline.jobs WHERE run_at <= now() ORDER BY priority, run_at LIMIT $1 "
    "FOR UPDATE SKIP LOCKED";
constexpr const char* kDelete = "DELETE FROM bench_baseline.jobs WHERE id = ANY ($1::bigint[])";
constexpr const char* kInsert =
    "INSERT INTO bench_baseline.jobs (tenant, priority, payload) "
    "SELECT * FROM unnest($1::text[], $2::integer[], $3::jsonb[])";

// Locks in tenant order, as quick-pg's batch enqueue does; SKIP LOCKED keeps two producers that
// lock the same tenant from waiting on each other's move. Every pointer is moved, where quick-pg
// moves only parked ones: in the steady state that is 85-90% of enqueues. The count in the last
// line makes `locked` an InitPlan, run (every lock taken) before the insert reads a row.
constexpr const char* kInsertWithZoneWrites =
    "WITH input AS MATERIALIZED (SELECT * FROM unnest($1::text[], $2::integer[], $3::jsonb[]) AS j(tenant, priority, "
    "payload)),"
    " locked AS MATERIALIZED ("
    "   SELECT z.tenant FROM (SELECT DISTINCT i.tenant FROM input i ORDER BY 1) t"
    "   CROSS JOIN LATERAL (SELECT z.tenant FROM bench_baseline.zones z WHERE z.tenant = t.tenant FOR KEY SHARE) z),"
    " claimed AS MATERIALIZED ("
    "   SELECT z.tenant FROM (SELECT l.tenant FROM locked l ORDER BY 1) l"
    "   CROSS JOIN LATERAL (SELECT z.tenant FROM bench_baseline.zones z WHERE z.tenant = l.tenant"
    "                        FOR NO KEY UPDATE SKIP LOCKED) z),"
    " moved AS (UPDATE bench_baseline.zones z SET vesting_time = statement_timestamp()"
    "            FROM claimed c WHERE z.tenant = c.tenant)"
    " INSERT INTO bench_baseline.jobs (tenant, priority, payload)"
    " SELECT i.tenant, i.priority, i.payload FROM input i WHERE (SELECT count(*) FROM locked) >= 0";

std::string text_array(const std::vector<std::string>& values) {
  std::string out = "{";
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ',';
    out += '"';
    for (char c : values[i]) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  return out + "}";
}

// One multi-row statement over the jobs as parameter arrays (tenants, priorities, payloads).
void insert_jobs(pqxx::transaction_base& txn, const std::vector<BaselineJob>& jobs, const char* name,
                 const char* statement) {
  std::vector<std::string> tenants, priorities, payloads;
  for (const auto& job : jobs) {
    tenants.push_back(job.tenant);
    priorities.push_back(std::to_string(job.priority));
    payloads.push_back(job.payload);
  }
  txn.conn().prepare(name, statement);
  txn.exec_prepared(name, text_array(tenants), text_array(priorities), text_array(payloads));
}

}  // namespace

void create_baseline_schema(pqxx::connection& conn) {
  pqxx::nontransaction session(conn);
  session.exec(
      "DROP SCHEMA IF EXISTS bench_baseline CASCADE;"
      "CREATE SCHEMA bench_baseline;"
      "CREATE TABLE bench_baseline.jobs ("
      "  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
      "  tenant text NOT NULL,"
      "  priority integer NOT NULL DEFAULT 0,"
      "  run_at timestamptz NOT NULL DEFAULT statement_timestamp(),"
      "  payload jsonb NOT NULL DEFAULT '{}');"
      "CREATE INDEX jobs_claim_order ON bench_baseline.jobs (priority, run_at);");
}

void add_zone_writes_schema(pqxx::connection& conn, int tenants) {
  pqxx::nontransaction session(conn);
  session.exec(
      "CREATE INDEX jobs_zone_order ON bench_baseline.jobs (tenant, priority, run_at);"
      "CREATE TABLE bench_baseline.zones (tenant text PRIMARY KEY, vesting_time timestamptz NOT NULL);"
      "CREATE INDEX zones_vesting ON bench_baseline.zones (vesting_time, tenant);");
  std::vector<std::string> names;
  for (int t = 0; t < tenants; ++t) names.push_back(tenant_name(t));
  session.exec_params("INSERT INTO bench_baseline.zones SELECT unnest($1::text[]), statement_timestamp()",
                      text_array(names));
}

void enqueue_baseline(pqxx::transaction_base& txn, const std::vector<BaselineJob>& jobs) {
  insert_jobs(txn, jobs, "bench_baseline_insert", kInsert);
}

void enqueue_baseline_with_zone_writes(pqxx::transaction_base& txn, const std::vector<BaselineJob>& jobs) {
  insert_jobs(txn, jobs, "bench_baseline_insert_zone_writes", kInsertWithZoneWrites);
}

void BaselinePool::start() {
  for (int i = 0; i < options_.connections; ++i) threads_.emplace_back([this] { run_worker(); });
}

void BaselinePool::stop() {
  stopping_.store(true);
  for (auto& thread : threads_) thread.join();
  threads_.clear();
}

void BaselinePool::run_worker() {
  std::unique_ptr<pqxx::connection> conn;
  while (!stopping_.load()) {
    try {
      if (!conn) {
        conn = quick::connect(quick::with_default_connect_timeout(options_.url, 5));  // never hang reconnecting
        conn->prepare("claim", options_.with_payload ? kClaimWithPayload : kClaim);
        conn->prepare("delete", kDelete);
      }
      pqxx::work txn(*conn);
      const auto claimed = txn.exec_prepared("claim", options_.batch);
      if (claimed.empty()) {
        txn.commit();
        std::this_thread::sleep_for(options_.idle_poll);
        continue;
      }
      const auto claimed_at = std::chrono::steady_clock::now();
      std::string ids = "{";
      for (const auto& row : claimed) {
        ClaimedJob job{
            row[0].as<std::int64_t>(), row[1].as<std::string>(),
            std::chrono::microseconds(row[2].as<std::int64_t>()) +
                std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - claimed_at),
            options_.with_payload ? row[3].as<std::string>() : std::string()};
        if (options_.handler) options_.handler(job);
        if (ids.size() > 1) ids += ',';
        ids += std::to_string(job.id);
      }
      ids += '}';
      txn.exec_prepared("delete", ids);
      txn.commit();
      done_.fetch_add(claimed.size());
    } catch (const pqxx::broken_connection&) {
      ++errors_;
      conn.reset();
    } catch (const std::exception&) {
      ++errors_;
    }
  }
}

}  // namespace quick::bench
