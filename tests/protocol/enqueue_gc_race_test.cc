// The enqueue x garbage-collection race (docs/protocol.md; research/pg-semantics.md section 2).
//
// The invariant: every non-empty zone has a pointer. An enqueuer locks the tenant's pointer
// FOR KEY SHARE (or creates it) before its item commits; the GC deletes a pointer only while
// holding it FOR UPDATE, and only after a statement that started after the lock saw the zone
// empty. These tests run every interleaving of the two, first statement by statement (so each
// statement of the protocol meets each statement of the other side), then with the real SQL
// functions, then with a third session leasing and settling the same pointer. The negative
// controls run broken variants through the same checker and must see orphaned zones: they prove
// the enumeration can see the bug it is looking for.
//
// Each interleaving gets its own tenant, set up in bulk: its pointer exists, is leased by the
// GC's lease, has been inactive for an hour, and its zone is empty.
#include <gtest/gtest.h>

#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "support/enqueue_paths.h"
#include "support/interleaving.h"
#include "support/test_database.h"

namespace quick {
namespace {

using testing::all_interleavings;
using testing::dynamic_step;
using testing::EnumerationStats;
using testing::fixed_step;
using testing::InterleavingHarness;
using testing::query_file_with_literals;
using testing::RunResult;
using testing::RunView;
using testing::SessionScript;
using testing::sql_literal;
using testing::StepOutcome;

enum class Isolation { kReadCommitted, kRepeatableRead, kSerializable };

std::string sql_name(Isolation isolation) {
  switch (isolation) {
    case Isolation::kReadCommitted: return "READ COMMITTED";
    case Isolation::kRepeatableRead: return "REPEATABLE READ";
    case Isolation::kSerializable: return "SERIALIZABLE";
  }
  return "";
}

std::string short_name(Isolation isolation) {
  switch (isolation) {
    case Isolation::kReadCommitted: return "RC";
    case Isolation::kRepeatableRead: return "RR";
    case Isolation::kSerializable: return "SER";
  }
  return "";
}

// The GC's lease on the pointer, fixed per tenant so that setup and steps agree on it.
std::string gc_lease(const std::string& tenant) { return "md5(" + sql_literal(tenant + "/gc") + ")::uuid"; }

enum class LeaseState {
  kLive,       // leased by the GC, vesting in the future
  kExpired,    // the GC's lease ran out: a consumer may lease the pointer again
  kVisitable,  // not leased and vested, its zone holding one vested item: a visit will take it
};

// One pointer per interleaving, named prefix-0 .. prefix-(count-1), inactive for an hour. Leased
// with gc_lease() and their zones empty, or (kVisitable) unleased with one vested item, of job
// type 'setup', in each zone.
void create_leased_pointers(pqxx::connection& conn, const std::string& prefix, std::size_t count, LeaseState state) {
  pqxx::nontransaction txn(conn);
  const bool visitable = state == LeaseState::kVisitable;
  txn.exec_params(
      "INSERT INTO quick.pointers (tenant, vesting_time, lease_id, last_active_time) "
      "SELECT t, now() + CASE WHEN $3 THEN interval '-1 second' ELSE interval '10 minutes' END, "
      "       CASE WHEN $4 THEN NULL ELSE md5(t || '/gc')::uuid END, now() - interval '1 hour' "
      "  FROM (SELECT $1 || '-' || i AS t FROM generate_series(0, $2 - 1) i) s",
      prefix, static_cast<int>(count), state != LeaseState::kLive, visitable);
  if (visitable) {
    txn.exec_params(
        "INSERT INTO quick.items (tenant, job_type, vesting_time, zone_time) "
        "SELECT $1 || '-' || i, 'setup', now() - interval '1 second', now() - interval '1 second' "
        "FROM generate_series(0, $2 - 1) i",
        prefix, static_cast<int>(count));
  }
}

// --- Statement-level scripts -------------------------------------------------------------------

std::string lock_pointer_key_share(const std::string& tenant) {
  return "SELECT 1 FROM quick.pointers WHERE tenant = " + sql_literal(tenant) + " FOR KEY SHARE";
}
std::string insert_pointer(const std::string& tenant) {
  return "INSERT INTO quick.pointers (tenant, vesting_time, last_active_time) VALUES (" + sql_literal(tenant) +
         ", statement_timestamp(), statement_timestamp()) RETURNING 1";  // nothing if the slot is taken
}
std::string insert_item(const std::string& tenant) {
  return "INSERT INTO quick.items (tenant, job_type, vesting_time, zone_time) VALUES (" + sql_literal(tenant) +
         ", 'race', statement_timestamp(), statement_timestamp()) RETURNING id";
}
// quick.enqueue's pointer creation, taken only when the lock found no pointer.
testing::Step insert_pointer_if_missing(const std::string& label, const std::string& tenant) {
  return dynamic_step(label, [tenant](const RunView& view) -> std::optional<std::string> {
    if (view.previous().row_count() > 0) return std::nullopt;
    return insert_pointer(tenant);
  });
}

// quick.enqueue written out: lock the pointer FOR KEY SHARE, create it if missing, insert the
// item; or the same with the item inserted first.
SessionScript protocol_enqueue(const std::string& tenant, Isolation isolation, bool lock_first) {
  const std::string begin = "BEGIN ISOLATION LEVEL " + sql_name(isolation) + "; ";
  if (lock_first) {
    return {"E",
            {fixed_step("E1:begin+KS", begin + lock_pointer_key_share(tenant)),
             insert_pointer_if_missing("E2:ins-ptr", tenant), fixed_step("E3:item", insert_item(tenant)),
             fixed_step("E4:commit", "COMMIT")}};
  }
  return {
      "E",
      {fixed_step("E1:begin+item", begin + insert_item(tenant)), fixed_step("E2:KS", lock_pointer_key_share(tenant)),
       insert_pointer_if_missing("E3:ins-ptr", tenant), fixed_step("E4:commit", "COMMIT")}};
}

// Negative control: create-if-missing without locking an existing pointer.
SessionScript on_conflict_only_enqueue(const std::string& tenant) {
  return {"E",
          {fixed_step("E1:begin+ins-ptr", "BEGIN; " + insert_pointer(tenant)),
           fixed_step("E2:item", insert_item(tenant)), fixed_step("E3:commit", "COMMIT")}};
}

std::string lock_pointer_for_gc(const std::string& tenant, bool skip_locked) {
  return "SELECT 1 FROM quick.pointers WHERE tenant = " + sql_literal(tenant) + " AND lease_id = " + gc_lease(tenant) +
         " AND last_active_time <= statement_timestamp() - interval '1 minute' FOR UPDATE" +
         (skip_locked ? " SKIP LOCKED" : "");
}

// GC steps after the lock: check emptiness in a new statement, then delete.
void append_check_and_delete(std::vector<testing::Step>& steps, const std::string& tenant, int first_number) {
  const std::string n2 = std::to_string(first_number);
  const std::string n3 = std::to_string(first_number + 1);
  steps.push_back(dynamic_step("G" + n2 + ":empty?", [tenant](const RunView& view) -> std::optional<std::string> {
    if (view.previous().row_count() == 0) return std::nullopt;
    return "SELECT NOT EXISTS (SELECT 1 FROM quick.items WHERE tenant = " + sql_literal(tenant) + ")";
  }));
  steps.push_back(dynamic_step("G" + n3 + ":delete", [tenant](const RunView& view) -> std::optional<std::string> {
    if (view.previous().value() != std::optional<std::string>("t")) {
      return std::nullopt;
    }
    return "DELETE FROM quick.pointers WHERE tenant = " + sql_literal(tenant) + " AND lease_id = " + gc_lease(tenant) +
           " RETURNING 1";
  }));
}

// quick.settle_pointers' collection written out: READ COMMITTED; lock FOR UPDATE SKIP LOCKED;
// a new statement checks the zone is empty; delete; commit.
SessionScript protocol_gc(const std::string& tenant, Isolation isolation = Isolation::kReadCommitted,
                          bool skip_locked = true) {
  SessionScript gc{"G",
                   {fixed_step("G1:begin+lock", "BEGIN ISOLATION LEVEL " + sql_name(isolation) + "; " +
                                                    lock_pointer_for_gc(tenant, skip_locked))}};
  append_check_and_delete(gc.steps, tenant, 2);
  gc.steps.push_back(fixed_step("G4:commit", "COMMIT"));
  return gc;
}

// Negative control: a snapshot GC whose snapshot predates its lock because it first read its
// lease (as a consumer would), then locked with SKIP LOCKED.
SessionScript snapshot_first_gc(const std::string& tenant, Isolation isolation) {
  SessionScript gc{
      "G",
      {fixed_step("G0:begin+read", "BEGIN ISOLATION LEVEL " + sql_name(isolation) +
                                       "; SELECT lease_id FROM quick.pointers WHERE tenant = " + sql_literal(tenant)),
       fixed_step("G1:lock", lock_pointer_for_gc(tenant, true))}};
  append_check_and_delete(gc.steps, tenant, 2);
  gc.steps.push_back(fixed_step("G4:commit", "COMMIT"));
  return gc;
}

// Negative control: one DELETE whose NOT EXISTS uses the statement's snapshot, which a wait
// behind the enqueuer's lock does not refresh (EvalPlanQual re-checks only the pointer row).
SessionScript single_statement_gc(const std::string& tenant) {
  return {"G",
          {fixed_step("G1:begin+delete", "BEGIN; DELETE FROM quick.pointers p WHERE p.tenant = " + sql_literal(tenant) +
                                             " AND p.lease_id = " + gc_lease(tenant) +
                                             " AND p.last_active_time <= statement_timestamp() - interval '1 minute'"
                                             " AND NOT EXISTS (SELECT 1 FROM quick.items i WHERE i.tenant = p.tenant)"
                                             " RETURNING 1"),
           fixed_step("G2:commit", "COMMIT")}};
}

// --- Real-function scripts ---------------------------------------------------------------------

std::string settle_sql(const std::string& tenant, const std::string& lease_expression) {
  return "SELECT action FROM quick.settle_pointers(ARRAY[" + sql_literal(tenant) + "], ARRAY[" + lease_expression +
         "], ARRAY[false], interval '0')";
}
// G: quick.settle_pointers with the GC's lease, in its own READ COMMITTED transaction.
SessionScript settle_session(const std::string& tenant) {
  return {"G",
          {fixed_step("G1:begin", "BEGIN"), fixed_step("G2:settle", settle_sql(tenant, gc_lease(tenant))),
           fixed_step("G3:commit", "COMMIT")}};
}
std::string enqueue_sql(const std::string& tenant) {
  return "SELECT item_id FROM quick.enqueue(" + sql_literal(tenant) + ", 'race')";
}
// The C++ producer's fast path (sql/queries/enqueue_into_existing_zone.sql, the very file the
// library embeds) with its parameters spelled as literals. It returns no row when the tenant has
// no pointer; the producer then calls quick.enqueue (fast_path_fallback).
std::string fast_path_enqueue_sql(const std::string& tenant) {
  return query_file_with_literals(
      "enqueue_into_existing_zone",
      {{"$1", sql_literal(tenant)}, {"$2", "'race'"}, {"$3", "'{}'"}, {"$4", "'0'"}, {"$5", "0"}, {"$6", "false"}});
}
// The producer's batch fast path (sql/queries/enqueue_batch_into_existing_zones.sql) on a batch of
// two items, as enqueue_batch_in spells it: one for the raced tenant and one for a companion
// whose pointer always exists (kBatchCompanion), so that the statement must notice that one of
// its tenants lost its pointer while another did not. No row when a pointer is missing; the
// producer then calls quick.enqueue_batch (batch_fast_path_fallback).
constexpr const char* kBatchCompanion = "race-companion";
std::string race_batch_json(const std::string& tenant) {
  const auto element = [](const std::string& t) {
    return R"({"tenant":")" + t + R"(","job_type":"race","payload":{}})";
  };
  return sql_literal("[" + element(kBatchCompanion) + "," + element(tenant) + "]");
}
// pull_in_transaction: EnqueueOptions::pull_in_transaction, the statement's $2.
std::string batch_fast_path_enqueue_sql(const std::string& tenant, bool pull_in_transaction = false) {
  return query_file_with_literals("enqueue_batch_into_existing_zones",
                                  {{"$1", race_batch_json(tenant)}, {"$2", pull_in_transaction ? "true" : "false"}});
}
testing::Step batch_fast_path_fallback(const std::string& tenant, const std::string& label) {
  return dynamic_step(label, [tenant](const RunView& view) -> std::optional<std::string> {
    if (view.previous().row_count() > 0) return std::nullopt;
    return "SELECT item_id FROM quick.enqueue_batch(" + race_batch_json(tenant) + "::jsonb)";
  });
}
testing::Step fast_path_fallback(const std::string& tenant, const std::string& label) {
  return dynamic_step(label, [tenant](const RunView& view) -> std::optional<std::string> {
    if (view.previous().row_count() > 0) return std::nullopt;
    return enqueue_sql(tenant);
  });
}
// The application's own work in the same transaction (it also takes an RR/SER snapshot).
std::string app_statement(const std::string& tenant) {
  return "INSERT INTO app_events (tenant) VALUES (" + sql_literal(tenant) + ")";
}

bool action_is(const StepOutcome& step, const char* action) {
  return step.ok() && step.value() == std::optional<std::string>(action);
}

// --- Enumeration -------------------------------------------------------------------------------

using ScriptFactory = std::function<std::vector<SessionScript>(const std::string& tenant)>;
// Checks one run; returns the problems found (none when the run kept the protocol's promises).
using RunCheck =
    std::function<std::vector<std::string>(const std::string& tenant, const RunResult&, EnumerationStats&)>;

struct Enumeration {
  EnumerationStats stats;
  std::vector<std::string> problems;  // "trace: what is wrong"
};

class EnqueueGcRaceTest : public testing::DatabaseTest {
 protected:
  void SetUp() override {
    DatabaseTest::SetUp();
    if (HasFatalFailure()) return;
    checker_ = connect();
    pqxx::nontransaction txn(*checker_);
    txn.exec("CREATE TABLE app_events (tenant text NOT NULL)");
  }
  void TearDown() override {
    harness_.reset();
    checker_.reset();
    DatabaseTest::TearDown();
  }

