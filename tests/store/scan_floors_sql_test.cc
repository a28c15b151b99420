// The Scanner's floors in SQL (docs/consumer.md#scanning-from-a-floor): quick.scan_pointers with
// a pointer floor leaves out pointers that vested before it, and with a request floor leaves
// pull requests made before it for a later full scan, which applies them.
#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <string>

#include "store/pointer_store.h"
#include "support/items.h"
#include "support/test_database.h"

namespace quick::store {
namespace {

using namespace std::chrono_literals;
using quick::testing::DatabaseTest;
using quick::testing::db_clock;

class ScanFloorsSqlTest : public DatabaseTest {
 protected:
  Scan scan(const ScanFloors& floors) {
    auto conn = connect();
    pqxx::nontransaction txn(*conn);
    return scan_pointers(txn, 100, 100, floors);
  }
  static std::set<std::string> tenants(const Scan& scan) {
    std::set<std::string> out;
    for (const auto& pointer : scan.pointers) out.insert(pointer.tenant);
    return out;
  }
};

TEST_F(ScanFloorsSqlTest, APointerFloorLeavesOutPointersThatVestedBeforeIt) {
  for (const char* tenant : {"old", "recent"}) query(std::string("SELECT quick.enqueue('") + tenant + "', 'job')");
  query("UPDATE quick.pointers SET vesting_time = now() - interval '10 minutes' WHERE tenant = 'old'");
  auto conn = connect();
  const auto now = db_clock(*conn);

  EXPECT_EQ(tenants(scan({})), (std::set<std::string>{"old", "recent"}));
  EXPECT_EQ(tenants(scan({std::nullopt, now - 60s})), std::set<std::string>{"recent"});
}

TEST_F(ScanFloorsSqlTest, ARequestFloorLeavesOlderRequestsForTheNextFullScan) {
  query("SELECT quick.enqueue('z', 'job', '{}', interval '1 hour')");
  query("SELECT quick.enqueue('z', 'job')");  // vests before its parked pointer: a pull request
  ASSERT_EQ(query_value<int>("SELECT count(*) FROM quick.pointer_pulls"), 1);
  query("UPDATE quick.pointer_pulls SET requested_at = now() - interval '10 minutes'");
  auto conn = connect();
  const auto now = db_clock(*conn);

  const auto from_floor = scan({now - 60s, std::nullopt});
  EXPECT_EQ(from_floor.pulled, 0);
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.pointer_pulls"), 1) << "left for a full scan";
  EXPECT_EQ(scan({}).pulled, 1);
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.pointer_pulls"), 0);
}

}  // namespace
}  // namespace quick::store
