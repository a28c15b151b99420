// Pointer versions (docs/protocol.md#pointer-versions): while a snapshot holds vacuum back, every
// version a pointer ever had keeps its entry in pointers_tenant, and a lookup by tenant meets them
// all unless it reads the index backwards from the newest. Each hot-path pointer lock is written
// as a range on tenant with ORDER BY tenant DESC LIMIT 1, because with `tenant = x` the ORDER BY
// is redundant and Postgres reads the index forwards (or, with one pointer in the table's
// statistics, reads pointers_vesting whole). Here one pointer has 600 versions held by a
// snapshot, and each path may read only a few index entries of either pointer index; the control
// (a plain `tenant = x` lock) reads them all.
//
// The same holds for the paths that write the pointer: each reaches the version it locked by its
// ctid, and no unique index checks the new version against the old ones (docs/protocol.md#pointer-slots).
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "support/test_database.h"

namespace quick {
namespace {

constexpr int kVersions = 600;

class PointerVersionsTest : public testing::DatabaseTest {
 protected:
  // Index entries of quick.pointers' two indexes that `statement` reads, counted in its own
  // transaction (pg_stat_get_xact_tuples_returned), which is rolled back.
  long long pointer_entries_read(const std::string& statement) {
    auto conn = connect();
    pqxx::work txn(*conn);
    txn.exec("SET LOCAL enable_seqscan = off");  // as the functions run (the control too)
    txn.exec(statement);
    const auto read = txn.exec(
                             "SELECT pg_stat_get_xact_tuples_returned('quick.pointers_tenant'::regclass) + "
                             "pg_stat_get_xact_tuples_returned('quick.pointers_vesting'::regclass)")
                          .at(0)
                          .at(0)
                          .as<long long>();
    txn.abort();
    return read;
  }

  // Heap blocks of quick.pointers fetched plus index entries of its two indexes read by
  // `statement`, in a transaction that first runs `setup` (not counted) and is rolled back.
  // `check`, if given, must return true in that transaction after the statement: the path really
  // wrote the pointer.
  long long pointer_reads_of_write(const std::string& setup, const std::string& statement, const std::string& check) {
    auto conn = connect();
    pqxx::work txn(*conn);
    txn.exec("SET LOCAL enable_seqscan = off");
    if (!setup.empty()) txn.exec(setup);
    const std::string counters =
        "SELECT pg_stat_get_xact_blocks_fetched('quick.pointers'::regclass) + "
        "pg_stat_get_xact_tuples_returned('quick.pointers_tenant'::regclass) + "
        "pg_stat_get_xact_tuples_returned('quick.pointers_vesting'::regclass)";
    const auto before = txn.exec(counters).at(0).at(0).as<long long>();
    txn.exec(statement);
    const auto after = txn.exec(counters).at(0).at(0).as<long long>();
    if (!check.empty()) {
      EXPECT_TRUE(txn.exec(check).at(0).at(0).as<bool>()) << statement << ": " << check;
    }
    txn.abort();
    return after - before;
  }

  // A snapshot held open, and kVersions versions of the pointer of zone 'z' made after it.
  std::unique_ptr<pqxx::connection> hold_versions(const std::string& vesting) {
    auto holder = connect();
    pqxx::nontransaction held(*holder);
    held.exec("BEGIN ISOLATION LEVEL REPEATABLE READ");
    held.exec("SELECT count(*) FROM quick.pointers");  // takes the snapshot
    auto writer = connect();
    pqxx::nontransaction write(*writer);
    for (int i = 0; i < kVersions; ++i) {
      write.exec("UPDATE quick.pointers SET vesting_time = " + vesting + " WHERE tenant = 'z'");
    }
    return holder;
  }
};

TEST_F(PointerVersionsTest, EveryHotPathPointerLockReadsTheNewestVersionFirstWhileASnapshotKeepsTheOthers) {
  query("SELECT quick.enqueue('z', 'job')");
  query("ANALYZE quick.pointers");  // one pointer in the statistics: the plan that read pointers_vesting whole

  // Each update moves the indexed vesting time, so it is never HOT: a new entry per version.
  const auto holder = hold_versions("statement_timestamp() - interval '1 minute'");

  const long long control = pointer_entries_read("SELECT 1 FROM quick.pointers WHERE tenant = 'z' FOR KEY SHARE");
  EXPECT_GE(control, kVersions) << "the control: a lock by `tenant = 'z'` meets every version";

  const std::vector<std::pair<std::string, std::string>> paths{
      {"quick.enqueue", "SELECT quick.enqueue('z', 'job')"},
      {"quick.enqueue_into_existing_zone", "SELECT quick.enqueue_into_existing_zone('z', 'job', '{}', '0', 0)"},
      {"quick.enqueue_batch", "SELECT quick.enqueue_batch('[{\"tenant\": \"z\", \"job_type\": \"job\"}]')"},
      {"quick.enqueue_batch_into_existing_zones",
       "SELECT quick.enqueue_batch_into_existing_zones('[{\"tenant\": \"z\", \"job_type\": \"job\"}]')"},
      {"quick.request_pointer_pulls",
       "SELECT quick.request_pointer_pulls(ARRAY['z'], ARRAY[statement_timestamp() - interval '1 hour'], "
       "ARRAY[0])"},
      {"quick.visit_zones", "SELECT count(*) FROM quick.visit_zones(ARRAY['z'], 10, '30 s', '1 hour')"},
  };
  for (const auto& [path, statement] : paths) {
    EXPECT_LT(pointer_entries_read(statement), 10) << path << " (the control read " << control << ")";
  }
}

// A lock that cannot take the newest version (another visit holds it, SKIP LOCKED) or a lookup
// that would filter it out (not vested) must not go on through the older versions: each would
// read every one of them, as a visit of a busy single tenant's zone did while a snapshot was held.
// The paths find the newest version without a lock or a filter, then lock it by its ctid.
TEST_F(PointerVersionsTest, APointerThatIsLockedOrNotVestedIsPassedOverWithoutReadingItsOlderVersions) {
  query("SELECT quick.enqueue('z', 'job')");
  query("ANALYZE quick.pointers");
  {
    const auto holder = hold_versions("statement_timestamp() + interval '1 hour'");
    const auto rows = query("SELECT action FROM quick.visit_zones(ARRAY['z'], 10, '30 s', '1 hour')");
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0][0].as<std::string>(), "not_vested");
    EXPECT_LT(pointer_entries_read("SELECT count(*) FROM quick.visit_zones(ARRAY['z'], 10, '30 s', '1 hour')"), 10)
        << "quick.visit_zones of a zone whose pointer is not vested";
  }
  const auto holder = hold_versions("statement_timestamp() - interval '1 minute'");
  query("INSERT INTO quick.pointer_pulls (tenant, vesting_time, priority) VALUES ('z', statement_timestamp(), 0)");
  auto visitor = connect();
  pqxx::work visiting(*visitor);
  visiting.exec(
      "SELECT 1 FROM quick.pointers WHERE tenant >= 'z' AND tenant <= 'z' ORDER BY tenant DESC LIMIT 1 "
      "FOR NO KEY UPDATE");
  const auto rows = query("SELECT action FROM quick.visit_zones(ARRAY['z'], 10, '30 s', '1 hour')");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0].as<std::string>(), "locked");
  EXPECT_LT(pointer_entries_read("SELECT count(*) FROM quick.visit_zones(ARRAY['z'], 10, '30 s', '1 hour')"), 10)
      << "quick.visit_zones of a zone another visit holds";
  query("SELECT quick.apply_pointer_pulls()");
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.pointer_pulls"), 1) << "the request waits for the visit";
  EXPECT_LT(pointer_entries_read("SELECT quick.apply_pointer_pulls()"), 10)
      << "quick.apply_pointer_pulls of a request whose pointer a visit holds";
  visiting.abort();
  query("SELECT quick.apply_pointer_pulls()");
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.pointer_pulls"), 0) << "and is served once it ends";
}