  long count(const std::string& sql, const std::string& tenant) {
    pqxx::nontransaction txn(*checker_);
    return txn.exec_params(sql, tenant).at(0).at(0).as<long>();
  }
  long items(const std::string& tenant) { return count("SELECT count(*) FROM quick.items WHERE tenant = $1", tenant); }
  long app_rows(const std::string& tenant) {
    return count("SELECT count(*) FROM app_events WHERE tenant = $1", tenant);
  }

  // Runs every interleaving of the scripts, one fresh tenant each, and checks each run.
  Enumeration enumerate(int sessions, const std::string& prefix, LeaseState lease, const ScriptFactory& make,
                        const RunCheck& check) {
    if (!harness_ || harness_sessions_ != sessions) {
      harness_.reset();
      harness_ = std::make_unique<InterleavingHarness>(url(), sessions);
      harness_sessions_ = sessions;
    }
    std::vector<int> steps;
    for (const auto& script : make(prefix + "-0")) {
      steps.push_back(static_cast<int>(script.steps.size()));
    }
    const auto schedules = all_interleavings(steps);
    create_leased_pointers(*checker_, prefix, schedules.size(), lease);
    Enumeration result;
    for (std::size_t i = 0; i < schedules.size(); ++i) {
      const std::string tenant = prefix + "-" + std::to_string(i);
      const RunResult run = harness_->run(make(tenant), schedules[i]);
      result.stats.add(run);
      if (count("SELECT count(*) FROM quick.orphaned_zones WHERE tenant = $1", tenant) > 0) {
        ++result.stats.orphans;
        if (result.stats.first_orphan_trace.empty()) result.stats.first_orphan_trace = run.trace();
      }
      if (run.hung) result.problems.push_back(run.trace() + ": a step hung and was cancelled");
      for (const auto& problem : check(tenant, run, result.stats)) {
        result.problems.push_back(run.trace() + ": " + problem);
      }
    }
    return result;
  }

