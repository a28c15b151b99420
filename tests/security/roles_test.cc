// The least-privilege roles (migration 0006, docs/security.md), each exercised through a login of
// its own, connected over its own connection: what a producer, a consumer, an administrator, a
// tenant login and a login with none of the roles can and cannot do.
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "quick/quick.h"
#include "support/consumer_helpers.h"
#include "support/eventually.h"
#include "support/items.h"
#include "support/test_database.h"

namespace quick::testing {
namespace {

using ::testing::HasSubstr;

class RolesTest : public DatabaseTest {
 protected:
  // `sql` run by `login` in a transaction of its own: "" when it succeeded, else the SQLSTATE.
  std::string sqlstate_as(const TestLogin& login, const std::string& sql) {
    pqxx::connection conn(login.url(keyword_url()));
    pqxx::work txn(conn);
    try {
      txn.exec(sql);
      txn.commit();
      return "";
    } catch (const pqxx::insufficient_privilege& error) {
      last_error_ = error.what();
      return "42501";  // libpqxx 6.4 raises this class without its SQLSTATE
    } catch (const pqxx::sql_error& error) {
      last_error_ = error.what();
      return error.sqlstate();
    }
  }
  int count_as(const TestLogin& login, const std::string& sql) {
    pqxx::connection conn(login.url(keyword_url()));
    pqxx::work txn(conn);
    return txn.exec(sql).at(0).at(0).as<int>();
  }
  // This test's database as a keyword/value connection string, to which a user can be appended.
  std::string keyword_url() {
    pqxx::connection conn(url());
    return "host=" + std::string(conn.hostname()) + " port=" + conn.port() + " dbname=" + conn.dbname();
  }
  std::string last_error_;
};

constexpr const char* kDenied = "42501";  // insufficient_privilege

TEST_F(RolesTest, AProducerEnqueuesThroughEveryPathButCannotTouchTheTablesOrOthersItems) {
  TestLogin producer("quick_producer");
  auto admin = connect();
  const auto others = enqueue_committed(*admin, make_item("other-tenant", "job", R"({"secret": 1})"));

  // Every enqueue path works under the role: the SQL functions, and the C++ producer's fast paths
  // for a zone that exists (single and batch) and its fallbacks for a new zone.
  EXPECT_EQ(sqlstate_as(producer, "SELECT * FROM quick.enqueue('p', 'job')"), "") << last_error_;
  EXPECT_EQ(sqlstate_as(producer, R"(SELECT * FROM quick.enqueue_batch('[{"tenant": "p2", "job_type": "j"}]'))"), "")
      << last_error_;
  {
    pqxx::connection conn(producer.url(keyword_url()));
    pqxx::work txn(conn);
    EXPECT_GT(enqueue_in(txn, make_item("p")).item_id, 0);                           // fast path: the zone exists
    EXPECT_GT(enqueue_in(txn, make_item("p-new")).item_id, 0);                       // fallback: a new zone
    EXPECT_EQ(enqueue_batch_in(txn, {make_item("p"), make_item("p2")}).size(), 2u);  // batch fast path
    EXPECT_EQ(enqueue_in(txn, make_item("p", "job", "{}", std::chrono::milliseconds(0), 0, "c-1")).duplicate, false);
    txn.commit();
  }
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.items WHERE tenant LIKE 'p%'"), 7);
  EXPECT_EQ(count_as(producer, "SELECT count(*) FROM quick.item_status(ARRAY[" + std::to_string(others) +
                                   "]) WHERE state = 'queued'"),
            1)
      << "the state of an item, by id, without its payload";

  // Not the tables: no payloads, no pointers, no direct writes.
  EXPECT_EQ(count_as(producer, "SELECT count(*) FROM quick.items"), 0) << "row-level security: not a tenant login";
  EXPECT_EQ(sqlstate_as(producer, "SELECT * FROM quick.pointers"), kDenied);
  EXPECT_EQ(sqlstate_as(producer, "SELECT * FROM quick.queue_summary"), kDenied);
  EXPECT_EQ(sqlstate_as(producer, "INSERT INTO quick.items (tenant, job_type, vesting_time) VALUES ('x', 'j', now())"),
            kDenied);
  EXPECT_EQ(sqlstate_as(producer,
                        "INSERT INTO quick.pointers (tenant, vesting_time, last_active_time) "
                        "VALUES ('x', now(), now())"),
            kDenied);
  EXPECT_EQ(sqlstate_as(producer, "DELETE FROM quick.pointer_pulls"), kDenied);
  // Not the consumers' or the administrators' functions: no cancel, no requeue, no leases.
  const std::string id = std::to_string(others);
  EXPECT_EQ(sqlstate_as(producer, "SELECT quick.complete(" + id + ")"), kDenied);
  EXPECT_EQ(sqlstate_as(producer, "SELECT quick.requeue(" + id + ", NULL)"), kDenied);
  EXPECT_EQ(sqlstate_as(producer, "SELECT * FROM quick.dequeue('other-tenant', 1, '1 minute')"), kDenied);
  EXPECT_EQ(sqlstate_as(producer, "SELECT * FROM quick.peek('other-tenant', 1)"), kDenied);
  EXPECT_EQ(sqlstate_as(producer, "SELECT * FROM quick.visit_zones('{other-tenant}', 1, '1 minute', '1 minute')"),
            kDenied);
  EXPECT_EQ(sqlstate_as(producer, "SELECT quick.check_argument(true, 'x')"), kDenied) << "internal helpers";
  // Not the operators' functions: no pauses, cancels, dead-item searches, retries or purges.
  for (const std::string& sql : std::vector<std::string>{
           "SELECT quick.pause_tenant('other-tenant')", "SELECT quick.pause_job_type('job')",
           "SELECT quick.cancel_item(" + std::to_string(others) + ")", "SELECT * FROM quick.find_dead_items()",
           "SELECT quick.retry_dead_items()", "SELECT quick.purge_dead_items()", "SELECT quick.expire_dead_items()",
           "SELECT * FROM quick.paused"}) {
    EXPECT_EQ(sqlstate_as(producer, sql), kDenied) << sql;
  }
  // Where a tenant is placed, yes; placing or moving tenants, no (docs/scaling.md).
  EXPECT_EQ(sqlstate_as(producer, "SELECT quick.tenant_database('p'), quick.local_tenant('x')"), "") << last_error_;
  for (const std::string& sql : std::vector<std::string>{
           "SELECT * FROM quick.move_out_begin('other-tenant', 'elsewhere', gen_random_uuid())",
           "SELECT quick.move_in_begin('other-tenant', 'elsewhere', gen_random_uuid())",
           "SELECT quick.move_in_items('other-tenant', '[]')", "SELECT quick.place_tenant('other-tenant', 'x')",
           "SELECT quick.add_placement_database('x')",
           "SELECT quick.begin_move(gen_random_uuid(), 'other-tenant', 'a', 'b')",
           "SELECT quick.decide_move(gen_random_uuid(), 'commit', 'mover')", "SELECT * FROM quick.tenant_placements",
           "DELETE FROM quick.moved_tenants"}) {
    EXPECT_EQ(sqlstate_as(producer, sql), kDenied) << sql;
  }
  // Not the settings that protect the queue.
  EXPECT_EQ(sqlstate_as(producer, "UPDATE quick.limits SET max_payload_bytes = 1000000000"), kDenied);
  EXPECT_EQ(sqlstate_as(producer, "INSERT INTO quick.tenant_logins VALUES (session_user, 'other-tenant')"), kDenied);
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.items WHERE id = " + id), 1) << "the other item is intact";
}

TEST_F(RolesTest, AConsumerRunsTheWholeConsumerButCannotCancelReplayOrChangeLimits) {
  TestLogin consumer_login("quick_consumer");
  auto admin = connect();
  std::vector<NewItem> items;
  for (int i = 0; i < 60; ++i) items.push_back(make_item("t" + std::to_string(i % 6)));
  {
    pqxx::work txn(*admin);
    enqueue_batch_in(txn, items);
    txn.commit();
  }
  ConsumerConfig config = fast_config(consumer_login.url(keyword_url()), "roles-test-consumer");
  Consumer consumer(config);
  std::atomic<int> runs{0};
  consumer.handle("job", [&](JobContext& job) {
    ++runs;
    if (job.item().tenant == "t0") {
      job.transaction().exec("SELECT 1");  // completed in the handler's own transaction
    }
    return JobResult::done();
  });
  consumer.start();
  EXPECT_TRUE(eventually([&] { return query_value<int>("SELECT count(*) FROM quick.items") == 0; }, seconds(30)))
      << "the consumer drained the queue under quick_consumer";
  consumer.stop();
  EXPECT_EQ(runs.load(), 60);
  EXPECT_EQ(consumer.stats().database_errors, 0u);

  const auto id = std::to_string(enqueue_committed(*admin, make_item("t")));
  EXPECT_EQ(sqlstate_as(consumer_login, "SELECT quick.complete(" + id + ")"), kDenied) << "cancel is an admin's";
  EXPECT_THAT(last_error_, HasSubstr("quick_admin"));
  EXPECT_EQ(sqlstate_as(consumer_login, "SELECT quick.requeue(" + id + ", NULL)"), kDenied);
  EXPECT_EQ(sqlstate_as(consumer_login, "SELECT quick.retry_dead_item(1)"), kDenied);
  EXPECT_EQ(sqlstate_as(consumer_login, "UPDATE quick.limits SET max_item_lease = '30 days'"), kDenied);
  EXPECT_EQ(sqlstate_as(consumer_login,
                        "INSERT INTO quick.items (tenant, job_type, vesting_time) "
                        "VALUES ('x', 'j', now())"),
            kDenied);
  EXPECT_EQ(sqlstate_as(consumer_login, "SELECT * FROM quick.queue_summary"), "") << "operators' views";
  EXPECT_EQ(sqlstate_as(consumer_login, "SELECT * FROM quick.paused"), "") << "what consumers skip";
  EXPECT_EQ(sqlstate_as(consumer_login, "SELECT quick.expire_dead_items()"), "") << "retention runs in consumers";
  for (const std::string& sql : std::vector<std::string>{
           "SELECT quick.pause_tenant('t')", "SELECT quick.resume_job_type('job')",
           "SELECT quick.cancel_item(" + id + ")", "SELECT quick.retry_dead_items()", "SELECT quick.purge_dead_items()",
           "SELECT * FROM quick.find_dead_items()", "INSERT INTO quick.paused_tenants (tenant) VALUES ('t')"}) {
    EXPECT_EQ(sqlstate_as(consumer_login, sql), kDenied) << sql;
  }
  // No table directly, not even the pause lists and placements (migration 0014): the views and the
  // functions read them.
  for (const char* table : {"items", "pointers", "paused_tenants", "paused_job_types", "moved_tenants",
                            "placement_databases", "tenant_placements", "tenant_moves", "limits"}) {
    EXPECT_EQ(sqlstate_as(consumer_login, std::string("SELECT count(*) FROM quick.") + table), kDenied) << table;
  }
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.items WHERE id = " + id), 1);
}

TEST_F(RolesTest, AnAdministratorCancelsReplaysAndChangesTheLimits) {
  TestLogin administrator("quick_admin");
  auto admin = connect();
  const auto id = std::to_string(enqueue_committed(*admin, make_item("t")));
  query(
      "INSERT INTO quick.dead_items (id, tenant, job_type, priority, error_count, payload, enqueued_at, reason) "
      "VALUES (999999, 't', 'job', 0, 3, '{}', now(), 'failed')");
  EXPECT_EQ(sqlstate_as(administrator, "SELECT quick.complete(" + id + ")"), "") << last_error_;
  EXPECT_EQ(sqlstate_as(administrator, "SELECT quick.retry_dead_item(999999)"), "") << last_error_;
  EXPECT_EQ(sqlstate_as(administrator, "UPDATE quick.limits SET max_payload_bytes = 2048"), "") << last_error_;
  EXPECT_EQ(sqlstate_as(administrator, "SELECT quick.pause_tenant('t')"), "") << last_error_;
  EXPECT_EQ(query_value<std::string>("SELECT paused_by FROM quick.paused_tenants"), administrator.name())
      << "who paused it";
  for (const std::string& sql : std::vector<std::string>{
           "SELECT quick.resume_tenant('t')", "SELECT quick.pause_job_type('job')",
           "SELECT quick.resume_job_type('job')", "SELECT quick.purge_dead_items(tenant => 'nobody')",
           "SELECT * FROM quick.find_dead_items()", "UPDATE quick.limits SET dead_item_max_age = '30 days'"}) {
    EXPECT_EQ(sqlstate_as(administrator, sql), "") << sql << ": " << last_error_;
  }
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.paused"), 0) << "resumed";
  EXPECT_EQ(query_value<int>("SELECT max_payload_bytes FROM quick.limits"), 2048);
  EXPECT_EQ(count_as(administrator, "SELECT count(*) FROM quick.items"), 1) << "sees every row";
}

TEST_F(RolesTest, AnAdministratorPlacesAndMovesTenantsAndNamesTenantLogins) {
  TestLogin administrator("quick_admin");
  for (const std::string& sql : std::vector<std::string>{
           "SELECT quick.add_placement_database('two')", "SELECT quick.place_tenant('placed', 'two')",
           "INSERT INTO quick.tenant_logins VALUES ('some_login', 'acme')",
           "DELETE FROM quick.tenant_logins WHERE login = 'some_login'"}) {
    EXPECT_EQ(sqlstate_as(administrator, sql), "") << sql << ": " << last_error_;
  }
  EXPECT_EQ(query_value<std::string>("SELECT quick.tenant_database('placed')"), "two");
  // The move functions are the administrator's: refused here for what the moves lack (no such
  // move, nothing to move), never for want of privilege.
  for (const std::string& sql : std::vector<std::string>{
           "SELECT * FROM quick.move_out_begin('placed', 'two', gen_random_uuid())",
           "SELECT quick.move_in_begin('arriving', 'two', gen_random_uuid())",
           "SELECT quick.move_in_items('arriving', '[]')", "SELECT quick.move_in_dead_items('arriving', '[]')",
           "SELECT quick.move_out_dead_items('placed', '{}')",
           "SELECT * FROM quick.move_out_finish('placed', gen_random_uuid())",
           "SELECT quick.begin_move(gen_random_uuid(), 'placed', 'two', 'three')",
           "SELECT quick.decide_move(gen_random_uuid(), 'abort', 'mover')",
           "SELECT quick.finish_move(gen_random_uuid())"}) {
    EXPECT_NE(sqlstate_as(administrator, sql), kDenied) << sql << ": " << last_error_;
  }
}

TEST_F(RolesTest, ATenantLoginEnqueuesAndReadsOnlyItsOwnTenant) {
  TestLogin tenant_login("quick_producer");
  query("INSERT INTO quick.tenant_logins VALUES ('" + tenant_login.name() + "', 'acme')");
  auto admin = connect();
  const auto theirs = enqueue_committed(*admin, make_item("globex", "job", R"({"secret": "globex"})"));
  enqueue_committed(*admin, make_item("acme", "job", R"({"mine": true})"));

  EXPECT_EQ(sqlstate_as(tenant_login, "SELECT * FROM quick.enqueue('acme', 'job')"), "") << last_error_;
  EXPECT_EQ(sqlstate_as(tenant_login, "SELECT * FROM quick.enqueue('globex', 'job')"), kDenied);
  EXPECT_THAT(last_error_, HasSubstr("may act for tenant 'acme' only"));
  EXPECT_EQ(sqlstate_as(tenant_login, R"(SELECT * FROM quick.enqueue_batch('[{"tenant": "acme", "job_type": "j"},
                                                                               {"tenant": "globex", "job_type": "j"}]'))"),
            kDenied);
  {
    pqxx::connection conn(tenant_login.url(keyword_url()));
    pqxx::work txn(conn);
    EXPECT_THROW(enqueue_in(txn, make_item("globex")), pqxx::sql_error) << "the C++ fast path checks too";
  }
  {
    pqxx::connection conn(tenant_login.url(keyword_url()));
    pqxx::work txn(conn);
    EXPECT_THROW(enqueue_batch_in(txn, {make_item("acme"), make_item("globex")}), pqxx::sql_error)
        << "the batch fast path checks every item";
  }
  // Dead items: its own tenant's only, with plain SQL.
  query(
      "INSERT INTO quick.dead_items (id, tenant, job_type, priority, error_count, payload, enqueued_at, reason) "
      "VALUES (999998, 'globex', 'job', 0, 3, '{\"secret\": \"globex\"}', now(), 'failed'), "
      "(999999, 'acme', 'job', 0, 3, '{}', now(), 'failed')");
  EXPECT_EQ(count_as(tenant_login, "SELECT count(*) FROM quick.dead_items"), 1);
  EXPECT_EQ(count_as(tenant_login, "SELECT count(*) FROM quick.dead_items WHERE tenant = 'globex'"), 0);
  // Its own rows, payloads included, with plain SQL; none of another tenant's.
  EXPECT_EQ(count_as(tenant_login, "SELECT count(*) FROM quick.items"), 2);
  EXPECT_EQ(count_as(tenant_login, "SELECT count(*) FROM quick.items WHERE payload::text LIKE '%globex%'"), 0);
  EXPECT_EQ(count_as(tenant_login, "SELECT count(*) FROM quick.item_status(ARRAY[" + std::to_string(theirs) +
                                       "]) WHERE state = 'gone'"),
            1);
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.items WHERE tenant = 'globex'"), 1);
}

TEST_F(RolesTest, ALoginWithoutAQuickRoleCannotReachTheSchema) {
  TestLogin outsider("");
  EXPECT_EQ(sqlstate_as(outsider, "SELECT * FROM quick.enqueue('t', 'job')"), kDenied);
  EXPECT_EQ(sqlstate_as(outsider, "SELECT * FROM quick.items"), kDenied);
  EXPECT_EQ(sqlstate_as(outsider, "SELECT * FROM quick.queue_summary"), kDenied);
}

}  // namespace
}  // namespace quick::testing
