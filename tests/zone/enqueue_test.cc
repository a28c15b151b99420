#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "quick/quick.h"
#include "support/test_database.h"

namespace quick {
namespace {

using testing::DatabaseTest;

class EnqueueTest : public DatabaseTest {};

TEST_F(EnqueueTest, EnqueueCreatesItemAndPointerVisibleAfterCommit) {
  auto conn = connect();
  pqxx::work txn(*conn);
  const auto result = enqueue_in(txn, NewItem{"tenant-a", "email", R"({"to":"x"})"});
  EXPECT_GT(result.item_id, 0);
  EXPECT_FALSE(result.duplicate);
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.items"), 0) << "visible before commit";
  txn.commit();
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.items WHERE tenant = 'tenant-a'"), 1);
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.pointers WHERE tenant = 'tenant-a'"), 1);
}

}  // namespace
}  // namespace quick