  // The promises about an enqueuer's failure: only RR/SER callers fail, only with 40001, only when
  // the pointer was really collected; a failed transaction leaves nothing, a committed one its item.
  void check_enqueuer(std::vector<std::string>& problems, const std::string& tenant, const RunResult& run,
                      Isolation isolation, bool collected) {
    if (const auto* failure = run.failure(0)) {
      if (isolation == Isolation::kReadCommitted) {
        problems.push_back("a READ COMMITTED enqueue failed: " + failure->error);
      }
      if (failure->sqlstate != "40001") {
        problems.push_back("the enqueue failed with " + failure->sqlstate + ", not 40001");
      }
      if (!collected) problems.push_back("the enqueue aborted although no pointer was collected");
      if (items(tenant) != 0 || app_rows(tenant) != 0) {
        problems.push_back("an aborted transaction left rows");
      }
    } else if (items(tenant) != 1) {
      problems.push_back("a committed enqueue's item is missing");
    }
  }

  static void report(const Enumeration& enumeration, const std::string& title) {
    std::cout << enumeration.stats.summary(title) << std::endl;
    if (!enumeration.stats.first_orphan_trace.empty()) {
      std::cout << "[protocol]   an orphaning interleaving: " << enumeration.stats.first_orphan_trace << std::endl;
    }
  }

