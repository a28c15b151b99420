// complete / cancel / requeue / release_lease (paper section 5), and completing an item in the
// same transaction as the handler's own write (exactly once).
#include <chrono>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "quick/quick.h"
#include "support/items.h"
#include "support/test_database.h"

namespace quick {
namespace {

using namespace std::chrono_literals;
using testing::DatabaseTest;
using testing::make_item;
using testing::stored_item;

constexpr const char* kStrangerLease = "00000000-0000-4000-8000-000000000000";

class CompleteRequeueTest : public DatabaseTest {
 protected:
  void SetUp() override {
    DatabaseTest::SetUp();
    conn_ = connect();
  }
  pqxx::connection& conn() { return *conn_; }

  // Enqueues one item into `tenant` and leases it; returns the leased item.
  Item enqueue_and_lease(const std::string& tenant = "t", std::chrono::milliseconds lease = 60'000ms) {
    testing::enqueue_committed(conn(), make_item(tenant));
    pqxx::work txn(conn());
    const auto items = dequeue_in(txn, tenant, {1, lease, std::nullopt});
    txn.commit();
    if (items.size() != 1 || !items[0].lease_id) throw std::runtime_error("could not lease");
    return items[0];
  }

  template <typename Operation>
  auto in_transaction(Operation&& operation) {
    pqxx::work txn(conn());
    auto result = operation(txn);
    txn.commit();
    return result;
  }

  std::vector<Item> peek(const std::string& tenant) {
    return in_transaction([&](pqxx::work& txn) { return peek_in(txn, tenant, {10, std::nullopt}); });
  }

