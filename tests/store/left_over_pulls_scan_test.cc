// quick.scan_pointers says when it left pull requests over (docs/consumer.md#waking-up): in the
// last row's vesting time, the database's now, whether or not its peek found vested pointers. The
// Scanner then looks again within a millisecond or two (scanner/idle_wait.h): the common cause is
// another Scanner applying those requests at that moment, whose pulls vest with nothing to
// announce them. Here a second session holds the request's row lock, as that Scanner's
// apply_pointer_pulls does until it commits.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "store/pointer_store.h"
#include "support/test_database.h"

namespace quick::store {
namespace {

using quick::testing::DatabaseTest;

class LeftOverPullsScanTest : public DatabaseTest {
 protected:
  void SetUp() override {
    DatabaseTest::SetUp();
    query("SELECT quick.enqueue('parked', 'job', '{}', interval '1 hour')");
    query("SELECT quick.enqueue('parked', 'job')");  // vests before its zone's pointer: a pull request
    ASSERT_EQ(query_value<int>("SELECT count(*) FROM quick.pointer_pulls"), 1);
  }
  Scan scan() {
    auto conn = connect();
    pqxx::nontransaction txn(*conn);
    return scan_pointers(txn, 100, 100);
  }
  static std::set<std::string> tenants(const Scan& scan) {
    std::set<std::string> out;
    for (const auto& pointer : scan.pointers) out.insert(pointer.tenant);
    return out;
  }
};

TEST_F(LeftOverPullsScanTest, ARequestAnotherApplierHoldsIsReportedBesideTheVestedPointersFound) {
  query("SELECT quick.enqueue('busy', 'job')");  // a vested pointer for the peek to find
  auto applier = connect();
  pqxx::work applying(*applier);
  applying.exec("SELECT 1 FROM quick.pointer_pulls FOR UPDATE");

  const Scan while_applied = scan();
  EXPECT_EQ(while_applied.pulled, 0);
  EXPECT_EQ(tenants(while_applied), std::set<std::string>{"busy"});
  ASSERT_TRUE(while_applied.next_vesting.has_value()) << "requests left over, vested pointers found";
  EXPECT_EQ(*while_applied.next_vesting, while_applied.database_now);

  applying.abort();  // the other applier gave up: this Scanner's next scan applies the request
  const Scan after = scan();
  EXPECT_EQ(after.pulled, 1);
  EXPECT_EQ(tenants(after), (std::set<std::string>{"busy", "parked"}));
  EXPECT_FALSE(after.next_vesting.has_value()) << "nothing left over; vested pointers found";
}

TEST_F(LeftOverPullsScanTest, ARequestWhosePointerIsLockedIsReportedWhenNothingIsVested) {
  auto visitor = connect();
  pqxx::work visiting(*visitor);
  visiting.exec("SELECT 1 FROM quick.pointers WHERE tenant = 'parked' FOR NO KEY UPDATE");

  const Scan while_locked = scan();
  EXPECT_EQ(while_locked.pulled, 0);
  EXPECT_TRUE(while_locked.pointers.empty());
  ASSERT_TRUE(while_locked.next_vesting.has_value());
  EXPECT_EQ(*while_locked.next_vesting, while_locked.database_now);
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.pointer_pulls"), 1) << "kept for a later scan";
}

}  // namespace
}  // namespace quick::store