  static void expect_protocol_kept(const Enumeration& enumeration, int interleavings) {
    EXPECT_EQ(enumeration.stats.interleavings, interleavings);
    EXPECT_EQ(enumeration.stats.orphans, 0) << enumeration.stats.first_orphan_trace;
    EXPECT_EQ(enumeration.stats.hung, 0);
    EXPECT_TRUE(enumeration.problems.empty())
        << enumeration.problems.size() << " runs broke the protocol's promises, e.g.:\n"
        << enumeration.problems.front();
  }

  static void expect_orphans_seen(const Enumeration& enumeration) {
    EXPECT_GT(enumeration.stats.orphans, 0) << "the checker must see this variant's orphans";
    EXPECT_EQ(enumeration.stats.hung, 0);
  }

  static RunCheck count_only() {
    return [](const std::string&, const RunResult&, EnumerationStats&) { return std::vector<std::string>{}; };
  }

  // (a) The protocol statement by statement, for one caller isolation level, in both orders.
  void check_statement_protocol(Isolation isolation) {
    for (const bool lock_first : {true, false}) {
      const int insert_pointer_step = lock_first ? 1 : 2;
      const auto result = enumerate(
          2, "a-" + short_name(isolation) + (lock_first ? "-lock" : "-item"), LeaseState::kLive,
          [&](const std::string& tenant) {
            return std::vector<SessionScript>{protocol_enqueue(tenant, isolation, lock_first), protocol_gc(tenant)};
          },
          [&](const std::string& tenant, const RunResult& run, EnumerationStats& stats) {
            std::vector<std::string> problems;
            const bool deleted = run.at(1, 2).ok() && run.at(1, 2).row_count() == 1 && run.at(1, 3).ok();
            if (deleted) stats.note("G deleted the pointer");
            if (run.at(1, 0).ok() && run.at(1, 0).row_count() == 0) stats.note("G skipped (KS held)");
            if (run.at(0, insert_pointer_step).ok()) {
              stats.note("E created the pointer");
              if (run.at(0, insert_pointer_step).row_count() != 1) {
                problems.push_back("the pointer insert inserted nothing, yet nobody else creates pointers");
              }
            }
            if (run.failure(1) != nullptr) problems.push_back("the GC failed: " + run.failure(1)->error);
            check_enqueuer(problems, tenant, run, isolation, deleted);
            return problems;
          });
      report(result, "statement-level E(" + short_name(isolation) + ", " +
                         (lock_first ? "pointer lock first" : "item insert first") + ") x G(RC protocol)");
      expect_protocol_kept(result, 70);
    }
  }