// The batch fast path's pull in the caller's transaction is a data-modifying CTE, run to the end
// even when it claimed no pointer: reached through the claimed tenants, it reads no pointer then.
// Joined the other way round it read every pointer of the table (and, while a snapshot held vacuum
// back, every version of each), in every call of the default path: with one busy tenant under a
// held snapshot that made each enqueue 40 times dearer within a minute.
TEST_F(PointerVersionsTest, TheBatchFastPathReadsOnlyTheNewestVersionOfItsOwnZonesPointer) {
  query("SELECT quick.enqueue('z', 'job')");
  query("ANALYZE quick.pointers");  // one pointer in the statistics: the plan that read them all
  const auto holder = hold_versions("statement_timestamp() + interval '1 minute'");
  EXPECT_LT(pointer_entries_read("SELECT quick.enqueue_batch_into_existing_zones('[{\"tenant\": \"z\", "
                                 "\"job_type\": \"job\"}]')"),
            10);
  EXPECT_LT(pointer_entries_read("SELECT quick.enqueue_batch_into_existing_zones('[{\"tenant\": \"z\", "
                                 "\"job_type\": \"job\"}]', true)"),
            10)
      << "pulled in the caller's transaction";
}

// Each update moves the indexed vesting time, so none is HOT: with a unique index on tenant, the
// new version's entry was checked against all kVersions older ones (a heap fetch each).
TEST_F(PointerVersionsTest, EveryHotPathPointerWriteReachesTheNewestVersionWithoutReadingTheOthers) {
  query("SELECT quick.enqueue('z', 'job')");
  query("ANALYZE quick.pointers");
  const auto holder = hold_versions("statement_timestamp() - interval '1 minute'");

  const long long control = pointer_reads_of_write(
      "", "UPDATE quick.pointers SET vesting_time = statement_timestamp() WHERE tenant = 'z'", "");
  EXPECT_GE(control, kVersions) << "the control: an update by `tenant = 'z'` meets every version";

  // The visit leases the item and settles the pointer to the item lease's end.
  EXPECT_LT(
      pointer_reads_of_write("", "SELECT count(*) FROM quick.visit_zones(ARRAY['z'], 10, '30 s', '1 hour')",
                             "SELECT vesting_time > statement_timestamp() FROM quick.pointers WHERE tenant = 'z'"),
      40)
      << "quick.visit_zones (the control read " << control << ")";

  // The pull paths, on a parked pointer.
  const std::string park = "UPDATE quick.pointers SET vesting_time = statement_timestamp() + interval '1 hour'";
  const std::string pulled = "SELECT vesting_time <= statement_timestamp() FROM quick.pointers WHERE tenant = 'z'";
  EXPECT_LT(pointer_reads_of_write(park + "; INSERT INTO quick.pointer_pulls (tenant, vesting_time, priority) "
                                          "VALUES ('z', statement_timestamp(), 0)",
                                   "SELECT quick.apply_pointer_pulls()", pulled),
            40)
      << "quick.apply_pointer_pulls (the control read " << control << ")";
  EXPECT_LT(
      pointer_reads_of_write(park, "SELECT quick.enqueue_into_existing_zone('z', 'job', '{}', '0', 0, true)", pulled),
      40)
      << "quick.enqueue_into_existing_zone, pulled in its transaction (the control read " << control << ")";
}

}  // namespace
}  // namespace quick
