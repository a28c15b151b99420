// Operators' handling of dead items and queued items, in SQL: find, retry and purge by filter
// (tenant, job type, error text, age, ids), all or nothing and with counts; cancel an item; the
// retention limit (quick.limits.dead_item_max_age, applied by quick.expire_dead_items). Bad filters
// are in docs/bad-input.md, which tests/schema/bad_input_test.cc runs.
#include <gtest/gtest.h>

#include <string>

#include "quick/quick.h"
#include "support/consumer_helpers.h"
#include "support/eventually.h"
#include "support/items.h"
#include "support/test_database.h"

namespace quick::testing {
namespace {

class DeadItemsTest : public DatabaseTest {
 protected:
  // A dead item as the consumer buries one, `age` ago.
  void bury(int id, const std::string& tenant, const std::string& job_type, const std::string& error,
            const std::string& age = "0") {
    query(
        "INSERT INTO quick.dead_items (id, tenant, job_type, priority, error_count, payload, enqueued_at, "
        "last_error, died_at, reason) VALUES (" +
        std::to_string(id) + ", '" + tenant + "', '" + job_type + "', 3, 5, '{\"n\": " + std::to_string(id) +
        "}', now() - interval '1 day', '" + error + "', now() - interval '" + age + "', 'permanent failure')");
  }
  int count(const std::string& table_and_condition) const {
    return query_value<int>("SELECT count(*) FROM " + table_and_condition);
  }
  void bury_a_mix() {
    bury(1, "a", "mail", "SMTP timeout", "2 hours");
    bury(2, "a", "mail", "mailbox full");
    bury(3, "b", "mail", "smtp TIMEOUT");
    bury(4, "b", "report", "out of memory", "3 days");
    bury(5, "c", "report", "100% disk");
  }
};

TEST_F(DeadItemsTest, FindFiltersByTenantJobTypeErrorTextAndAgeNewestFirst) {
  bury_a_mix();
  auto ids = [&](const std::string& arguments) {
    std::string list;
    for (const auto& row : query("SELECT id FROM quick.find_dead_items(" + arguments + ")")) {
      list += (list.empty() ? "" : ",") + row[0].as<std::string>();
    }
    return list;
  };
  EXPECT_EQ(ids(""), "5,3,2,1,4") << "all, newest first";
  EXPECT_EQ(ids("tenant_filter => 'a'"), "2,1");
  EXPECT_EQ(ids("job_type_filter => 'report'"), "5,4");
  EXPECT_EQ(ids("error_contains => 'smtp timeout'"), "3,1") << "case-insensitive";
  EXPECT_EQ(ids("error_contains => '%'"), "5") << "taken literally, not as a pattern";
  EXPECT_EQ(ids("error_contains => 'permanent'"), "5,3,2,1,4") << "the reason matches too";
  EXPECT_EQ(ids("older_than => '1 hour'"), "1,4");
  EXPECT_EQ(ids("tenant_filter => 'b', older_than => '1 hour'"), "4");
  EXPECT_EQ(ids("max_rows => 2"), "5,3");
  const auto row = query(
                       "SELECT tenant, job_type, priority, error_count, payload::text, last_error "
                       "FROM quick.find_dead_items(tenant_filter => 'c')")
                       .at(0);
  EXPECT_EQ(row[0].as<std::string>() + row[1].as<std::string>() + row[2].as<std::string>() + row[3].as<std::string>() +
                row[4].as<std::string>() + row[5].as<std::string>(),
            "creport35{\"n\": 5}100% disk");
}

TEST_F(DeadItemsTest, RetryPutsEveryMatchingItemBackInItsZoneWithAPointerAndCountsThem) {
  bury_a_mix();
  EXPECT_EQ(query_value<int>("SELECT quick.retry_dead_items(job_type => 'mail', error_contains => 'timeout')"), 2);
  EXPECT_EQ(count("quick.dead_items"), 3);
  EXPECT_EQ(count("quick.items WHERE job_type = 'mail' AND error_count = 0 AND priority = 3"), 2)
      << "back in their zones with a fresh error count and their priority";
  EXPECT_EQ(count("quick.pointers WHERE tenant IN ('a', 'b')"), 2) << "every zone has its pointer";
  EXPECT_EQ(count("quick.orphaned_zones"), 0);
  EXPECT_EQ(query_value<int>("SELECT quick.retry_dead_items(ids => ARRAY[4, 5, 77])"), 2);
  EXPECT_EQ(query_value<int>("SELECT quick.retry_dead_items(tenant => 'nobody')"), 0);
  EXPECT_EQ(count("quick.items"), 4);
}

TEST_F(DeadItemsTest, ARetryIsAllOrNothing) {
  bury_a_mix();
  query("UPDATE quick.limits SET max_payload_bytes = 8");  // item 5's payload, {"n": 5}, is 8 bytes
  query("UPDATE quick.dead_items SET payload = '{\"n\": 1000}' WHERE id = 4");
  auto conn = connect();
  pqxx::work txn(*conn);
  EXPECT_THROW(txn.exec("SELECT quick.retry_dead_items(job_type => 'report')"), pqxx::sql_error);
  txn.abort();
  EXPECT_EQ(count("quick.dead_items"), 5) << "the failed retry removed nothing";
  EXPECT_EQ(count("quick.items"), 0);
}

TEST_F(DeadItemsTest, PurgeDeletesEveryMatchingItemAndCountsThem) {
  bury_a_mix();
  EXPECT_EQ(query_value<int>("SELECT quick.purge_dead_items(tenant => 'b')"), 2);
  EXPECT_EQ(query_value<int>("SELECT quick.purge_dead_items(older_than => '1 hour')"), 1);
  EXPECT_EQ(count("quick.dead_items"), 2);
  EXPECT_EQ(query_value<int>("SELECT quick.purge_dead_items()"), 2) << "no filter: all of them";
}

TEST_F(DeadItemsTest, ACancelledItemBecomesADeadItemThatCanBeRetried) {
  auto conn = connect();
  const auto id = enqueue_committed(*conn, make_item("t", "job", R"({"keep": true})"));
  EXPECT_TRUE(query_value<bool>("SELECT quick.cancel_item(" + std::to_string(id) + ")"));
  EXPECT_FALSE(query_value<bool>("SELECT quick.cancel_item(" + std::to_string(id) + ")")) << "gone already";
  EXPECT_EQ(count("quick.items"), 0);
  EXPECT_EQ(query_value<std::string>("SELECT reason || ' ' || payload::text FROM quick.dead_items"),
            "cancelled {\"keep\": true}");
  EXPECT_EQ(query_value<int>("SELECT quick.retry_dead_items(error_contains => 'cancelled')"), 1);
  EXPECT_EQ(count("quick.items WHERE payload = '{\"keep\": true}'"), 1);
  EXPECT_EQ(count("quick.orphaned_zones"), 0);
}

TEST_F(DeadItemsTest, RetentionDeletesOnlyDeadItemsOlderThanTheLimitAndOnlyWhenOneIsSet) {
  bury_a_mix();
  EXPECT_EQ(query_value<int>("SELECT quick.expire_dead_items()"), 0) << "no limit by default: kept until purged";
  query("UPDATE quick.limits SET dead_item_max_age = '1 day'");
  EXPECT_EQ(query_value<int>("SELECT quick.expire_dead_items()"), 1);
  query("UPDATE quick.limits SET dead_item_max_age = '1 hour'");
  EXPECT_EQ(query_value<int>("SELECT quick.expire_dead_items(max_rows => 1)"), 1) << "bounded per call";
  EXPECT_EQ(count("quick.dead_items"), 3);
  auto conn = connect();
  pqxx::work txn(*conn);
  EXPECT_THROW(txn.exec("UPDATE quick.limits SET dead_item_max_age = '1 second'"), pqxx::sql_error)
      << "bounded like every duration";
}

TEST_F(DeadItemsTest, ARunningConsumerAppliesTheRetentionLimit) {
  bury_a_mix();
  query("UPDATE quick.limits SET dead_item_max_age = '1 day'");
  Consumer consumer(fast_config(url(), "retention-test"));
  consumer.handle("job", [](JobContext&) { return JobResult::done(); });
  consumer.start();
  EXPECT_TRUE(eventually([&] { return count("quick.dead_items") == 4; }, seconds(10)))
      << "the holder of the in-order role deleted the dead item older than a day";
  consumer.stop();
  EXPECT_EQ(count("quick.dead_items WHERE id = 4"), 0);
}

}  // namespace
}  // namespace quick::testing