  // (b) A snapshot-isolation GC sees the zone as of its snapshot, not as of its lock. Two ways to
  // get a snapshot older than the lock: the locking statement waits (FOR UPDATE without SKIP
  // LOCKED), or an earlier statement of the transaction took it.
  void expect_snapshot_gc_orphans(Isolation isolation) {
    const auto waiting = enumerate(
        2, "b-wait-" + short_name(isolation), LeaseState::kLive,
        [isolation](const std::string& tenant) {
          return std::vector<SessionScript>{protocol_enqueue(tenant, Isolation::kReadCommitted, true),
                                            protocol_gc(tenant, isolation, /*skip_locked=*/false)};
        },
        count_only());
    report(waiting, "control: E(RC protocol) x G(" + short_name(isolation) + ", FOR UPDATE waits)");
    expect_orphans_seen(waiting);
    const auto read_first = enumerate(
        2, "b-read-" + short_name(isolation), LeaseState::kLive,
        [isolation](const std::string& tenant) {
          return std::vector<SessionScript>{protocol_enqueue(tenant, Isolation::kReadCommitted, true),
                                            snapshot_first_gc(tenant, isolation)};
        },
        count_only());
    report(read_first,
           "control: E(RC protocol) x G(" + short_name(isolation) + ", reads, then FOR UPDATE SKIP LOCKED)");
    expect_orphans_seen(read_first);
  }

  // The checks of a two-session run E (enqueue) x G (settle_session).
  std::vector<std::string> check_enqueue_against_settle(const std::string& tenant, const RunResult& run,
                                                        Isolation isolation, EnumerationStats& stats) {
    std::vector<std::string> problems;
    if (run.at(1, 1).ok()) stats.note("G " + run.at(1, 1).value().value_or("(none)"));
    if (run.failure(1) != nullptr) problems.push_back("settle failed: " + run.failure(1)->error);
    const bool collected = action_is(run.at(1, 1), "collected") && run.at(1, 2).ok();
    check_enqueuer(problems, tenant, run, isolation, collected);
    return problems;
  }

  // (c) quick.enqueue after an application statement, racing quick.settle_pointers collecting
  // the leased, inactive, empty zone (min_inactive 0).
  void check_real_functions(Isolation isolation) {
    const auto result = enumerate(
        2, "c-" + short_name(isolation), LeaseState::kLive,
        [isolation](const std::string& tenant) {
          return std::vector<SessionScript>{
              {"E",
               {fixed_step("E1:begin", "BEGIN ISOLATION LEVEL " + sql_name(isolation)),
                fixed_step("E2:app", app_statement(tenant)), fixed_step("E3:enqueue", enqueue_sql(tenant)),
                fixed_step("E4:commit", "COMMIT")}},
              settle_session(tenant)};
        },
        [&](const std::string& tenant, const RunResult& run, EnumerationStats& stats) {
          if (run.at(0, 2).blocked) stats.note("E enqueue blocked");
          auto problems = check_enqueue_against_settle(tenant, run, isolation, stats);
          if (run.failure(0) == nullptr && app_rows(tenant) != 1) {
            problems.push_back("a committed transaction lost its application row");
          }
          return problems;
        });
    report(result, "functions: quick.enqueue in E(" + short_name(isolation) +
                       ", after an app statement) x quick.settle_pointers in G(RC)");
    expect_protocol_kept(result, 35);
  }

  // (c') The same race with one of the C++ producer's fast paths in place of quick.enqueue: one
  // statement locking the existing pointers FOR KEY SHARE and inserting, or, when a pointer is
  // missing (the GC deleted it), the SQL function it falls back to. `name` labels the run;
  // `fast_path` is the statement, `fallback` the step that calls the function.
  void check_producer_fast_path_race(Isolation isolation, const std::string& name,
                                     const std::function<std::string(const std::string&)>& fast_path,
                                     const std::function<testing::Step(const std::string&)>& fallback,
                                     const std::string& function) {
    const auto result = enumerate(
        2, "c-" + name + "-" + short_name(isolation), LeaseState::kLive,
        [&](const std::string& tenant) {
          return std::vector<SessionScript>{
              {"E",
               {fixed_step("E1:begin+app",
                           "BEGIN ISOLATION LEVEL " + sql_name(isolation) + "; " + app_statement(tenant)),
                fixed_step("E2:" + name, fast_path(tenant)), fallback(tenant), fixed_step("E4:commit", "COMMIT")}},
              settle_session(tenant)};
        },
        [&](const std::string& tenant, const RunResult& run, EnumerationStats& stats) {
          if (run.at(0, 1).ok() && run.at(0, 1).row_count() == 0) stats.note("E fell back to " + function);
          return check_enqueue_against_settle(tenant, run, isolation, stats);
        });
    report(result, "producer " + name + " in E(" + short_name(isolation) +
                       ", after an app statement) x "
                       "quick.settle_pointers in G(RC)");
    expect_protocol_kept(result, 35);
  }

