// Pointer versions (docs/protocol.md#pointer-versions): while a snapshot holds vacuum back, every
// version a pointer ever had keeps its entry in pointers_pkey, and a lookup by tenant meets them
// all unless it reads the index backwards from the newest. Each hot-path pointer lock is written
// as a range on tenant with ORDER BY tenant DESC LIMIT 1, because with `tenant = x` the ORDER BY
// is redundant and Postgres reads the index forwards (or, with one pointer in the table's
// statistics, reads pointers_vesting whole). Here one pointer has 600 versions held by a
// snapshot, and each path may read only a few index entries of either pointer index; the control
// (a plain `tenant = x` lock) reads them all.
#include <gtest/gtest.h>

#include <functional>
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
                             "SELECT pg_stat_get_xact_tuples_returned('quick.pointers_pkey'::regclass) + "
                             "pg_stat_get_xact_tuples_returned('quick.pointers_vesting'::regclass)")
                          .at(0)
                          .at(0)
                          .as<long long>();
    txn.abort();
    return read;
  }
};

TEST_F(PointerVersionsTest, EveryHotPathPointerLockReadsTheNewestVersionFirstWhileASnapshotKeepsTheOthers) {
  query("SELECT quick.enqueue('z', 'job')");
  query("ANALYZE quick.pointers");  // one pointer in the statistics: the plan that read pointers_vesting whole

  auto holder = connect();
  pqxx::nontransaction held(*holder);
  held.exec("BEGIN ISOLATION LEVEL REPEATABLE READ");
  held.exec("SELECT count(*) FROM quick.pointers");  // takes the snapshot
  // Each update moves the indexed vesting time, so it is never HOT: a new entry per version.
  auto writer = connect();
  pqxx::nontransaction write(*writer);
  for (int i = 0; i < kVersions; ++i) {
    write.exec(
        "UPDATE quick.pointers SET vesting_time = statement_timestamp() - interval '1 minute' WHERE tenant = 'z'");
  }

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
  held.exec("ROLLBACK");
}

}  // namespace
}  // namespace quick
