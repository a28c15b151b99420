// quick::enqueue / quick::enqueue_batch: one autocommit statement, committed when they return,
// with enqueue_in's protocol and results: new zones get their pointer, parked zones' pointers are
// pulled in the statement itself (no pull request, a wake-up notification), duplicates are
// reported, bad input changes nothing and leaves the connection usable.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "quick/errors.h"
#include "quick/producer.h"
#include "support/test_database.h"

namespace quick {
namespace {

NewItem item_for(const std::string& tenant, const std::string& payload = "{}") {
  NewItem item;
  item.tenant = tenant;
  item.job_type = "job";
  item.payload = payload;
  return item;
}

class OneCallEnqueueTest : public testing::DatabaseTest {
 protected:
  int count(const std::string& where) { return query_value<int>("SELECT count(*) FROM " + where); }
};

TEST_F(OneCallEnqueueTest, AnItemIsCommittedWhenTheCallReturnsIntoANewOrAnExistingZone) {
  auto conn = connect();
  const auto first = enqueue(*conn, item_for("t", "{\"n\":1}"));
  const auto second = enqueue(*conn, item_for("t", "{\"n\":2}"));
  EXPECT_FALSE(first.duplicate);
  EXPECT_GT(second.item_id, first.item_id);
  // Seen from another session: committed.
  EXPECT_EQ(
      query_value<int>("SELECT (payload->>'n')::int FROM quick.items WHERE id = " + std::to_string(second.item_id)), 2);
  EXPECT_EQ(count("quick.pointers WHERE tenant = 't'"), 1);
}

TEST_F(OneCallEnqueueTest, AParkedZonesPointerIsPulledInTheStatementItself) {
  query("SELECT quick.enqueue('parked', 'job', '{}', interval '1 hour')");
  auto conn = connect();
  enqueue(*conn, item_for("parked"));
  enqueue_batch(*conn, {item_for("parked")});
  EXPECT_EQ(count("quick.pointer_pulls"), 0);
  EXPECT_EQ(count("quick.pointers WHERE tenant = 'parked' AND vesting_time <= now()"), 1);
}

TEST_F(OneCallEnqueueTest, ClientItemIdsAreCheckedAsByEnqueueIn) {
  auto conn = connect();
  NewItem item = item_for("t");
  item.client_item_id = "order-1";
  const auto first = enqueue(*conn, item);
  const auto again = enqueue(*conn, item);
  EXPECT_TRUE(again.duplicate);
  EXPECT_EQ(again.item_id, first.item_id);
  const auto batch = enqueue_batch(*conn, {item_for("t"), item});
  ASSERT_EQ(batch.size(), 2u);
  EXPECT_FALSE(batch[0].duplicate);
  EXPECT_TRUE(batch[1].duplicate);
  EXPECT_EQ(batch[1].item_id, first.item_id);
  EXPECT_EQ(count("quick.items"), 2);
}

TEST_F(OneCallEnqueueTest, ABatchIsCommittedAllTogetherWithIdsInInputOrder) {
  auto conn = connect();
  enqueue(*conn, item_for("old"));
  for (const bool with_new_zone : {false, true}) {
    std::vector<NewItem> items;
    for (int i = 0; i < 5; ++i) {
      items.push_back(item_for(with_new_zone && i == 3 ? "new" : "old", "{\"i\":" + std::to_string(i) + "}"));
    }
    const auto results = enqueue_batch(*conn, items);
    ASSERT_EQ(results.size(), items.size());
    for (int i = 0; i < 5; ++i) {
      EXPECT_EQ(query_value<int>("SELECT (payload->>'i')::int FROM quick.items WHERE id = " +
                                 std::to_string(results[static_cast<std::size_t>(i)].item_id)),
                i)
          << (with_new_zone ? "general path" : "fast path");
    }
  }
  EXPECT_EQ(count("quick.pointers WHERE tenant = 'new'"), 1);
  EXPECT_TRUE(enqueue_batch(*conn, {}).empty());
}

TEST_F(OneCallEnqueueTest, BadInputChangesNothingAndLeavesTheConnectionUsable) {
  auto conn = connect();
  EXPECT_THROW(enqueue(*conn, item_for("")), InvalidArgument);
  EXPECT_THROW(enqueue_batch(*conn, {item_for("ok"), item_for("t", "not json")}), InvalidArgument);
  query("UPDATE quick.limits SET max_payload_bytes = 100");
  const std::string big = "{\"x\":\"" + std::string(200, 'a') + "\"}";
  enqueue(*conn, item_for("existing"));
  for (const std::string tenant : {"existing", "fresh"}) {
    EXPECT_THROW(enqueue(*conn, item_for(tenant, big)), InvalidArgument) << tenant;
    EXPECT_THROW(enqueue_batch(*conn, {item_for(tenant), item_for(tenant, big)}), InvalidArgument) << tenant;
  }
  EXPECT_EQ(count("quick.items"), 1);
  EXPECT_EQ(count("quick.pointers WHERE tenant = 'fresh'"), 0);
  EXPECT_NO_THROW(enqueue(*conn, item_for("after")));
}

// One statement: the general function runs only when the fast path inserted nothing.
TEST_F(OneCallEnqueueTest, TheGeneralFunctionRunsOnlyForANewZone) {
  auto conn = connect();
  {
    pqxx::nontransaction session(*conn);
    session.exec("SET track_functions = 'pl'");
  }
  const auto calls_of = [&](const std::string& function) {
    pqxx::nontransaction session(*conn);
    session.exec("SELECT pg_stat_force_next_flush()");
    session.exec("SELECT pg_stat_clear_snapshot()");
    const auto row = session.exec(
        "SELECT coalesce(sum(calls), 0) FROM pg_stat_user_functions WHERE schemaname = "
        "'quick' AND funcname = " +
        session.quote(function));
    return row[0][0].as<long>();
  };
  enqueue(*conn, item_for("t"));  // a new zone: the fast path finds no pointer, quick.enqueue runs
  const long general_before = calls_of("enqueue"), fast_before = calls_of("enqueue_into_existing_zone");
  enqueue(*conn, item_for("t"));
  enqueue(*conn, item_for("t"));
  EXPECT_EQ(calls_of("enqueue_into_existing_zone") - fast_before, 2);
  EXPECT_EQ(calls_of("enqueue") - general_before, 0);
}

}  // namespace
}  // namespace quick