  // The single-item fast path, falling back to quick.enqueue.
  void check_producer_fast_path(Isolation isolation) {
    check_producer_fast_path_race(
        isolation, "fast-path", fast_path_enqueue_sql,
        [](const std::string& tenant) { return fast_path_fallback(tenant, "E3:quick.enqueue?"); }, "quick.enqueue");
  }

  // The batch fast path, falling back to quick.enqueue_batch. Its batch holds the raced tenant
  // and a companion whose pointer stays, so it must write only if it locked every tenant's pointer.
  void check_producer_batch_fast_path(Isolation isolation) {
    {
      pqxx::nontransaction txn(*checker_);
      txn.exec_params(
          "INSERT INTO quick.pointers (tenant, vesting_time, last_active_time) "
          "VALUES ($1, now(), now()) ON CONFLICT DO NOTHING",
          std::string(kBatchCompanion));
    }
    check_producer_fast_path_race(
        isolation, "batch-fast-path", [](const std::string& tenant) { return batch_fast_path_enqueue_sql(tenant); },
        [](const std::string& tenant) { return batch_fast_path_fallback(tenant, "E3:quick.enqueue_batch?"); },
        "quick.enqueue_batch");
  }

  // (e) The batch fast path, with and without EnqueueOptions::pull_in_transaction, racing a visit
  // (quick.visit_zones) of the zone. The visit dequeues the zone's one item and settles the
  // pointer: it parks it until that item's lease expires, unless the enqueue's item is in the
  // zone by then. So the enqueue meets the pointer vested, locked by the visit, or parked, and
  // must leave its item findable: the pointer is vested or vests no later than the item, or a
  // pull request asks for that. A READ COMMITTED caller never fails and nobody waits but the enqueue, for a
  // visit settling its zone.
  void check_batch_fast_path_against_visit(bool pull_in_transaction) {
    {
      pqxx::nontransaction txn(*checker_);
      txn.exec_params(
          "INSERT INTO quick.pointers (tenant, vesting_time, last_active_time) "
          "VALUES ($1, now(), now()) ON CONFLICT DO NOTHING",
          std::string(kBatchCompanion));
    }
    const std::string name = pull_in_transaction ? "e-pull" : "e-request";
    const auto result = enumerate(
        2, name, LeaseState::kVisitable,
        [&](const std::string& tenant) {
          return std::vector<SessionScript>{
              {"E",
               {fixed_step("E1:begin+app", "BEGIN; " + app_statement(tenant)),
                fixed_step("E2:batch-fast-path", batch_fast_path_enqueue_sql(tenant, pull_in_transaction)),
                batch_fast_path_fallback(tenant, "E3:quick.enqueue_batch?"), fixed_step("E4:commit", "COMMIT")}},
              {"V",
               {fixed_step("V1:begin", "BEGIN"),
                fixed_step("V2:visit", "SELECT count(*) FILTER (WHERE kind = 'item') FROM quick.visit_zones(ARRAY[" +
                                           sql_literal(tenant) + "], 10, interval '30 seconds', interval '1 minute')"),
                fixed_step("V3:commit", "COMMIT")}}};
        },
        [&](const std::string& tenant, const RunResult& run, EnumerationStats& stats) {
          std::vector<std::string> problems;
          if (run.failure(0) != nullptr)
            problems.push_back("a READ COMMITTED enqueue failed: " + run.failure(0)->error);
          if (run.failure(1) != nullptr) problems.push_back("the visit failed: " + run.failure(1)->error);
          if (run.at(1, 1).blocked) problems.push_back("the visit waited");
          if (run.at(0, 1).blocked) stats.note("E waited for the visit's settle");
          // In time: vested by now (a pointer released to vest at the settle's time, which is later
          // than the item's), or vesting no later than the item.
          const std::string item =
              "greatest(clock_timestamp(), (SELECT vesting_time FROM quick.items WHERE tenant = $1 AND job_type = "
              "'race'))";
          if (count("SELECT count(*) FROM quick.items WHERE tenant = $1 AND job_type = 'race'", tenant) != 1) {
            problems.push_back("the committed item is missing");
            return problems;
          }
          const bool pointer_in_time =
              count("SELECT count(*) FROM quick.pointers WHERE tenant = $1 AND vesting_time <= " + item, tenant) == 1;
          const bool requested =
              count("SELECT count(*) FROM quick.pointer_pulls WHERE tenant = $1 AND vesting_time <= " + item, tenant) >
              0;
          stats.note(pointer_in_time ? (requested ? "pointer in time, request too" : "pointer in time")
                                     : "pull request");
          if (!pointer_in_time && !requested) problems.push_back("the item waits for a parked pointer, unrequested");
          // Found by the zone's scans: at or above the floor the visit may have raised, or named by
          // a pull request that lowers it (docs/protocol.md#the-zone-floor).
          const std::string race_item = "quick.items i WHERE i.tenant = $1 AND i.job_type = 'race'";
          const bool above_floor = count("SELECT count(*) FROM quick.pointers p, " + race_item +
                                             " AND p.tenant = $1 AND (p.floor_priority IS NULL OR "
                                             "(i.priority, i.zone_time) >= (p.floor_priority, p.floor_vesting))",
                                         tenant) == 1;
          const bool floor_requested = count("SELECT count(*) FROM quick.pointer_pulls r, " + race_item +
                                                 " AND r.tenant = $1 AND r.priority IS NOT NULL AND "
                                                 "(r.priority, r.vesting_time) <= (i.priority, i.zone_time)",
                                             tenant) > 0;
          if (!above_floor && !floor_requested)
            problems.push_back("the item sorts below the zone's floor, unrequested");
          return problems;
        });
    report(result, std::string("producer batch fast path in E(RC, ") +
                       (pull_in_transaction ? "pull in transaction" : "pull requests") +
                       ") x quick.visit_zones in V(RC)");
    expect_protocol_kept(result, 35);
  }

