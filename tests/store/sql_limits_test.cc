// The SQL surface's limits and fairness promises (docs/security.md): the payload limit holds
// for every session and counts the JSON text's bytes; only vested items can be leased; pull
// requests are served oldest first and never starve behind pointers locked right now; and a
// zone whose pointer an idle-in-transaction producer holds is not rewritten on every visit.
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "quick/quick.h"
#include "store/consumer_store.h"
#include "support/items.h"
#include "support/test_database.h"

namespace quick::store {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using quick::testing::DatabaseTest;
using quick::testing::enqueue_committed;
using quick::testing::make_item;

class SqlLimitsTest : public DatabaseTest {
 protected:
  // The SQLSTATE and message of `sql` run alone in its own transaction ("" when it succeeded).
  std::pair<std::string, std::string> error_of(pqxx::connection& conn, const std::string& sql) {
    pqxx::work txn(conn);
    try {
      txn.exec(sql);
      txn.commit();
      return {"", ""};
    } catch (const pqxx::sql_error& error) {
      return {error.sqlstate(), error.what()};
    }
  }
  // A parked pointer for `tenant` and a committed pull request for it, recorded now.
  void park_with_pull_request(const std::string& tenant) {
    auto conn = connect();
    enqueue_committed(*conn, make_item(tenant));
    query("UPDATE quick.pointers SET vesting_time = now() + interval '1 hour' WHERE tenant = '" + tenant + "'");
    enqueue_committed(*conn, make_item(tenant));
    ASSERT_EQ(query_value<int>("SELECT count(*) FROM quick.pointer_pulls WHERE tenant = '" + tenant + "'"), 1);
  }
  bool pointer_vested(const std::string& tenant) {
    return query_value<bool>("SELECT vesting_time <= now() FROM quick.pointers WHERE tenant = '" + tenant + "'");
  }
};

TEST_F(SqlLimitsTest, ASessionSettingCannotRaiseThePayloadLimitOnlyTheAdministratorsTableCan) {
  query("UPDATE quick.limits SET max_payload_bytes = 100");
  auto conn = connect();
  {
    pqxx::nontransaction session(*conn);
    session.exec("SET quick.max_payload_bytes = 100000000");  // the old session setting: no effect now
  }
  const std::string big = "SELECT * FROM quick.enqueue('t', 'job', jsonb_build_object('d', repeat('x', 200)))";
  const auto [state, message] = error_of(*conn, big);
  EXPECT_EQ(state, "22023");
  EXPECT_THAT(message, HasSubstr("quick.limits.max_payload_bytes"));
  query("UPDATE quick.limits SET max_payload_bytes = 1000");
  EXPECT_EQ(error_of(*conn, big).first, "");
}

TEST_F(SqlLimitsTest, ThePayloadLimitCountsTheBytesOfTheJsonTextNotItsCompressedSize) {
  // 3,000 repeated characters compress to a few dozen bytes; their text is 3,009 bytes, and
  // multi-byte characters count as their UTF-8 bytes.
  query("UPDATE quick.limits SET max_payload_bytes = 3008");
  auto conn = connect();
  EXPECT_EQ(
      error_of(*conn, "SELECT * FROM quick.enqueue('t', 'job', jsonb_build_object('d', repeat('x', 3000)))").first,
      "22023");
  EXPECT_EQ(
      error_of(*conn, "SELECT * FROM quick.enqueue('t', 'job', jsonb_build_object('d', repeat('é', 1500)))").first,
      "22023");
  EXPECT_EQ(
      error_of(*conn, "SELECT * FROM quick.enqueue('t', 'job', jsonb_build_object('d', repeat('x', 2999)))").first, "");
  // The C++ fast paths hold the same limit: an item over it is refused by the database.
  query("UPDATE quick.limits SET max_payload_bytes = 100");
  pqxx::work txn(*conn);
  EXPECT_THROW(enqueue_in(txn, make_item("t", "job", "{\"d\":\"" + std::string(200, 'x') + "\"}")), InvalidArgument);
}

TEST_F(SqlLimitsTest, OnlyVestedItemsCanBeLeased) {
  auto conn = connect();
  const auto delayed = enqueue_committed(*conn, make_item("t", "job", "{}", 1h));
  const auto vested = enqueue_committed(*conn, make_item("t"));
  EXPECT_EQ(query_value<std::string>("SELECT outcome::text FROM quick.obtain_lease(" + std::to_string(delayed) +
                                     ", '1 minute')"),
            "lease_lost");
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.items WHERE lease_id IS NOT NULL"), 0);
  EXPECT_EQ(query_value<std::string>("SELECT outcome::text FROM quick.obtain_lease(" + std::to_string(vested) +
                                     ", '1 minute')"),
            "done");
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.dequeue('t', 10, '1 minute')"), 0)
      << "the delayed item is not vested, the other one is leased";
}

TEST_F(SqlLimitsTest, PullRequestsBehindLockedPointersDoNotKeepOthersFromBeingApplied) {
  for (const std::string tenant : {"stuck-1", "stuck-2", "stuck-3", "free-1", "free-2"}) {
    park_with_pull_request(tenant);
    std::this_thread::sleep_for(2ms);  // distinct requested_at, oldest first
  }
  // The three oldest requests' pointers are locked by someone else (a visit, a producer pulling
  // in its own transaction): with room for two requests a round, a round that spent its room on
  // them would apply nothing.
  auto holder_conn = connect();
  pqxx::work holder(*holder_conn);
  holder.exec("SELECT 1 FROM quick.pointers WHERE tenant LIKE 'stuck-%' FOR NO KEY UPDATE");

  EXPECT_EQ(query_value<int>("SELECT quick.apply_pointer_pulls(2)"), 2);
  EXPECT_TRUE(pointer_vested("free-1"));
  EXPECT_TRUE(pointer_vested("free-2"));
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.pointer_pulls"), 3) << "the stuck requests stay";

  holder.abort();
  EXPECT_EQ(query_value<int>("SELECT quick.apply_pointer_pulls(2)"), 2) << "oldest first: stuck-1 and stuck-2";
  EXPECT_TRUE(pointer_vested("stuck-1"));
  EXPECT_TRUE(pointer_vested("stuck-2"));
  EXPECT_FALSE(pointer_vested("stuck-3"));
  EXPECT_EQ(query_value<int>("SELECT quick.apply_pointer_pulls(2)"), 1);
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.pointer_pulls"), 0);
}

TEST_F(SqlLimitsTest, AZoneAnIdleProducerHoldsBacksOffInsteadOfBeingRewrittenOnEveryVisit) {
  auto conn = connect();
  enqueue_committed(*conn, make_item("held"));
  query("DELETE FROM quick.items WHERE tenant = 'held'");  // drained; the pointer stays vested

  // A producer enqueues and then sits idle in its transaction: its FOR KEY SHARE lock keeps
  // every visit from settling the pointer.
  auto producer_conn = connect();
  pqxx::work producer(*producer_conn);
  const auto held_item = enqueue_in(producer, make_item("held")).item_id;

  // A consumer visiting as often as a busy Scanner would (every 5 ms) for 1.5 s.
  int settles = 0;
  const auto end = std::chrono::steady_clock::now() + 1500ms;
  while (std::chrono::steady_clock::now() < end) {
    pqxx::work txn(*conn);
    const auto visit = visit_zones(txn, {"held"}, 10, 30s, 1h, {});
    txn.commit();
    for (const auto& zone : visit.zones) {
      EXPECT_EQ(zone.action, SettleAction::kReleasedBusy);
      ++settles;
    }
    std::this_thread::sleep_for(5ms);
  }
  // 20 ms, doubling, at most 1 s: 20 + 40 + 80 + 160 + 320 + 640 ms fit in 1.5 s (six or seven
  // settles, with the visits' own time); without a back-off every visit would settle (~200).
  EXPECT_GE(settles, 3);
  EXPECT_LE(settles, 10);
  EXPECT_GE(query_value<int>("SELECT busy_settles FROM quick.pointers WHERE tenant = 'held'"), 3);
  EXPECT_LE(query_value<double>("SELECT extract(epoch FROM vesting_time - now()) FROM quick.pointers "
                                "WHERE tenant = 'held'"),
            1.0)
      << "capped: the producer's item, once committed, waits at most a second";

  // Once the producer commits, its item is served and the back-off is forgotten.
  producer.commit();
  std::vector<std::int64_t> dequeued;
  const auto deadline = std::chrono::steady_clock::now() + 3s;
  while (dequeued.empty() && std::chrono::steady_clock::now() < deadline) {
    pqxx::work txn(*conn);
    const auto visit = visit_zones(txn, {"held"}, 10, 30s, 1h, {});
    txn.commit();
    for (const auto& item : visit.items) dequeued.push_back(item.item.id);
    std::this_thread::sleep_for(5ms);
  }
  EXPECT_EQ(dequeued, std::vector<std::int64_t>{held_item});
  EXPECT_EQ(query_value<int>("SELECT busy_settles FROM quick.pointers WHERE tenant = 'held'"), 0);
}

}  // namespace
}  // namespace quick::store
