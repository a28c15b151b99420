// Each zone's floor (docs/protocol.md#the-zone-floor): a visit raises it to the zone's lowest key
// so that later scans start past what the zone consumed, and nothing may end up below it unseen.
// An item that sorts below the floor (a lower priority than the floor's, an enqueue or requeue
// whose statement began before the visit that raised it) is named by a pull request, which
// lowers the floor when applied; an enqueue in flight keeps a visit from raising the floor at
// all; and a zone whose only items are below its floor is never collected. Every enqueue path is
// run, at READ COMMITTED and REPEATABLE READ, with deliberate interleavings on real connections.
// A READ COMMITTED writer judges its key on the pointer as a new statement reads it after its
// lock, because the lock itself can return a version older than the settle that raised the floor.
// The tests with a snapshot held show what the floor is for: with a snapshot held open, a probe from the floor
// reads an entry or two of the zone index where one from the zone's beginning walks every
// consumed job's entries.
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "support/enqueue_paths.h"
#include "support/interleaving.h"
#include "support/test_database.h"

namespace quick {
namespace {

using testing::EnqueuePath;

struct Visit {
  std::vector<long long> item_ids;
  std::string action;  // the zone's outcome ('' when it was not visited)
};

class ZoneFloorTest : public testing::DatabaseTest {
 protected:
  // One visit of `tenant` (up to 100 items, 30-s item leases, zones empty for an hour collected).
  Visit visit(const std::string& tenant) {
    Visit out;
    const auto rows = query("SELECT kind, action, item_id FROM quick.visit_zones(ARRAY['" + tenant +
                            "'], 100, interval '30 seconds', interval '1 hour')");
    for (const auto& row : rows) {
      if (row[0].as<std::string>() == "item") out.item_ids.push_back(row[2].as<long long>());
      if (row[0].as<std::string>() == "pointer") out.action = row[1].as<std::string>();
    }
    return out;
  }
  // The zone's floor as text "(priority,vesting)", or nullopt when it has none.
  std::optional<std::string> floor_of(const std::string& tenant) {
    const auto rows = query("SELECT floor_priority, floor_vesting FROM quick.pointers WHERE tenant = '" + tenant + "'");
    if (rows.empty() || rows[0][0].is_null()) return std::nullopt;
    return "(" + rows[0][0].as<std::string>() + "," + rows[0][1].as<std::string>() + ")";
  }
  void complete_leased(const std::string& tenant) {
    query("SELECT quick.complete(id, lease_id) FROM quick.items WHERE tenant = '" + tenant +
          "' AND lease_id IS NOT NULL");
  }
  // The zone is drained: one item of `priority` enqueued, taken by a visit and completed. The
  // visit raised the floor to that priority; the pointer is made vested again so that only the
  // floor can hold a new item back.
  void drain_at_priority(const std::string& tenant, int priority) {
    query("SELECT quick.enqueue('" + tenant + "', 'job', '{}', '0', " + std::to_string(priority) + ")");
    ASSERT_EQ(visit(tenant).item_ids.size(), 1u);
    complete_leased(tenant);
    ASSERT_TRUE(floor_of(tenant).has_value()) << "the visit did not raise the floor";
    query("UPDATE quick.pointers SET vesting_time = now() WHERE tenant = '" + tenant + "'");
  }
  int pull_requests_naming_priority(const std::string& tenant, int priority) {
    return query_value<int>("SELECT count(*) FROM quick.pointer_pulls WHERE tenant = '" + tenant +
                            "' AND priority = " + std::to_string(priority));
  }
  // Entries of the zone index that `statement` reads: the statement and the count in one
  // transaction, whose own statistics pg_stat_get_xact_tuples_returned reports.
  long long zone_index_entries_read(const std::string& statement) {
    auto conn = connect();
    pqxx::work txn(*conn);
    // The plan the hot-path functions get (their SET clauses): an autoanalyze of the test's
    // database mid-test must not turn the probe into a scan that reads no zone index entries.
    txn.exec("SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off");
    txn.exec(statement);
    return txn.exec("SELECT pg_stat_get_xact_tuples_returned('quick.items_zone_order'::regclass)")
        .at(0)
        .at(0)
        .as<long long>();
  }
  // Entries of the zone index a probe for the zone's first vested item reads, from `from` (a row of
  // priority and vesting time).
  long long probe_entries(const std::string& tenant, const std::string& from) {
    return zone_index_entries_read("SELECT true FROM quick.items i WHERE i.tenant = " + testing::sql_literal(tenant) +
                                   " AND (i.priority, i.zone_time) >= " + from +
                                   " AND i.zone_time <= now() AND i.vesting_time <= now()"
                                   " ORDER BY i.priority, i.zone_time LIMIT 1");
  }
  // Runs `statement`, one writer's statement at READ COMMITTED that locks the pointers of zones "a"
  // and "z" in that order, in the interleaving where its KEY SHARE lock returns a version of z's
  // pointer older than the live one (docs/protocol.md#the-lock-can-return-an-older-version):
  //   V locks a's pointer FOR UPDATE; the writer's statement takes its snapshot and waits for it;
  //   S updates z's pointer (a no-key update, committed after that snapshot);
  //   V locks z's pointer FOR NO KEY UPDATE, S takes and releases KEY SHARE on it (its xmax is now
  //   a MultiXact, so V's update below is recorded as a no-key one), V locks it FOR UPDATE;
  //   V's settle raises z's floor to priority 5 and commits.
  // The writer then locks the version of z's pointer its snapshot saw (updated by a no-key update:
  // no conflict), follows the update chain to lock the newer versions too, and returns the old one.
  // Both pointers exist (drain_at_priority) before it runs.
  testing::RunResult run_behind_a_settle(const std::string& statement) {
    const std::string a = " FROM quick.pointers WHERE tenant = 'a'";
    const std::string z = " FROM quick.pointers WHERE tenant = 'z'";
    const std::vector<testing::SessionScript> scripts = {
        {"V",
         {testing::fixed_step("V1:a-for-update", "BEGIN; SELECT 1" + a + " FOR UPDATE"),
          testing::fixed_step("V2:z-no-key-update", "SELECT 1" + z + " FOR NO KEY UPDATE"),
          testing::fixed_step("V3:z-for-update", "SELECT 1" + z + " FOR UPDATE"),
          testing::fixed_step("V4:settle",
                              "UPDATE quick.pointers SET floor_priority = 5, floor_vesting = now() "
                              "WHERE tenant = 'z'"),
          testing::fixed_step("V5", "COMMIT")}},
        {"S",
         {testing::fixed_step("S1:z-update", "UPDATE quick.pointers SET last_active_time = now() WHERE tenant = 'z'"),
          testing::fixed_step("S2:z-key-share", "BEGIN; SELECT 1" + z + " FOR KEY SHARE"),
          testing::fixed_step("S3", "COMMIT")}},
        {"E",
         {testing::fixed_step("E1", "BEGIN ISOLATION LEVEL READ COMMITTED"), testing::fixed_step("E2", statement),
          testing::fixed_step("E3", "COMMIT")}}};
    testing::InterleavingHarness harness(url(), 3);
    return harness.run(scripts, {0, 2, 2, 1, 0, 1, 1, 0, 0, 0, 2});
  }
  // A REPEATABLE READ snapshot held open until the connection closes: vacuum keeps every row
  // version made after it.
  std::unique_ptr<pqxx::connection> hold_snapshot() {
    auto holder = connect();
    pqxx::nontransaction held(*holder);
    held.exec("BEGIN ISOLATION LEVEL REPEATABLE READ");
    held.exec("SELECT count(*) FROM quick.items");  // takes the snapshot
    return holder;
  }
  void enqueue_hundred(const std::string& tenant) {
    query("SELECT quick.enqueue_batch(jsonb_agg(jsonb_build_object('tenant', " + testing::sql_literal(tenant) +
          ", 'job_type', 'job'))) FROM generate_series(1, 100)");
  }
  // Items of the zone that a visit took (leased), after applying pull requests.
  std::vector<long long> apply_pulls_and_visit(const std::string& tenant) {
    query("SELECT quick.apply_pointer_pulls()");
    query("UPDATE quick.pointers SET vesting_time = least(vesting_time, now()) WHERE tenant = '" + tenant + "'");
    return visit(tenant).item_ids;
  }
};

// A leased item keeps its place in the zone (a lease sets vesting_time, not zone_time) and is live
// until it completes, so a visit's floor stays at or below the items it leased: were their leases
// to run out, they must be found again from the floor. Once they are gone, the next visit raises
// the floor past them.
TEST_F(ZoneFloorTest, AVisitRaisesTheFloorPastWhatItTookAndLaterItemsAreStillFound) {
  for (int i = 0; i < 3; ++i) query("SELECT quick.enqueue('z', 'job')");
  query("SELECT quick.enqueue('z', 'job', '{}', interval '1 hour')");
  const auto first_enqueued = query_value<std::string>("SELECT min(enqueued_at)::text FROM quick.items");
  const auto last_enqueued = query_value<std::string>("SELECT max(enqueued_at)::text FROM quick.items");
  EXPECT_FALSE(floor_of("z").has_value()) << "a new pointer has no floor";

  const auto first = visit("z");
  EXPECT_EQ(first.item_ids.size(), 3u);
  ASSERT_TRUE(floor_of("z").has_value());
  EXPECT_TRUE(query_value<bool>("SELECT floor_priority = 0 AND floor_vesting <= '" + first_enqueued +
                                "' FROM quick.pointers WHERE tenant = 'z'"))
      << "floor " << *floor_of("z") << " must not pass the leased items, the first enqueued at " << first_enqueued;
  EXPECT_TRUE(
      query_value<bool>("SELECT vesting_time = (SELECT min(vesting_time) FROM quick.items WHERE lease_id "
                        "IS NOT NULL) FROM quick.pointers WHERE tenant = 'z'"))
      << "the pointer vests when the first lease runs out, before the delayed item";
  complete_leased("z");
  query("UPDATE quick.pointers SET vesting_time = now() WHERE tenant = 'z'");
  EXPECT_TRUE(visit("z").item_ids.empty());
  EXPECT_TRUE(
      query_value<bool>("SELECT vesting_time = (SELECT vesting_time FROM quick.items) FROM quick.pointers "
                        "WHERE tenant = 'z'"))
      << "then when the delayed item vests";
  EXPECT_TRUE(query_value<bool>("SELECT floor_priority = 0 AND floor_vesting >= '" + last_enqueued +
                                "' FROM quick.pointers WHERE tenant = 'z'"))
      << "floor " << *floor_of("z") << ", last item enqueued at " << last_enqueued;
  EXPECT_TRUE(query_value<bool>("SELECT floor_vesting <= statement_timestamp() FROM quick.pointers"))
      << "the floor's vesting time is capped at the visit's time, so later enqueues sort above it";

  // The pointer vested, so that only the floor could call for a pull request.
  query("UPDATE quick.pointers SET vesting_time = now() WHERE tenant = 'z'");
  query("SELECT quick.enqueue('z', 'job')");
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.pointer_pulls"), 0) << "the new item is above the floor";
  EXPECT_EQ(visit("z").item_ids.size(), 1u);
}

class ZoneFloorPathTest : public ZoneFloorTest, public ::testing::WithParamInterface<EnqueuePath> {};

TEST_P(ZoneFloorPathTest, AnItemBelowTheFloorIsNamedByAPullRequestAndFoundOnceItIsApplied) {
  drain_at_priority("z", 5);
  auto conn = connect();
  {
    pqxx::work txn(*conn);
    ASSERT_FALSE(txn.exec(testing::enqueue_statement(GetParam(), "z")).empty());  // priority 0
    txn.commit();
  }
  EXPECT_EQ(pull_requests_naming_priority("z", 0), 1);

  // A visit before the request is applied does not see the item, and must not lose it.
  const auto early = visit("z");
  EXPECT_TRUE(early.item_ids.empty());
  EXPECT_NE(early.action, "collected");
  EXPECT_EQ(apply_pulls_and_visit("z").size(), 1u) << "the applied request lowered the floor";
  EXPECT_TRUE(query_value<bool>("SELECT floor_priority = 0 FROM quick.pointers WHERE tenant = 'z'"));
}

// An enqueue whose transaction is open holds the pointer FOR KEY SHARE: the visit cannot lock
// the zone to settle it, so it leaves the floor where it was, and the item is found after the
// commit. REPEATABLE READ callers always record a request (they may read an older floor).
TEST_P(ZoneFloorPathTest, AnEnqueueInFlightKeepsTheVisitFromRaisingTheFloor) {
  for (const auto& [isolation, tenant] : {std::pair<std::string, std::string>{"READ COMMITTED", "z-rc"},
                                          std::pair<std::string, std::string>{"REPEATABLE READ", "z-rr"}}) {
    SCOPED_TRACE(isolation);
    drain_at_priority(tenant, 0);
    const auto floor_before = floor_of(tenant);

    auto producer = connect();
    pqxx::nontransaction session(*producer);
    session.exec("BEGIN ISOLATION LEVEL " + isolation);
    ASSERT_FALSE(session.exec(testing::enqueue_statement(GetParam(), tenant)).empty());

    const auto during = visit(tenant);
    EXPECT_TRUE(during.item_ids.empty());
    EXPECT_EQ(during.action, "released_busy");
    EXPECT_EQ(floor_of(tenant), floor_before) << "a visit raised the floor over an enqueue in flight";

    session.exec("COMMIT");
    EXPECT_EQ(apply_pulls_and_visit(tenant).size(), 1u);
  }
}

// The Postgres behaviour the re-read after the lock guards against, on quick.pointers itself: the
// KEY SHARE lock waits for the settle, then returns z's floor from before it.
TEST_F(ZoneFloorTest, AKeyShareLockCanReturnAPointerVersionOlderThanASettle) {
  drain_at_priority("a", 0);
  drain_at_priority("z", 0);
  const auto run = run_behind_a_settle(
      "SELECT string_agg(p.floor_priority::text, ',' ORDER BY t) FROM unnest('{a,z}'::text[]) t "
      "CROSS JOIN LATERAL (SELECT floor_priority FROM quick.pointers WHERE tenant = t FOR KEY SHARE) p");
  ASSERT_TRUE(run.at(2, 1).blocked) << run.trace();
  ASSERT_TRUE(run.committed_all(2)) << run.trace();
  EXPECT_EQ(run.at(2, 1).value(), std::optional<std::string>("0,0"))
      << "the lock returned z's live floor (5); if Postgres now always does, the re-read after the lock "
         "could go. "
      << run.trace();
  EXPECT_EQ(floor_of("z").value_or("").substr(0, 3), "(5,");
}

// The writer's key for z (priority 0) is below the floor the settle raised (priority 5): it must be
// named by a pull request, though the writer's lock returned the old floor (priority 0).
TEST_F(ZoneFloorTest, ABatchWhoseLockReturnsAnOlderPointerVersionStillNamesItsKeyBelowTheFloor) {
  const std::vector<std::pair<std::string, std::string>> writers = {
      {"quick.enqueue_batch",
       R"(SELECT * FROM quick.enqueue_batch('[{"tenant":"a","job_type":"job"},{"tenant":"z","job_type":"job"}]'))"},
      {"the batch fast path",
       R"(SELECT id FROM quick.enqueue_batch_into_existing_zones('[{"tenant":"a","job_type":"job"},)"
       R"({"tenant":"z","job_type":"job"}]'::jsonb, false) id)"},
      {"quick.request_pointer_pulls (requeue, release)",
       "SELECT quick.request_pointer_pulls('{a,z}', ARRAY[now(), now()], '{0,0}')"}};
  for (const auto& [writer, statement] : writers) {
    SCOPED_TRACE(writer);
    query("DELETE FROM quick.pointer_pulls");
    query("UPDATE quick.pointers SET floor_priority = NULL, floor_vesting = NULL");
    drain_at_priority("a", 0);
    drain_at_priority("z", 0);
    const auto run = run_behind_a_settle(statement);
    ASSERT_TRUE(run.at(2, 1).blocked) << run.trace();
    ASSERT_TRUE(run.committed_all(2)) << run.trace();
    EXPECT_EQ(pull_requests_naming_priority("z", 0), 1) << run.trace();
    EXPECT_EQ(pull_requests_naming_priority("a", 0), 0) << "a's floor did not move: " << run.trace();
    query("DELETE FROM quick.items");
  }
}

// The single-item paths lock and decide in a window too short to interleave by hand, so the older
// version is made here by the writer itself: a trigger raises the floor right after the lock
// (as the item is inserted). A decision made on what the lock returned misses it.
TEST_P(ZoneFloorPathTest, AnEnqueueJudgesItsKeyOnThePointerAfterItsLockNotOnWhatTheLockReturned) {
  drain_at_priority("z", 0);
  query(R"(CREATE FUNCTION public.raise_floor() RETURNS trigger LANGUAGE plpgsql AS $$
           BEGIN
               UPDATE quick.pointers SET floor_priority = 5, floor_vesting = now() WHERE tenant = NEW.tenant;
               RETURN NULL;
           END $$;
           CREATE TRIGGER raise_floor AFTER INSERT ON quick.items FOR EACH ROW EXECUTE FUNCTION public.raise_floor())");
  auto conn = connect();
  {
    pqxx::work txn(*conn);
    ASSERT_FALSE(txn.exec(testing::enqueue_statement(GetParam(), "z")).empty());  // priority 0
    txn.commit();
  }
  EXPECT_EQ(pull_requests_naming_priority("z", 0), 1);
  query("DROP TRIGGER raise_floor ON quick.items");
  EXPECT_EQ(apply_pulls_and_visit("z").size(), 1u);
}

INSTANTIATE_TEST_SUITE_P(EveryPath, ZoneFloorPathTest, ::testing::ValuesIn(testing::every_enqueue_path()),
                         [](const auto& info) { return testing::enqueue_path_name(info.param); });

TEST_F(ZoneFloorTest, ABatchEnqueueBelowTheFloorNamesItsLowestKey) {
  drain_at_priority("z", 5);
  query(R"(SELECT * FROM quick.enqueue_batch('[{"tenant":"z","job_type":"job","priority":7},
                                               {"tenant":"z","job_type":"job","priority":2}]'))");
  EXPECT_EQ(pull_requests_naming_priority("z", 2), 1);
  EXPECT_EQ(apply_pulls_and_visit("z").size(), 2u);
}

// A requeue (or released lease) writes a key that may sort below a floor raised while the item
// was leased: a visit that raised it past the lease's end, made here directly.
TEST_F(ZoneFloorTest, ARequeueBelowTheFloorIsNamedByAPullRequest) {
  query("SELECT quick.enqueue('z', 'job')");
  ASSERT_EQ(visit("z").item_ids.size(), 1u);
  // The pointer vested, so that only the floor can call for a request.
  const std::string raise_floor =
      "UPDATE quick.pointers SET floor_priority = 0, floor_vesting = now() + interval '10 minutes', "
      "vesting_time = now()";
  query(raise_floor);
  EXPECT_EQ(query_value<std::string>("SELECT quick.requeue(id, lease_id)::text FROM quick.items"), "done");
  EXPECT_EQ(pull_requests_naming_priority("z", 0), 1);
  EXPECT_EQ(apply_pulls_and_visit("z").size(), 1u);

  query(raise_floor);
  query(
      "SELECT quick.ack_items(array_agg(id), array_agg(lease_id), array_agg('release'::text), "
      "array_agg(interval '0'), array_agg(NULL::text)) FROM quick.items");
  EXPECT_EQ(pull_requests_naming_priority("z", 0), 1);
  EXPECT_EQ(apply_pulls_and_visit("z").size(), 1u);
}

// A request that names no key (an older build's enqueue, a resumed tenant or job type) cannot
// say how far to lower the floor, so applying it drops the floor.
TEST_F(ZoneFloorTest, APullRequestThatNamesNoKeyDropsTheFloor) {
  drain_at_priority("z", 0);
  query("INSERT INTO quick.pointer_pulls (tenant, vesting_time) VALUES ('z', now())");
  query("SELECT quick.apply_pointer_pulls()");
  EXPECT_FALSE(floor_of("z").has_value());
}

// Only the decision to collect a zone looks below its floor: an item there (its request not
// applied yet) keeps the zone, which starts again from its beginning and vests now.
TEST_F(ZoneFloorTest, AZoneWhoseItemsAreAllBelowItsFloorIsNotCollected) {
  query("SELECT quick.enqueue('z', 'job')");
  query(
      "UPDATE quick.pointers SET floor_priority = 0, floor_vesting = now() + interval '10 minutes', "
      "last_active_time = now() - interval '2 hours'");
  const auto stray = visit("z");
  EXPECT_TRUE(stray.item_ids.empty());
  EXPECT_EQ(stray.action, "requeued");
  EXPECT_FALSE(floor_of("z").has_value());
  EXPECT_EQ(visit("z").item_ids.size(), 1u);
}

TEST_F(ZoneFloorTest, WithASnapshotHeldOpenAProbeFromTheFloorSkipsWhatTheZoneConsumed) {
  const auto holder = hold_snapshot();

  for (int round = 0; round < 20; ++round) {
    enqueue_hundred("z");
    ASSERT_EQ(apply_pulls_and_visit("z").size(), 100u) << "round " << round;
    complete_leased("z");
  }
  query("SELECT quick.enqueue('z', 'job')");

  const auto floor = query("SELECT floor_priority, floor_vesting FROM quick.pointers WHERE tenant = 'z'");
  ASSERT_FALSE(floor.empty() || floor[0][0].is_null());
  const auto from_floor = probe_entries(
      "z", "(" + floor[0][0].as<std::string>() + ", '" + floor[0][1].as<std::string>() + "'::timestamptz)");
  const auto from_beginning = probe_entries("z", "(-2147483648, '-infinity'::timestamptz)");
  // The last visit's floor stayed at the first item it leased (docs/protocol.md#zone-time-and-leases),
  // so the probe from it steps over one round: its 100 items' entries and those of their leases
  // that were not HOT updates (at the same keys).
  EXPECT_LT(from_floor, 250) << "from the zone's beginning: " << from_beginning;
  EXPECT_GT(from_beginning, 2000) << "the control: from the zone's beginning the probe walks the 2,000 consumed "
                                     "items' entries";
}

// A zone that stays busy (vested items left after every dequeue) is not settled, so its floor
// stays where it was while the consumed items' entries pile up above it. A visit then walks them
// once, in its dequeue: no probe before it (the dequeue finds whether there is anything to take),
// and the probe after it (is anything left?) starts at the last item taken.
TEST_F(ZoneFloorTest, WithASnapshotHeldOpenABusyZonesVisitWalksWhatTheZoneConsumedOnce) {
  const auto holder = hold_snapshot();

  for (int batch = 0; batch < 22; ++batch) {
    enqueue_hundred("z");
  }
  for (int round = 0; round < 20; ++round) {
    const auto taken = visit("z");
    ASSERT_EQ(taken.item_ids.size(), 100u) << "round " << round;
    ASSERT_EQ(taken.action, "requeued") << "round " << round;
    complete_leased("z");
  }
  ASSERT_FALSE(floor_of("z").has_value()) << "a busy zone is not settled, so its floor does not move";

  // Every entry the zone's consumed items left: theirs, and their leases' when a lease was not a
  // HOT update (at the same key: a lease leaves zone_time alone).
  const auto consumed = probe_entries("z", "(-2147483648, '-infinity'::timestamptz)");
  const auto read = zone_index_entries_read(
      "SELECT count(*) FROM quick.visit_zones(ARRAY['z'], 100, interval '30 seconds', interval '1 hour')");
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.items WHERE lease_id IS NOT NULL"), 0)
      << "the counted visit was rolled back";
  EXPECT_GT(consumed, 2000) << "the control: the 2,000 consumed items' entries";
  EXPECT_LT(read, consumed + 400) << "the consumed items' entries were walked more than once";
}

}  // namespace
}  // namespace quick