  // (d) Three sessions on one pointer whose GC lease has run out: E enqueues; C leases the
  // pointer again and settles it (collecting it when the zone is empty); G settles with its stale
  // lease.
  void check_three_way(Isolation isolation) {
    const auto result = enumerate(
        3, "d-" + short_name(isolation), LeaseState::kExpired,
        [isolation](const std::string& tenant) {
          return std::vector<SessionScript>{
              {"E",
               {fixed_step("E1:begin+app",
                           "BEGIN ISOLATION LEVEL " + sql_name(isolation) + "; " + app_statement(tenant)),
                fixed_step("E2:enqueue", enqueue_sql(tenant)), fixed_step("E3:commit", "COMMIT")}},
              {"C",
               {fixed_step("C1:lease", "SELECT lease_id FROM quick.lease_pointers(ARRAY[" + sql_literal(tenant) +
                                           "], interval '30 seconds')"),
                dynamic_step("C2:settle",
                             [tenant](const RunView& view) -> std::optional<std::string> {
                               const auto lease = view.previous().value();
                               if (!lease) return std::nullopt;
                               return settle_sql(tenant, sql_literal(*lease) + "::uuid");
                             })}},
              settle_session(tenant)};
        },
        [&](const std::string& tenant, const RunResult& run, EnumerationStats& stats) {
          std::vector<std::string> problems;
          if (run.at(1, 0).row_count() == 1) stats.note("C leased");
          if (run.at(1, 1).ok()) stats.note("C " + run.at(1, 1).value().value_or("(none)"));
          if (run.at(2, 1).ok()) stats.note("G " + run.at(2, 1).value().value_or("(none)"));
          if (run.failure(1) != nullptr) problems.push_back("consumer failed: " + run.failure(1)->error);
          if (run.failure(2) != nullptr) problems.push_back("GC failed: " + run.failure(2)->error);
          const bool collected = action_is(run.at(1, 1), "collected") ||
                                 (action_is(run.at(2, 1), "collected") && run.at(2, 2).ok());
          check_enqueuer(problems, tenant, run, isolation, collected);
          return problems;
        });
    report(result, "three sessions: E(" + short_name(isolation) +
                       ", quick.enqueue) x C(lease_pointers; settle_pointers) x "
                       "G(settle_pointers with an expired lease)");
    expect_protocol_kept(result, 560);
  }