 private:
  std::unique_ptr<pqxx::connection> conn_;
};

TEST_F(CompleteRequeueTest, CompleteByTheHolderDeletesTheItemButNotThePointer) {
  const auto item = enqueue_and_lease();
  EXPECT_EQ(in_transaction([&](auto& txn) { return complete_in(txn, item.id, *item.lease_id); }), Outcome::kDone);
  EXPECT_FALSE(stored_item(conn(), item.id).has_value());
  // Pointers are garbage-collected lazily by consumers, never by complete.
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.pointers WHERE tenant = 't'"), 1);
}

TEST_F(CompleteRequeueTest, CompleteWithAnotherLeaseReportsLeaseLostAndKeepsTheItem) {
  const auto item = enqueue_and_lease();
  EXPECT_EQ(in_transaction([&](auto& txn) { return complete_in(txn, item.id, kStrangerLease); }), Outcome::kLeaseLost);
  const auto stored = stored_item(conn(), item.id);
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(stored->lease_id, item.lease_id);
}

TEST_F(CompleteRequeueTest, CompleteOfAnUnleasedItemWithALeaseIdReportsLeaseLost) {
  const auto id = testing::enqueue_committed(conn(), make_item("t"));
  EXPECT_EQ(in_transaction([&](auto& txn) { return complete_in(txn, id, kStrangerLease); }), Outcome::kLeaseLost);
  EXPECT_TRUE(stored_item(conn(), id).has_value());
}

TEST_F(CompleteRequeueTest, CompleteOfAnAlreadyCompletedItemReportsItemGone) {
  const auto item = enqueue_and_lease();
  ASSERT_EQ(in_transaction([&](auto& txn) { return complete_in(txn, item.id, *item.lease_id); }), Outcome::kDone);
  EXPECT_EQ(in_transaction([&](auto& txn) { return complete_in(txn, item.id, *item.lease_id); }), Outcome::kItemGone);
}

TEST_F(CompleteRequeueTest, CancelDeletesTheItemWhateverItsLease) {
  const auto leased = enqueue_and_lease();
  const auto unleased = testing::enqueue_committed(conn(), make_item("t"));
  EXPECT_EQ(in_transaction([&](auto& txn) { return cancel_in(txn, leased.id); }), Outcome::kDone);
  EXPECT_EQ(in_transaction([&](auto& txn) { return cancel_in(txn, unleased); }), Outcome::kDone);
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.items"), 0);
  EXPECT_EQ(in_transaction([&](auto& txn) { return cancel_in(txn, leased.id); }), Outcome::kItemGone);
  // The holder finds out when it tries to complete.
  EXPECT_EQ(in_transaction([&](auto& txn) { return complete_in(txn, leased.id, *leased.lease_id); }),
            Outcome::kItemGone);
}

TEST_F(CompleteRequeueTest, RequeueBumpsErrorCountReleasesTheLeaseAndRecordsTheError) {
  const auto item = enqueue_and_lease();
  const auto before = testing::db_clock(conn());
  EXPECT_EQ(in_transaction([&](auto& txn) {
              return requeue_in(txn, item.id, item.lease_id, 30'000ms, std::string("timeout talking to smtp"));
            }),
            Outcome::kDone);
  const auto after = testing::db_clock(conn());
  const auto stored = stored_item(conn(), item.id);
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(stored->error_count, 1);
  EXPECT_FALSE(stored->lease_id.has_value());
  EXPECT_EQ(stored->last_error, "timeout talking to smtp");
  EXPECT_GE(stored->vesting_time, before + 30'000ms);
  EXPECT_LE(stored->vesting_time, after + 30'000ms);
  EXPECT_TRUE(peek("t").empty()) << "requeued item visible before its delay";
  // The old lease is gone with it.
  EXPECT_EQ(in_transaction([&](auto& txn) { return complete_in(txn, item.id, *item.lease_id); }), Outcome::kLeaseLost);
}

TEST_F(CompleteRequeueTest, RequeueWithoutDelayVestsImmediatelyAndCountsEveryFailure) {
  const auto item = enqueue_and_lease();
  ASSERT_EQ(
      in_transaction([&](auto& txn) { return requeue_in(txn, item.id, item.lease_id, 0ms, std::string("first")); }),
      Outcome::kDone);
  // A second failure with no message keeps the last recorded one.
  const auto again = in_transaction([&](auto& txn) { return dequeue_in(txn, "t", {1, 60'000ms, std::nullopt}); });
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].error_count, 1);
  EXPECT_EQ(again[0].last_error, "first");
  ASSERT_EQ(in_transaction([&](auto& txn) { return requeue_in(txn, item.id, again[0].lease_id, 0ms); }),
            Outcome::kDone);
  const auto peeked = peek("t");
  ASSERT_EQ(peeked.size(), 1u);
  EXPECT_EQ(peeked[0].error_count, 2);
  EXPECT_EQ(peeked[0].last_error, "first");
}

TEST_F(CompleteRequeueTest, RequeueWithAnotherLeaseReportsLeaseLostAndChangesNothing) {
  const auto item = enqueue_and_lease();
  const auto before = stored_item(conn(), item.id);
  EXPECT_EQ(in_transaction([&](auto& txn) {
              return requeue_in(txn, item.id, std::string(kStrangerLease), 0ms, std::string("nope"));
            }),
            Outcome::kLeaseLost);
  const auto after = stored_item(conn(), item.id);
  EXPECT_EQ(after->error_count, 0);
  EXPECT_EQ(after->lease_id, before->lease_id);
  EXPECT_EQ(after->vesting_time, before->vesting_time);
  EXPECT_FALSE(after->last_error.has_value());
}

TEST_F(CompleteRequeueTest, RequeueWithoutALeaseIdAppliesWhateverTheLease) {
  const auto item = enqueue_and_lease();
  EXPECT_EQ(in_transaction([&](auto& txn) { return requeue_in(txn, item.id, std::nullopt, 0ms); }), Outcome::kDone);
  const auto stored = stored_item(conn(), item.id);
  EXPECT_EQ(stored->error_count, 1);
  EXPECT_FALSE(stored->lease_id.has_value());
  EXPECT_EQ(peek("t").size(), 1u);
}

TEST_F(CompleteRequeueTest, RequeueOfAGoneItemReportsItemGone) {
  EXPECT_EQ(in_transaction([&](auto& txn) { return requeue_in(txn, 424242, std::nullopt, 0ms); }), Outcome::kItemGone);
  EXPECT_EQ(in_transaction([&](auto& txn) { return requeue_in(txn, 424242, std::string(kStrangerLease), 0ms); }),
            Outcome::kItemGone);
}

TEST_F(CompleteRequeueTest, ReleaseLeaseGivesTheItemBackWithoutCountingAnError) {
  const auto item = enqueue_and_lease();
  const auto before = testing::db_clock(conn());
  EXPECT_EQ(in_transaction([&](auto& txn) { return release_lease_in(txn, item.id, *item.lease_id, 20'000ms); }),
            Outcome::kDone);
  const auto stored = stored_item(conn(), item.id);
  EXPECT_EQ(stored->error_count, 0);
  EXPECT_FALSE(stored->lease_id.has_value());
  EXPECT_FALSE(stored->last_error.has_value());
  EXPECT_GE(stored->vesting_time, before + 20'000ms);
  EXPECT_TRUE(peek("t").empty());
}

TEST_F(CompleteRequeueTest, ReleaseLeaseWithoutDelayMakesTheItemVestedAgain) {
  const auto item = enqueue_and_lease();
  ASSERT_EQ(in_transaction([&](auto& txn) { return release_lease_in(txn, item.id, *item.lease_id); }), Outcome::kDone);
  const auto peeked = peek("t");
  ASSERT_EQ(peeked.size(), 1u);
  EXPECT_EQ(peeked[0].error_count, 0);
}

TEST_F(CompleteRequeueTest, ReleaseLeaseByANonHolderReportsLeaseLostOrItemGone) {
  const auto item = enqueue_and_lease();
  EXPECT_EQ(in_transaction([&](auto& txn) { return release_lease_in(txn, item.id, kStrangerLease); }),
            Outcome::kLeaseLost);
  EXPECT_EQ(stored_item(conn(), item.id)->lease_id, item.lease_id);
  EXPECT_EQ(in_transaction([&](auto& txn) { return release_lease_in(txn, 424242, kStrangerLease); }),
            Outcome::kItemGone);
}

// The exactly-once building block: the handler's write and the completion commit together, or
// neither does.
TEST_F(CompleteRequeueTest, CompletionRolledBackWithTheHandlersWriteLeavesTheItemQueued) {
  query("CREATE TABLE app_effects (item_id bigint PRIMARY KEY)");
  const auto item = enqueue_and_lease();
  {
    pqxx::work txn(conn());
    txn.exec_params("INSERT INTO app_effects VALUES ($1)", item.id);
    ASSERT_EQ(complete_in(txn, item.id, *item.lease_id), Outcome::kDone);
    txn.abort();
  }
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM app_effects"), 0);
  const auto stored = stored_item(conn(), item.id);
  ASSERT_TRUE(stored.has_value()) << "the rolled-back completion deleted the item";
  EXPECT_EQ(stored->lease_id, item.lease_id) << "the holder keeps its lease and can retry";
  {
    pqxx::work txn(conn());
    txn.exec_params("INSERT INTO app_effects VALUES ($1)", item.id);
    ASSERT_EQ(complete_in(txn, item.id, *item.lease_id), Outcome::kDone);
    txn.commit();
  }
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM app_effects"), 1);
  EXPECT_FALSE(stored_item(conn(), item.id).has_value());
}

// A handler that lost its lease learns it at completion, inside its transaction, and aborts its
// effects with it.
TEST_F(CompleteRequeueTest, HandlerThatLostItsLeaseSeesLeaseLostBeforeCommittingItsWrite) {
  query("CREATE TABLE app_effects (item_id bigint PRIMARY KEY)");
  const auto item = enqueue_and_lease("t", 250ms);
  testing::wait_until_db_clock_passes(conn(), item.vesting_time);
  auto other = connect();
  {
    pqxx::work txn(*other);
    ASSERT_EQ(dequeue_in(txn, "t", {1, 60'000ms, std::nullopt}).size(), 1u);
    txn.commit();
  }
  pqxx::work txn(conn());
  txn.exec_params("INSERT INTO app_effects VALUES ($1)", item.id);
  EXPECT_EQ(complete_in(txn, item.id, *item.lease_id), Outcome::kLeaseLost);
  txn.abort();
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM app_effects"), 0);
  EXPECT_TRUE(stored_item(conn(), item.id).has_value());
}

}  // namespace
}  // namespace quick
