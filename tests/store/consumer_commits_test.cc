// The consumer's bookkeeping statements, a visit and a scan, commit without waiting for the WAL
// flush (docs/protocol.md#durability-of-a-consumers-commits): each sets synchronous_commit off
// for its own transaction, and for nothing after it. The sessions that run them also run the
// Scanner's role and membership writes, and a setting left behind would make those asynchronous
// as well.
#include <string>

#include <gtest/gtest.h>

#include "store/consumer_store.h"
#include "store/pointer_store.h"
#include "support/items.h"
#include "support/test_database.h"

namespace quick::store {
namespace {

using namespace std::chrono_literals;
using quick::testing::DatabaseTest;
using quick::testing::enqueue_committed;
using quick::testing::make_item;

class ConsumerCommitsTest : public DatabaseTest {
 protected:
  static std::string synchronous_commit(pqxx::transaction_base& txn) {
    return txn.exec1("SHOW synchronous_commit")[0].as<std::string>();
  }
};

TEST_F(ConsumerCommitsTest, AVisitCommitsAsynchronouslyAndLeavesTheSessionAsItWas) {
  auto conn = connect();
  enqueue_committed(*conn, make_item("tenant-a"));
  {
    pqxx::work txn(*conn);
    ASSERT_EQ(synchronous_commit(txn), "on");
    const ZoneVisit visit = visit_zones(txn, {"tenant-a"}, 10, 60000ms, 3600000ms, {}, 4 << 20);
    EXPECT_EQ(visit.items.size(), 1u);
    EXPECT_EQ(synchronous_commit(txn), "off");
    txn.commit();
  }
  pqxx::nontransaction after(*conn);
  EXPECT_EQ(synchronous_commit(after), "on");
  EXPECT_EQ(after.exec1("SELECT count(*) FROM quick.items WHERE lease_id IS NOT NULL")[0].as<int>(), 1)
      << "the visit's leases are committed";
}

TEST_F(ConsumerCommitsTest, AScanCommitsAsynchronouslyAndLeavesTheSessionAsItWas) {
  auto conn = connect();
  enqueue_committed(*conn, make_item("tenant-a"));
  {
    pqxx::work txn(*conn);
    const Scan scan = scan_pointers(txn, 10, 10);
    EXPECT_EQ(scan.pointers.size(), 1u);
    EXPECT_EQ(synchronous_commit(txn), "off");
    txn.commit();
  }
  pqxx::nontransaction after(*conn);
  EXPECT_EQ(synchronous_commit(after), "on");
}

}  // namespace
}  // namespace quick::store