  std::unique_ptr<pqxx::connection> checker_;
  std::unique_ptr<InterleavingHarness> harness_;
  int harness_sessions_ = 0;
};

// (a) Statement-level enumeration of quick.enqueue x quick.settle_pointers' collection.

TEST_F(EnqueueGcRaceTest, ReadCommittedEnqueueNeverOrphansAZoneNorAbortsInAnyInterleaving) {
  check_statement_protocol(Isolation::kReadCommitted);
}

TEST_F(EnqueueGcRaceTest, RepeatableReadEnqueueNeverOrphansAZoneAndAbortsOnlyWhenTheGcDeletedItsPointer) {
  check_statement_protocol(Isolation::kRepeatableRead);
}

TEST_F(EnqueueGcRaceTest, SerializableEnqueueNeverOrphansAZoneAndAbortsOnlyWhenTheGcDeletedItsPointer) {
  check_statement_protocol(Isolation::kSerializable);
}

// (b) Negative controls: the same enumeration and checker must find orphans in broken variants.

TEST_F(EnqueueGcRaceTest, CheckerSeesOrphansWhenTheEnqueueOnlyInsertsThePointerOnConflict) {
  const auto result = enumerate(
      2, "b-onconflict", LeaseState::kLive,
      [](const std::string& tenant) {
        return std::vector<SessionScript>{on_conflict_only_enqueue(tenant), protocol_gc(tenant)};
      },
      count_only());
  report(result, "control: ON CONFLICT-only enqueue (RC) x G(RC protocol)");
  expect_orphans_seen(result);
}

TEST_F(EnqueueGcRaceTest, CheckerSeesOrphansWhenTheGcDeletesInOneStatement) {
  const auto result = enumerate(
      2, "b-onestatement", LeaseState::kLive,
      [](const std::string& tenant) {
        return std::vector<SessionScript>{protocol_enqueue(tenant, Isolation::kReadCommitted, true),
                                          single_statement_gc(tenant)};
      },
      count_only());
  report(result, "control: E(RC protocol) x single-statement DELETE ... NOT EXISTS GC (RC)");
  expect_orphans_seen(result);
}

TEST_F(EnqueueGcRaceTest, CheckerSeesOrphansWhenTheGcRunsInRepeatableRead) {
  expect_snapshot_gc_orphans(Isolation::kRepeatableRead);
}

TEST_F(EnqueueGcRaceTest, CheckerSeesOrphansWhenTheGcRunsInSerializable) {
  expect_snapshot_gc_orphans(Isolation::kSerializable);
}

// (c) The real SQL functions.

TEST_F(EnqueueGcRaceTest, ReadCommittedCallerOfQuickEnqueueRacingSettlePointersNeverOrphansNorAborts) {
  check_real_functions(Isolation::kReadCommitted);
}

TEST_F(EnqueueGcRaceTest, RepeatableReadCallerOfQuickEnqueueAbortsOnlyWhenSettlePointersCollected) {
  check_real_functions(Isolation::kRepeatableRead);
}

TEST_F(EnqueueGcRaceTest, SerializableCallerOfQuickEnqueueAbortsOnlyWhenSettlePointersCollected) {
  check_real_functions(Isolation::kSerializable);
}

// (d) Enqueue x consumer lease/settle x GC with a stale lease.

TEST_F(EnqueueGcRaceTest, ReadCommittedProducerFastPathRacingSettlePointersNeverOrphansNorAborts) {
  check_producer_fast_path(Isolation::kReadCommitted);
}
TEST_F(EnqueueGcRaceTest, RepeatableReadProducerFastPathAbortsOnlyWhenSettlePointersCollected) {
  check_producer_fast_path(Isolation::kRepeatableRead);
}
TEST_F(EnqueueGcRaceTest, SerializableProducerFastPathAbortsOnlyWhenSettlePointersCollected) {
  check_producer_fast_path(Isolation::kSerializable);
}

TEST_F(EnqueueGcRaceTest, ReadCommittedProducerBatchFastPathRacingSettlePointersNeverOrphansNorAborts) {
  check_producer_batch_fast_path(Isolation::kReadCommitted);
}
TEST_F(EnqueueGcRaceTest, RepeatableReadProducerBatchFastPathAbortsOnlyWhenSettlePointersCollected) {
  check_producer_batch_fast_path(Isolation::kRepeatableRead);
}
TEST_F(EnqueueGcRaceTest, SerializableProducerBatchFastPathAbortsOnlyWhenSettlePointersCollected) {
  check_producer_batch_fast_path(Isolation::kSerializable);
}

TEST_F(EnqueueGcRaceTest, BatchFastPathRacingAVisitLeavesItsItemFindableInAnyInterleaving) {
  check_batch_fast_path_against_visit(/*pull_in_transaction=*/false);
}
TEST_F(EnqueueGcRaceTest, BatchFastPathPullingInTheTransactionRacingAVisitLeavesItsItemFindable) {
  check_batch_fast_path_against_visit(/*pull_in_transaction=*/true);
}

TEST_F(EnqueueGcRaceTest, ReadCommittedEnqueueConsumerAndGcNeverOrphanAZoneNorHangInAnyInterleaving) {
  check_three_way(Isolation::kReadCommitted);
}

TEST_F(EnqueueGcRaceTest, RepeatableReadEnqueueConsumerAndGcNeverOrphanAZoneNorHangInAnyInterleaving) {
  check_three_way(Isolation::kRepeatableRead);
}

TEST_F(EnqueueGcRaceTest, SerializableEnqueueConsumerAndGcNeverOrphanAZoneNorHangInAnyInterleaving) {
  check_three_way(Isolation::kSerializable);
}

}  // namespace
}  // namespace quick
