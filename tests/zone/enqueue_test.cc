// Enqueue (paper section 5, DESIGN.md section 2): single and batch, inside the caller's transaction.
#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "quick/quick.h"
#include "store/pointer_store.h"
#include "support/items.h"
#include "support/test_database.h"

namespace quick {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using testing::DatabaseTest;
using testing::make_item;
using testing::stored_item;
using testing::stored_pointer;

class EnqueueTest : public DatabaseTest {
 protected:
  int items(const std::string& where = "true") {
    return query_value<int>("SELECT count(*) FROM quick.items WHERE " + where);
  }
  int pointers(const std::string& where = "true") {
    return query_value<int>("SELECT count(*) FROM quick.pointers WHERE " + where);
  }

  void wait_until_blocked_on_lock(int pid) {
    auto observer = connect();
    testing::wait_until_blocked_on_lock(*observer, pid);
  }
};

TEST_F(EnqueueTest, EnqueueCreatesItemAndPointerVisibleAfterCommit) {
  auto conn = connect();
  pqxx::work txn(*conn);
  const auto result = enqueue_in(txn, make_item("tenant-a", "email", R"({"to":"x"})"));
  EXPECT_GT(result.item_id, 0);
  EXPECT_FALSE(result.duplicate);
  EXPECT_EQ(items(), 0) << "item visible before commit";
  EXPECT_EQ(pointers(), 0) << "pointer visible before commit";
  txn.commit();
  EXPECT_EQ(items("tenant = 'tenant-a'"), 1);
  EXPECT_EQ(pointers("tenant = 'tenant-a'"), 1);
  const auto item = stored_item(*conn, result.item_id);
  ASSERT_TRUE(item.has_value());
  EXPECT_EQ(item->job_type, "email");
  EXPECT_EQ(item->payload, R"({"to": "x"})");
  EXPECT_EQ(item->error_count, 0);
  EXPECT_FALSE(item->lease_id.has_value());
}

TEST_F(EnqueueTest, RolledBackEnqueueLeavesNeitherItemNorPointer) {
  auto conn = connect();
  {
    pqxx::work txn(*conn);
    enqueue_in(txn, make_item("tenant-a"));
    enqueue_in(txn, make_item("tenant-a"));
    txn.abort();
  }
  EXPECT_EQ(items(), 0);
  EXPECT_EQ(pointers(), 0);
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.pointer_pulls"), 0);
}

TEST_F(EnqueueTest, NewPointerVestsWhenTheFirstItemVests) {
  auto conn = connect();
  const auto id = testing::enqueue_committed(*conn, make_item("tenant-a", "job", "{}", 3'600'000ms));
  const auto item = stored_item(*conn, id);
  const auto pointer = stored_pointer(*conn, "tenant-a");
  ASSERT_TRUE(item && pointer);
  EXPECT_EQ(pointer->vesting_time, item->vesting_time);
  EXPECT_FALSE(pointer->lease_id.has_value());
}

// The item commits with the caller's own write, or not at all, whatever the isolation level.
template <typename Transaction>
void enqueue_with_own_write_then_commit(pqxx::connection& conn) {
  Transaction txn(conn);
  txn.exec("INSERT INTO app_orders (note) VALUES ('order 1')");
  const auto result = enqueue_in(txn, make_item("tenant-iso", "ship", R"({"order":1})"));
  EXPECT_FALSE(result.duplicate);
  enqueue_in(txn, make_item("tenant-iso", "ship", R"({"order":2})"));
  txn.commit();
}

TEST_F(EnqueueTest, EnqueueWorksInReadCommittedCallerTransaction) {
  query("CREATE TABLE app_orders (note text)");
  auto conn = connect();
  enqueue_with_own_write_then_commit<pqxx::transaction<pqxx::isolation_level::read_committed>>(*conn);
  EXPECT_EQ(items("tenant = 'tenant-iso'"), 2);
  EXPECT_EQ(pointers("tenant = 'tenant-iso'"), 1);
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM app_orders"), 1);
}

TEST_F(EnqueueTest, EnqueueWorksInRepeatableReadCallerTransaction) {
  query("CREATE TABLE app_orders (note text)");
  auto conn = connect();
  enqueue_with_own_write_then_commit<pqxx::transaction<pqxx::isolation_level::repeatable_read>>(*conn);
  EXPECT_EQ(items("tenant = 'tenant-iso'"), 2);
  EXPECT_EQ(pointers("tenant = 'tenant-iso'"), 1);
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM app_orders"), 1);
}

TEST_F(EnqueueTest, EnqueueWorksInSerializableCallerTransaction) {
  query("CREATE TABLE app_orders (note text)");
  auto conn = connect();
  enqueue_with_own_write_then_commit<pqxx::transaction<pqxx::isolation_level::serializable>>(*conn);
  EXPECT_EQ(items("tenant = 'tenant-iso'"), 2);
  EXPECT_EQ(pointers("tenant = 'tenant-iso'"), 1);
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM app_orders"), 1);
}

// Consumers lease and settle pointers with non-key updates; a snapshot-isolation producer must not
// fail because one happened after its snapshot (only a pointer deletion conflicts with enqueue).
template <typename Transaction>
void enqueue_after_a_consumer_updated_the_pointer(pqxx::connection& producer_conn, pqxx::connection& consumer_conn) {
  Transaction txn(producer_conn);
  txn.exec("SELECT count(*) FROM quick.pointers");  // takes the snapshot
  {
    pqxx::work consumer(consumer_conn);
    ASSERT_EQ(store::lease_pointers(consumer, {"busy"}, 60'000ms).size(), 1u);
    consumer.commit();
  }
  EXPECT_NO_THROW(enqueue_in(txn, make_item("busy")));
  txn.commit();
}

TEST_F(EnqueueTest, RepeatableReadEnqueueSucceedsAfterAConsumerLeasedThePointerSinceItsSnapshot) {
  auto producer = connect();
  auto consumer = connect();
  testing::enqueue_committed(*producer, make_item("busy"));
  enqueue_after_a_consumer_updated_the_pointer<pqxx::transaction<pqxx::isolation_level::repeatable_read>>(*producer,
                                                                                                          *consumer);
  EXPECT_EQ(items("tenant = 'busy'"), 2);
}

TEST_F(EnqueueTest, SerializableEnqueueSucceedsAfterAConsumerLeasedThePointerSinceItsSnapshot) {
  auto producer = connect();
  auto consumer = connect();
  testing::enqueue_committed(*producer, make_item("busy"));
  enqueue_after_a_consumer_updated_the_pointer<pqxx::transaction<pqxx::isolation_level::serializable>>(*producer,
                                                                                                       *consumer);
  EXPECT_EQ(items("tenant = 'busy'"), 2);
}

TEST_F(EnqueueTest, VestingDelayIsMeasuredOnTheDatabaseClockFromTheEnqueue) {
  auto conn = connect();
  const auto id = testing::enqueue_committed(*conn, make_item("tenant-a", "job", "{}", 90'000ms));
  EXPECT_EQ(query_value<std::string>("SELECT (vesting_time - enqueued_at)::text FROM quick.items WHERE id = " +
                                     std::to_string(id)),
            "00:01:30");
}

TEST_F(EnqueueTest, VestingDelayHidesTheItemFromPeekAndDequeueUntilItVests) {
  auto conn = connect();
  testing::with_short_lease([&](std::chrono::milliseconds delay) {
    const std::string tenant = "t" + std::to_string(delay.count());
    const auto id = testing::enqueue_committed(*conn, make_item(tenant, "job", "{}", delay));
    bool visible_early = false;
    {
      pqxx::work txn(*conn);
      visible_early = !peek_in(txn, tenant, {10, std::nullopt}).empty() ||
                      !dequeue_in(txn, tenant, {10, 30'000ms, std::nullopt}).empty();
      txn.abort();
    }
    if (testing::db_clock(*conn) >= stored_item(*conn, id)->vesting_time) return false;  // too slow
    EXPECT_FALSE(visible_early) << "an unvested item was visible";
    testing::wait_until_item_vests(*conn, id);
    pqxx::work txn(*conn);
    const auto peeked = peek_in(txn, tenant, {10, std::nullopt});
    EXPECT_EQ(peeked.size(), 1u);
    const auto dequeued = dequeue_in(txn, tenant, {10, 30'000ms, std::nullopt});
    EXPECT_EQ(dequeued.size(), 1u);
    if (dequeued.size() == 1) {
      EXPECT_EQ(dequeued[0].id, id);
    }
    return true;
  });
}

TEST_F(EnqueueTest, ItemsAreOrderedByPriorityThenVestingTime) {
  auto conn = connect();
  // Vesting times differ because each enqueue runs in its own statement and transaction.
  const auto low_early = testing::enqueue_committed(*conn, make_item("t", "job", "{}", 0ms, 5));
  const auto high_late = testing::enqueue_committed(*conn, make_item("t", "job", "{}", 0ms, 1));
  const auto high_earliest = testing::enqueue_committed(*conn, make_item("t", "job", "{}", 0ms, 1));
  // Make the vesting order explicit, independent of the enqueue order.
  query(
      "UPDATE quick.items SET vesting_time = now() - interval '1 minute', zone_time = now() - interval '1 minute' "
      "WHERE id = " +
      std::to_string(high_earliest));
  const auto urgent = testing::enqueue_committed(*conn, make_item("t", "job", "{}", 0ms, -3));
  pqxx::work txn(*conn);
  const auto peeked = peek_in(txn, "t", {10, std::nullopt});
  std::vector<std::int64_t> ids;
  for (const auto& item : peeked) ids.push_back(item.id);
  EXPECT_THAT(ids, ::testing::ElementsAre(urgent, high_earliest, high_late, low_early));
}

TEST_F(EnqueueTest, ReEnqueueOfAQueuedClientItemIdReturnsTheSameIdAsDuplicateAndInsertsNothing) {
  auto conn = connect();
  pqxx::work first(*conn);
  const auto original = enqueue_in(first, make_item("tenant-a", "job", R"({"v":1})", 0ms, 0, "order-17"));
  first.commit();
  EXPECT_FALSE(original.duplicate);

  pqxx::work second(*conn);
  const auto again = enqueue_in(second, make_item("tenant-a", "job", R"({"v":2})", 0ms, 0, "order-17"));
  second.commit();
  EXPECT_TRUE(again.duplicate);
  EXPECT_EQ(again.item_id, original.item_id);
  EXPECT_EQ(items(), 1);
  EXPECT_EQ(stored_item(*conn, original.item_id)->payload, R"({"v": 1})") << "duplicate overwrote the item";
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.pointer_pulls"), 0);
}

TEST_F(EnqueueTest, DuplicateClientItemIdIsDetectedWithinTheSameTransaction) {
  auto conn = connect();
  pqxx::work txn(*conn);
  const auto first = enqueue_in(txn, make_item("tenant-a", "job", "{}", 0ms, 0, "c1"));
  const auto second = enqueue_in(txn, make_item("tenant-a", "job", "{}", 0ms, 0, "c1"));
  txn.commit();
  EXPECT_FALSE(first.duplicate);
  EXPECT_TRUE(second.duplicate);
  EXPECT_EQ(second.item_id, first.item_id);
  EXPECT_EQ(items(), 1);
}

TEST_F(EnqueueTest, ClientItemIdIsUniqueOnlyWithinItsTenant) {
  auto conn = connect();
  pqxx::work txn(*conn);
  const auto a = enqueue_in(txn, make_item("tenant-a", "job", "{}", 0ms, 0, "same"));
  const auto b = enqueue_in(txn, make_item("tenant-b", "job", "{}", 0ms, 0, "same"));
  txn.commit();
  EXPECT_FALSE(b.duplicate);
  EXPECT_NE(a.item_id, b.item_id);
  EXPECT_EQ(items(), 2);
}

TEST_F(EnqueueTest, ClientItemIdCanBeEnqueuedAgainAfterCompletion) {
  auto conn = connect();
  const auto first = testing::enqueue_committed(*conn, make_item("tenant-a", "job", "{}", 0ms, 0, "c1"));
  {
    pqxx::work txn(*conn);
    const auto leased = dequeue_in(txn, "tenant-a", {1, 30'000ms, std::nullopt});
    ASSERT_EQ(leased.size(), 1u);
    EXPECT_EQ(complete_in(txn, leased[0].id, *leased[0].lease_id), Outcome::kDone);
    txn.commit();
  }
  pqxx::work txn(*conn);
  const auto again = enqueue_in(txn, make_item("tenant-a", "job", "{}", 0ms, 0, "c1"));
  txn.commit();
  EXPECT_FALSE(again.duplicate);
  EXPECT_NE(again.item_id, first);
  EXPECT_EQ(items("client_item_id = 'c1'"), 1);
}

// Single enqueue re-reads the winner with a fresh snapshot after ON CONFLICT found a row that a
// concurrent transaction committed while we waited for it.
TEST_F(EnqueueTest, DuplicateOfAConcurrentlyCommittedClientItemIdReturnsTheCommittedItem) {
  auto holder_conn = connect();
  // The zone's pointer exists already, so the racer blocks on the item's client id, not on the
  // pointer's creation.
  testing::enqueue_committed(*holder_conn, make_item("tenant-a"));
  pqxx::work holder(*holder_conn);
  const auto original = enqueue_in(holder, make_item("tenant-a", "job", "{}", 0ms, 0, "race"));

  auto racer_conn = connect();
  const int racer_pid = racer_conn->backendpid();
  auto racer = std::async(std::launch::async, [&] {
    pqxx::work txn(*racer_conn);
    const auto result = enqueue_in(txn, make_item("tenant-a", "job", "{}", 0ms, 0, "race"));
    txn.commit();
    return result;
  });
  wait_until_blocked_on_lock(racer_pid);
  holder.commit();
  const auto result = racer.get();
  EXPECT_TRUE(result.duplicate);
  EXPECT_EQ(result.item_id, original.item_id);
  EXPECT_EQ(items(), 2);
}

TEST_F(EnqueueTest, BatchDuplicateOfAConcurrentlyCommittedClientItemIdReturnsTheCommittedItem) {
  auto holder_conn = connect();
  // The zone's pointer exists already, so the racer blocks on the item's client id, not on the
  // pointer's creation.
  testing::enqueue_committed(*holder_conn, make_item("tenant-a"));
  pqxx::work holder(*holder_conn);
  const auto original = enqueue_in(holder, make_item("tenant-a", "job", "{}", 0ms, 0, "race"));

  auto racer_conn = connect();
  const int racer_pid = racer_conn->backendpid();
  auto racer = std::async(std::launch::async, [&] {
    pqxx::work txn(*racer_conn);
    const auto results = enqueue_batch_in(txn,
                                          {make_item("tenant-a", "job", "{}", 0ms, 0, "race"), make_item("tenant-a")});
    txn.commit();
    return results;
  });
  wait_until_blocked_on_lock(racer_pid);
  holder.commit();
  const auto results = racer.get();
  ASSERT_EQ(results.size(), 2u);
  EXPECT_TRUE(results[0].duplicate);
  EXPECT_EQ(results[0].item_id, original.item_id) << "the batch reported an item id that does not exist";
  EXPECT_EQ(items(), 3);
}

// Each result of a batch is its own input's item, new (not a duplicate), with its input's tenant,
// job type and priority; input i carried the payload {"n": first_n + i}, which says whose it is.
void expect_results_are_their_inputs(pqxx::connection& conn, const std::vector<NewItem>& batch,
                                     const std::vector<EnqueueResult>& results, int first_n) {
  ASSERT_EQ(results.size(), batch.size());
  for (std::size_t i = 0; i < results.size(); ++i) {
    EXPECT_FALSE(results[i].duplicate) << "result " << i;
    const auto item = stored_item(conn, results[i].item_id);
    ASSERT_TRUE(item.has_value()) << "result " << i;
    EXPECT_EQ(item->tenant, batch[i].tenant) << "result " << i;
    EXPECT_EQ(item->job_type, batch[i].job_type) << "result " << i;
    EXPECT_EQ(item->priority, batch[i].priority) << "result " << i;
    EXPECT_EQ(item->payload, "{\"n\": " + std::to_string(first_n + static_cast<int>(i)) + "}") << "result " << i;
  }
}

TEST_F(EnqueueTest, BatchReturnsResultsInInputOrder) {
  auto conn = connect();
  std::vector<NewItem> batch;
  for (int i = 0; i < 5; ++i) {
    batch.push_back(
        make_item(i % 2 == 0 ? "tenant-b" : "tenant-a", "job", "{\"n\":" + std::to_string(i) + "}", 0ms, 4 - i));
  }
  pqxx::work txn(*conn);
  const auto results = enqueue_batch_in(txn, batch);
  txn.commit();
  expect_results_are_their_inputs(*conn, batch, results, 0);
}

TEST_F(EnqueueTest, BatchReportsDuplicatesWithinTheBatchAndAgainstExistingItems) {
  auto conn = connect();
  const auto existing = testing::enqueue_committed(*conn, make_item("tenant-a", "job", R"({"old":1})", 0ms, 0, "old"));
  pqxx::work txn(*conn);
  const auto results = enqueue_batch_in(txn, {
                                                 make_item("tenant-a", "job", R"({"p":1})", 0ms, 0, "new"),
                                                 make_item("tenant-a", "job", R"({"p":2})", 0ms, 0, "old"),
                                                 make_item("tenant-a", "job", R"({"p":3})", 0ms, 0, "new"),
                                                 make_item("tenant-b", "job", R"({"p":4})", 0ms, 0, "new"),
                                                 make_item("tenant-a", "job", R"({"p":5})"),
                                             });
  txn.commit();
  ASSERT_EQ(results.size(), 5u);
  EXPECT_FALSE(results[0].duplicate);
  EXPECT_TRUE(results[1].duplicate);
  EXPECT_EQ(results[1].item_id, existing);
  EXPECT_TRUE(results[2].duplicate);
  EXPECT_EQ(results[2].item_id, results[0].item_id);
  EXPECT_FALSE(results[3].duplicate) << "client ids are per tenant";
  EXPECT_NE(results[3].item_id, results[0].item_id);
  EXPECT_FALSE(results[4].duplicate);
  EXPECT_EQ(items(), 4);
  EXPECT_EQ(stored_item(*conn, results[0].item_id)->payload, R"({"p": 1})");
  EXPECT_EQ(stored_item(*conn, existing)->payload, R"({"old": 1})");
}

TEST_F(EnqueueTest, BatchWithOneInvalidItemInsertsNothingAndNamesTheItem) {
  auto conn = connect();
  pqxx::work txn(*conn);
  try {
    enqueue_batch_in(txn, {make_item("tenant-a"), make_item("tenant-a", "")});
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& error) {
    EXPECT_THAT(error.what(), HasSubstr("item 2"));
    EXPECT_THAT(error.what(), HasSubstr("job_type"));
  }
  txn.exec("SELECT 1");  // still usable: nothing ran
  txn.commit();
  EXPECT_EQ(items(), 0);
  EXPECT_EQ(pointers(), 0);
}

TEST_F(EnqueueTest, BatchRejectedByTheDatabaseInsertsNothing) {
  query("UPDATE quick.limits SET max_payload_bytes = 64");
  auto conn = connect();  // a new connection: it reads the database's setting
  {
    pqxx::work txn(*conn);
    try {
      enqueue_batch_in(
          txn, {make_item("tenant-a"), make_item("tenant-b", "job", "{\"big\":\"" + std::string(200, 'x') + "\"}"),
                make_item("tenant-c")});
      FAIL() << "expected InvalidArgument";
    } catch (const InvalidArgument& error) {
      EXPECT_THAT(error.what(), HasSubstr("item 2"));
      EXPECT_THAT(error.what(), HasSubstr("max_payload_bytes"));
    }
  }
  EXPECT_EQ(items(), 0);
  EXPECT_EQ(pointers(), 0);
}

TEST_F(EnqueueTest, RolledBackBatchLeavesNothing) {
  auto conn = connect();
  {
    pqxx::work txn(*conn);
    const auto results = enqueue_batch_in(txn, {make_item("tenant-a"), make_item("tenant-b")});
    EXPECT_EQ(results.size(), 2u);
    txn.abort();
  }
  EXPECT_EQ(items(), 0);
  EXPECT_EQ(pointers(), 0);
}

TEST_F(EnqueueTest, BatchCreatesOnePointerPerDistinctTenantVestingWithItsEarliestItem) {
  auto conn = connect();
  testing::enqueue_committed(*conn, make_item("tenant-existing"));
  pqxx::work txn(*conn);
  const auto results = enqueue_batch_in(txn, {
                                                 make_item("tenant-a", "job", "{}", 7'200'000ms),
                                                 make_item("tenant-b", "job", "{}", 3'600'000ms),
                                                 make_item("tenant-a", "job", "{}", 3'600'000ms),
                                                 make_item("tenant-existing"),
                                                 make_item("tenant-a", "job", "{}", 10'800'000ms),
                                             });
  txn.commit();
  EXPECT_EQ(pointers(), 3);
  EXPECT_EQ(items(), 6);
  EXPECT_EQ(stored_pointer(*conn, "tenant-a")->vesting_time, stored_item(*conn, results[2].item_id)->vesting_time);
  EXPECT_EQ(stored_pointer(*conn, "tenant-b")->vesting_time, stored_item(*conn, results[1].item_id)->vesting_time);
}

// enqueue_batch_in's fast path (sql/queries/enqueue_batch_into_existing_zones.sql) takes batches
// without client item ids whose tenants all have a pointer; anything else goes to the plpgsql
// function quick.enqueue_batch. The tests tell the two apart by Postgres' own count of the
// function's calls in the open transaction (track_functions, set for that transaction only).
class BatchFastPathTest : public EnqueueTest {
 public:
  int pulls(const std::string& where = "true") {
    return query_value<int>("SELECT count(*) FROM quick.pointer_pulls WHERE " + where);
  }
};

void count_function_calls(pqxx::transaction_base& txn) { txn.exec("SET LOCAL track_functions = 'pl'"); }

// Calls of quick.enqueue_batch so far in txn, which ran count_function_calls first.
long enqueue_batch_calls(pqxx::transaction_base& txn) {
  return txn
      .exec1(
          "SELECT coalesce(sum(calls), 0) FROM pg_stat_xact_user_functions "
          "WHERE schemaname = 'quick' AND funcname = 'enqueue_batch'")[0]
      .as<long>();
}

TEST_F(BatchFastPathTest, BatchIntoExistingZonesIsWrittenInOneStatementWithOnePullPerParkedZone) {
  auto conn = connect();
  // Two zones whose pointers are parked an hour ahead, one that is vested.
  testing::enqueue_committed(*conn, make_item("parked-a", "job", "{}", 3'600'000ms));
  testing::enqueue_committed(*conn, make_item("parked-b", "job", "{}", 3'600'000ms));
  testing::enqueue_committed(*conn, make_item("vested"));
  pqxx::work txn(*conn);
  count_function_calls(txn);
  const std::vector<NewItem> batch = {
      make_item("parked-a", "job", R"({"n":1})", 600'000ms, 3),
      make_item("vested", "other", R"({"n":2})"),
      make_item("parked-b", "job", R"({"n":3})", 1'200'000ms),
      make_item("parked-a", "job", R"({"n":4})", 60'000ms, -1),
  };
  const auto results = enqueue_batch_in(txn, batch);
  EXPECT_EQ(enqueue_batch_calls(txn), 0) << "not the fast path";
  txn.commit();

  ASSERT_EQ(results.size(), batch.size());
  expect_results_are_their_inputs(*conn, batch, results, 1);
  EXPECT_EQ(query_value<std::string>("SELECT (vesting_time - enqueued_at)::text FROM quick.items WHERE id = " +
                                     std::to_string(results[2].item_id)),
            "00:20:00");
  // One request per parked zone, for its earliest new item; none for the vested zone.
  EXPECT_EQ(pulls(), 2);
  EXPECT_EQ(query_value<std::string>("SELECT vesting_time::text FROM quick.pointer_pulls WHERE tenant = 'parked-a'"),
            query_value<std::string>("SELECT vesting_time::text FROM quick.items WHERE id = " +
                                     std::to_string(results[3].item_id)));
  EXPECT_EQ(pulls("tenant = 'vested'"), 0);
  EXPECT_EQ(pointers(), 3);
}

// The fast path returns ids sorted, relying on the items being inserted, and drawing their ids, in
// input order. A batch that visits its tenants out of order and repeats them checks that.
TEST_F(BatchFastPathTest, IdsOfALargeBatchComeBackInInputOrder) {
  auto conn = connect();
  const std::vector<std::string> tenants = {"m", "c", "x", "a", "q", "h", "z", "b"};
  for (const auto& tenant : tenants) testing::enqueue_committed(*conn, make_item(tenant));
  std::vector<NewItem> batch;
  for (int n = 0; n < 120; ++n) {
    batch.push_back(make_item(tenants[static_cast<std::size_t>(n * 5 % 8)], "job", "{\"n\":" + std::to_string(n) + "}",
                              std::chrono::milliseconds((n * 7919) % 1000), n % 3 - 1));
  }
  pqxx::work txn(*conn);
  count_function_calls(txn);
  const auto results = enqueue_batch_in(txn, batch);
  EXPECT_EQ(enqueue_batch_calls(txn), 0) << "not the fast path";
  txn.commit();
  expect_results_are_their_inputs(*conn, batch, results, 0);
  EXPECT_EQ(items(), 8 + 120);
}

// A REPEATABLE READ or SERIALIZABLE caller may have read an older pointer version, so the fast
// path asks for a pull whatever it saw, as quick.enqueue_batch does.
template <typename Transaction>
void expect_fast_path_always_pulls(BatchFastPathTest& test, pqxx::connection& conn, std::size_t items) {
  testing::enqueue_committed(conn, make_item("vested"));
  {
    Transaction txn(conn);
    count_function_calls(txn);
    const auto results = enqueue_batch_in(txn, std::vector<NewItem>(items, make_item("vested")));
    EXPECT_EQ(enqueue_batch_calls(txn), 0) << "not the fast path";
    txn.commit();
    ASSERT_EQ(results.size(), items);
  }
  EXPECT_EQ(test.pulls("tenant = 'vested'"), 1);
}

TEST_F(BatchFastPathTest, SerializableCallerAlwaysRecordsAPullOnTheFastPath) {
  auto conn = connect();
  expect_fast_path_always_pulls<pqxx::transaction<pqxx::isolation_level::serializable>>(*this, *conn, 2);
}

TEST_F(BatchFastPathTest, RepeatableReadCallerAlwaysRecordsAPullOnTheFastPath) {
  auto conn = connect();
  expect_fast_path_always_pulls<pqxx::transaction<pqxx::isolation_level::repeatable_read>>(*this, *conn, 1);
}

TEST_F(BatchFastPathTest, APointerAConsumerHoldsGetsNoPullItsHolderSettlesIt) {
  auto conn = connect();
  testing::enqueue_committed(*conn, make_item("held"));
  {
    pqxx::work consumer(*conn);
    ASSERT_EQ(store::lease_pointers(consumer, {"held"}, 60'000ms).size(), 1u);  // vests in a minute
    consumer.commit();
  }
  pqxx::work txn(*conn);
  count_function_calls(txn);
  const auto results = enqueue_batch_in(txn, {make_item("held")});
  EXPECT_EQ(enqueue_batch_calls(txn), 0) << "not the fast path";
  txn.commit();
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(pulls(), 0);
}

TEST_F(BatchFastPathTest, ANewTenantInTheBatchSendsItToQuickEnqueueBatchWhichCreatesThePointer) {
  auto conn = connect();
  testing::enqueue_committed(*conn, make_item("existing"));
  pqxx::work txn(*conn);
  count_function_calls(txn);
  const auto results = enqueue_batch_in(
      txn, {make_item("existing", "job", R"({"n":1})"), make_item("brand-new", "job", R"({"n":2})")});
  EXPECT_EQ(enqueue_batch_calls(txn), 1) << "the function did not run";
  txn.commit();
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(stored_item(*conn, results[0].item_id)->tenant, "existing");
  EXPECT_EQ(stored_item(*conn, results[1].item_id)->payload, R"({"n": 2})");
  EXPECT_EQ(items(), 3) << "each item exactly once";
  EXPECT_EQ(pointers(), 2);
  EXPECT_EQ(pulls(), 0);
}

TEST_F(BatchFastPathTest, APayloadOverTheLimitIntoExistingZonesInsertsNothingAndNamesTheItem) {
  query("UPDATE quick.limits SET max_payload_bytes = 64");
  auto conn = connect();  // a new connection: it reads the database's setting
  testing::enqueue_committed(*conn, make_item("a", "job", "{}", 3'600'000ms));
  testing::enqueue_committed(*conn, make_item("b"));
  {
    pqxx::work txn(*conn);
    try {
      enqueue_batch_in(txn, {make_item("a"), make_item("b", "job", "{\"big\":\"" + std::string(200, 'x') + "\"}")});
      FAIL() << "expected InvalidArgument";
    } catch (const InvalidArgument& error) {
      EXPECT_THAT(error.what(), HasSubstr("item 2"));
      EXPECT_THAT(error.what(), HasSubstr("max_payload_bytes"));
    }
  }
  EXPECT_EQ(items(), 2) << "only the two set up";
  EXPECT_EQ(pulls(), 0);
}

TEST_F(EnqueueTest, EmptyBatchEnqueuesNothing) {
  auto conn = connect();
  pqxx::work txn(*conn);
  EXPECT_TRUE(enqueue_batch_in(txn, {}).empty());
  txn.commit();
  EXPECT_EQ(items(), 0);
}

}  // namespace
}  // namespace quick
