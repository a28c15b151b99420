// Bad input: the C++ API rejects it with quick::InvalidArgument naming the problem, before any
// statement runs (so the caller's transaction stays usable); the SQL API, which psql users call
// directly, rejects it with SQLSTATE 22023 naming the argument. Either way nothing changes.
#include <chrono>
#include <functional>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "quick/quick.h"
#include "support/items.h"
#include "support/test_database.h"

namespace quick {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::DatabaseTest;
using testing::make_item;
using testing::stored_item;

constexpr const char* kStrangerLease = "00000000-0000-4000-8000-000000000000";

std::string repeat(const std::string& text, int times) {
  std::string out;
  for (int i = 0; i < times; ++i) out += text;
  return out;
}

class ValidationTest : public DatabaseTest {
 protected:
  void SetUp() override {
    DatabaseTest::SetUp();
    conn_ = connect();
  }
  pqxx::connection& conn() { return *conn_; }

  // The administrators' limit (quick.limits), for every session at once.
  void set_max_payload_bytes(int bytes) {
    query("UPDATE quick.limits SET max_payload_bytes = " + std::to_string(bytes));
  }

  int items() { return query_value<int>("SELECT count(*) FROM quick.items"); }
  int pointers() { return query_value<int>("SELECT count(*) FROM quick.pointers"); }

  // Runs `operation` inside a transaction that already holds the caller's own write; expects
  // InvalidArgument mentioning every one of `mentions`, then checks that the transaction is still
  // usable by committing the caller's write.
  void expect_rejected_before_any_statement(const std::function<void(pqxx::work&)>& operation,
                                            const std::vector<std::string>& mentions) {
    query("CREATE TABLE IF NOT EXISTS app_writes (n int)");
    const int writes_before = query_value<int>("SELECT count(*) FROM app_writes");
    pqxx::work txn(conn());
    txn.exec("INSERT INTO app_writes VALUES (1)");
    try {
      operation(txn);
      ADD_FAILURE() << "expected quick::InvalidArgument mentioning " << mentions.at(0);
    } catch (const InvalidArgument& error) {
      for (const auto& mention : mentions) EXPECT_THAT(error.what(), HasSubstr(mention));
    }
    // The transaction is still usable: a later statement works and the caller's write commits.
    EXPECT_EQ(txn.exec("SELECT 41 + 1").at(0)[0].as<int>(), 42);
    txn.commit();
    EXPECT_EQ(query_value<int>("SELECT count(*) FROM app_writes"), writes_before + 1);
  }

  void expect_enqueue_rejected(const NewItem& item, const std::vector<std::string>& mentions) {
    SCOPED_TRACE("tenant '" + item.tenant.substr(0, 20) + "', job_type '" + item.job_type.substr(0, 20) +
                 "', payload '" + item.payload.substr(0, 20) + "'");
    expect_rejected_before_any_statement([&](pqxx::work& txn) { enqueue_in(txn, item); }, mentions);
    expect_rejected_before_any_statement(
        [&](pqxx::work& txn) {
          enqueue_batch_in(txn, {make_item("good"), item});
        },
        mentions);
    EXPECT_EQ(items(), 0);
    EXPECT_EQ(pointers(), 0);
  }

  // Runs one SQL statement on its own connection; expects it to fail with `sqlstate` and a message
  // containing `mention`.
  void expect_sql_rejected(const std::string& sql, const std::string& sqlstate, const std::string& mention) {
    SCOPED_TRACE(sql);
    auto session_conn = connect();
    pqxx::work txn(*session_conn);
    try {
      txn.exec(sql);
      ADD_FAILURE() << "expected SQLSTATE " << sqlstate;
    } catch (const pqxx::sql_error& error) {
      EXPECT_EQ(error.sqlstate(), sqlstate);
      EXPECT_THAT(error.what(), HasSubstr(mention));
    }
  }

  std::int64_t enqueue_committed(const NewItem& item) { return testing::enqueue_committed(conn(), item); }

 private:
  std::unique_ptr<pqxx::connection> conn_;
};

// --- enqueue: C++ side ---------------------------------------------------------------------------

TEST_F(ValidationTest, EmptyTenantIsRejected) { expect_enqueue_rejected(make_item(""), {"tenant", "1 to 200"}); }

TEST_F(ValidationTest, OverLongTenantIsRejected) {
  expect_enqueue_rejected(make_item(std::string(201, 't')), {"tenant", "201"});
}

TEST_F(ValidationTest, EmptyJobTypeIsRejected) {
  expect_enqueue_rejected(make_item("t", ""), {"job_type", "1 to 100"});
}

TEST_F(ValidationTest, OverLongJobTypeIsRejected) {
  expect_enqueue_rejected(make_item("t", std::string(101, 'j')), {"job_type", "101"});
}

TEST_F(ValidationTest, OverLongClientItemIdIsRejected) {
  expect_enqueue_rejected(make_item("t", "job", "{}", 0ms, 0, std::string(201, 'c')), {"client_item_id"});
}

TEST_F(ValidationTest, EmptyClientItemIdIsRejected) {
  expect_enqueue_rejected(make_item("t", "job", "{}", 0ms, 0, std::string()), {"client_item_id"});
}

TEST_F(ValidationTest, NegativeVestingDelayIsRejected) {
  expect_enqueue_rejected(make_item("t", "job", "{}", -1ms), {"vesting_delay"});
}

TEST_F(ValidationTest, InvalidJsonPayloadIsRejected) {
  for (const char* payload : {"", "{", "{'a': 1}", "not json", "{\"a\":1} trailing"}) {
    expect_enqueue_rejected(make_item("t", "job", payload), {"payload", "JSON"});
  }
}

// Postgres' jsonb cannot store \u0000: the client-side check must say so too, instead of letting
// the database abort the caller's transaction.
TEST_F(ValidationTest, JsonPayloadThatJsonbCannotStoreIsRejectedBeforeAnyStatement) {
  expect_enqueue_rejected(make_item("t", "job", R"({"a":"x\u0000y"})"), {"payload"});
}

// A NUL character cannot travel in a text parameter: it would silently cut the tenant short and
// enqueue into another tenant's zone.
TEST_F(ValidationTest, TenantContainingANulCharacterIsRejected) {
  const auto item = make_item(std::string("tenant-a\0tenant-b", 17));
  {
    pqxx::work txn(conn());
    try {
      enqueue_in(txn, item);
      txn.commit();
      ADD_FAILURE() << "expected InvalidArgument";
    } catch (const InvalidArgument& error) {
      EXPECT_THAT(error.what(), HasSubstr("tenant"));
    }
  }
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.items WHERE tenant = 'tenant-a'"), 0)
      << "the item went into tenant-a's zone";
  query("DELETE FROM quick.items; DELETE FROM quick.pointers");
  expect_enqueue_rejected(item, {"tenant"});
}

// The database (UTF8) rejects such text with SQLSTATE 22021, aborting the caller's transaction.
TEST_F(ValidationTest, TenantThatIsNotValidUtf8IsRejectedBeforeAnyStatement) {
  expect_enqueue_rejected(make_item("tenant-\xff"), {"tenant"});
}

// JSON numbers have no range limit (RFC 8259) and jsonb stores them as numeric: a payload Postgres
// accepts must not be refused as "not valid JSON".
// A documented limit of the C++ producer (producer.h): jsonb would store 1e400 as numeric, but
// the client-side check parses numbers as doubles. It must say so, before any statement, and
// SQL callers are not limited.
TEST_F(ValidationTest, PayloadWithANumberBeyondDoublePrecisionRangeIsRejectedSayingWhyAndSqlAcceptsIt) {
  expect_enqueue_rejected(make_item("t", "job", R"({"amount":1e400})"), {"1e400", "string"});
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.enqueue('t', 'job', '{\"amount\":1e400}')"), 1);
}

TEST_F(ValidationTest, LengthLimitsCountCharactersNotBytes) {
  expect_enqueue_rejected(make_item(repeat("\xC3\xA9", 201)), {"tenant", "201"});
  const std::string tenant = repeat("\xC3\xA9", 200);        // 200 x U+00E9, 400 bytes
  const std::string job_type = repeat("\xE2\x82\xAC", 100);  // 100 x U+20AC
  const std::string client_id = repeat("\xC3\xA9", 200);
  pqxx::work txn(conn());
  const auto result = enqueue_in(txn, make_item(tenant, job_type, "{}", 0ms, 0, client_id));
  txn.commit();
  const auto stored = stored_item(conn(), result.item_id);
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(stored->tenant, tenant);
  EXPECT_EQ(stored->job_type, job_type);
}

TEST_F(ValidationTest, PayloadOverTheConfiguredMaximumIsRejectedByTheDatabaseAndNothingIsWritten) {
  set_max_payload_bytes(100);
  const std::string small = R"({"ok":true})";
  const std::string big = "{\"data\":\"" + std::string(300, 'x') + "\"}";
  {
    pqxx::work txn(conn());
    try {
      enqueue_in(txn, make_item("t", "job", big));
      FAIL() << "expected InvalidArgument";
    } catch (const InvalidArgument& error) {
      EXPECT_THAT(error.what(), HasSubstr("payload"));
      EXPECT_THAT(error.what(), HasSubstr("max_payload_bytes"));
    }
  }
  EXPECT_EQ(items(), 0);
  EXPECT_EQ(pointers(), 0);
  // The limit is quick.limits, not a constant: a small payload still goes in.
  pqxx::work txn(conn());
  enqueue_in(txn, make_item("t", "job", small));
  txn.commit();
  EXPECT_EQ(items(), 1);
}

// Every limit is read from the one row of quick.limits: without it, a comparison with its NULL
// would pass and the fast paths would write nothing and fall back, so an unchecked item got in.
// Every enqueue path, the C++ fast paths and their fallbacks included, refuses naming the table,
// and writes nothing.
TEST_F(ValidationTest, WithoutTheLimitsRowEveryEnqueuePathRefusesNamingItAndWritesNothing) {
  enqueue_committed(make_item("t"));  // an existing zone, so that the fast paths take the items
  query("DELETE FROM quick.limits");
  const auto big = make_item("t", "job", "{\"data\":\"" + std::string(2 * 1024 * 1024, 'x') + "\"}",
                             std::chrono::hours(24 * 365 * 50));
  for (const auto& item : {make_item("t"), big, make_item("new-tenant")}) {
    const std::vector<std::pair<std::string, std::function<void()>>> paths = {
        {"enqueue", [&] { enqueue(conn(), item); }},
        {"enqueue_batch",
         [&] {
           enqueue_batch(conn(), {item, make_item("t")});
         }},
        {"enqueue_in",
         [&] {
           pqxx::work txn(conn());
           enqueue_in(txn, item);
           txn.commit();
         }},
        {"enqueue_batch_in",
         [&] {
           pqxx::work txn(conn());
           enqueue_batch_in(txn, {item, make_item("t")});
           txn.commit();
         }},
    };
    for (const auto& [name, path] : paths) {
      SCOPED_TRACE(name + " of tenant " + item.tenant + ", payload of " + std::to_string(item.payload.size()) +
                   " bytes");
      try {
        path();
        ADD_FAILURE() << "enqueued without quick.limits";
      } catch (const std::exception& error) {
        EXPECT_THAT(error.what(), HasSubstr("quick.limits has no row"));
      }
    }
  }
  EXPECT_EQ(items(), 1);
  EXPECT_EQ(pointers(), 1);
}

// --- zone operations: C++ side -------------------------------------------------------------------

TEST_F(ValidationTest, NonPositiveMaxItemsIsRejected) {
  enqueue_committed(make_item("t"));
  for (int max_items : {0, -1}) {
    expect_rejected_before_any_statement(
        [&](pqxx::work& txn) {
          peek_in(txn, "t", {max_items, std::nullopt});
        },
        {"max_items"});
    expect_rejected_before_any_statement(
        [&](pqxx::work& txn) {
          dequeue_in(txn, "t", {max_items, 1000ms, std::nullopt});
        },
        {"max_items"});
  }
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.items WHERE lease_id IS NOT NULL"), 0);
}

TEST_F(ValidationTest, NonPositiveLeaseDurationIsRejected) {
  const auto id = enqueue_committed(make_item("t"));
  const auto before = stored_item(conn(), id);
  for (auto duration : {0ms, -5ms}) {
    expect_rejected_before_any_statement(
        [&](pqxx::work& txn) {
          dequeue_in(txn, "t", {1, duration, std::nullopt});
        },
        {"lease_duration"});
    expect_rejected_before_any_statement([&](pqxx::work& txn) { obtain_lease_in(txn, id, duration); },
                                         {"lease_duration"});
    expect_rejected_before_any_statement([&](pqxx::work& txn) { extend_lease_in(txn, id, kStrangerLease, duration); },
                                         {"lease_duration"});
  }
  const auto after = stored_item(conn(), id);
  EXPECT_FALSE(after->lease_id.has_value());
  EXPECT_EQ(after->vesting_time, before->vesting_time);
}

TEST_F(ValidationTest, NegativeRequeueOrReleaseDelayIsRejected) {
  const auto id = enqueue_committed(make_item("t"));
  expect_rejected_before_any_statement([&](pqxx::work& txn) { requeue_in(txn, id, std::nullopt, -1ms); },
                                       {"vesting_delay"});
  expect_rejected_before_any_statement([&](pqxx::work& txn) { release_lease_in(txn, id, kStrangerLease, -1ms); },
                                       {"vesting_delay"});
  EXPECT_EQ(stored_item(conn(), id)->error_count, 0);
}

TEST_F(ValidationTest, MalformedLeaseIdIsRejectedAsInvalidArgumentAndChangesNothing) {
  const auto id = enqueue_committed(make_item("t"));
  const std::vector<std::function<void(pqxx::work&)>> operations = {
      [&](pqxx::work& txn) { complete_in(txn, id, "not-a-uuid"); },
      [&](pqxx::work& txn) { extend_lease_in(txn, id, "not-a-uuid", 1000ms); },
      [&](pqxx::work& txn) { requeue_in(txn, id, std::string("not-a-uuid"), 0ms); },
      [&](pqxx::work& txn) { release_lease_in(txn, id, "not-a-uuid"); },
  };
  for (const auto& operation : operations) {
    pqxx::work txn(conn());
    try {
      operation(txn);
      ADD_FAILURE() << "expected InvalidArgument";
    } catch (const InvalidArgument& error) {
      EXPECT_THAT(error.what(), HasSubstr("uuid"));
      EXPECT_THAT(error.what(), HasSubstr("not-a-uuid"));
    }
  }
  const auto stored = stored_item(conn(), id);
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(stored->error_count, 0);
  EXPECT_FALSE(stored->lease_id.has_value());
}

// --- connection strings --------------------------------------------------------------------------

TEST_F(ValidationTest, MalformedConnectionStringIsRejectedWithoutConnecting) {
  for (const char* conninfo :
       {"host=localhost port", "dbname='unterminated", "nonsense_keyword=1", "postgresql://[::1/db"}) {
    SCOPED_TRACE(conninfo);
    try {
      quick::connect(conninfo);
      ADD_FAILURE() << "expected InvalidArgument";
    } catch (const InvalidArgument& error) {
      EXPECT_THAT(error.what(), HasSubstr("malformed connection string"));
    }
    EXPECT_THROW(validate_connection_string(conninfo), InvalidArgument);
  }
}

TEST_F(ValidationTest, MalformedConnectionStringErrorNeverEchoesThePassword) {
  try {
    validate_connection_string("host=db password=hunter2secret bogus");
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& error) {
    EXPECT_THAT(error.what(), HasSubstr("malformed connection string"));
    EXPECT_THAT(error.what(), Not(HasSubstr("hunter2secret")));
  }
}

TEST_F(ValidationTest, WellFormedConnectionStringsAreAccepted) {
  EXPECT_NO_THROW(validate_connection_string("host=127.0.0.1 port=5432 dbname=app"));
  EXPECT_NO_THROW(validate_connection_string("postgresql://user:pw@db.example:5432/app?sslmode=disable"));
  EXPECT_NO_THROW(validate_connection_string(""));
  auto conn = quick::connect(url());
  EXPECT_TRUE(conn->is_open());
}

// --- the SQL API's own checks (SQLSTATE 22023, argument named) ----------------------------------

TEST_F(ValidationTest, SqlEnqueueRejectsBadArgumentsNamingThem) {
  expect_sql_rejected("SELECT * FROM quick.enqueue('', 'job')", "22023", "tenant");
  expect_sql_rejected("SELECT * FROM quick.enqueue(NULL, 'job')", "22023", "tenant");
  expect_sql_rejected("SELECT * FROM quick.enqueue(repeat('t', 201), 'job')", "22023", "tenant");
  expect_sql_rejected("SELECT * FROM quick.enqueue('t', '')", "22023", "job_type");
  expect_sql_rejected("SELECT * FROM quick.enqueue('t', repeat('j', 101))", "22023", "job_type");
  expect_sql_rejected("SELECT * FROM quick.enqueue('t', 'job', NULL)", "22023", "payload");
  expect_sql_rejected("SELECT * FROM quick.enqueue('t', 'job', '{}', '-1 second')", "22023", "vesting_delay");
  expect_sql_rejected("SELECT * FROM quick.enqueue('t', 'job', '{}', '0', NULL)", "22023", "priority");
  expect_sql_rejected("SELECT * FROM quick.enqueue('t', 'job', '{}', '0', 0, '')", "22023", "client_item_id");
  expect_sql_rejected("SELECT * FROM quick.enqueue('t', 'job', '{}', '0', 0, repeat('c', 201))", "22023",
                      "client_item_id");
  expect_sql_rejected("SELECT * FROM quick.enqueue('t', 'job', '{bad')", "22P02", "json");
  set_max_payload_bytes(50);
  expect_sql_rejected("SELECT * FROM quick.enqueue('t', 'job', jsonb_build_object('x', repeat('x', 100)))", "22023",
                      "max_payload_bytes");
  EXPECT_EQ(items(), 0);
  EXPECT_EQ(pointers(), 0);
}

TEST_F(ValidationTest, SqlEnqueueBatchRejectsBadArgumentsNamingThem) {
  expect_sql_rejected("SELECT * FROM quick.enqueue_batch('{}')", "22023", "JSON array");
  expect_sql_rejected("SELECT * FROM quick.enqueue_batch(NULL)", "22023", "JSON array");
  expect_sql_rejected("SELECT * FROM quick.enqueue_batch('[1]')", "22023", "item 1 must be a JSON object");
  expect_sql_rejected(R"(SELECT * FROM quick.enqueue_batch('[{"tenant":"t","job_type":"j","colour":1}]'))", "22023",
                      "unknown key \"colour\"");
  expect_sql_rejected(
      R"(SELECT * FROM quick.enqueue_batch('[{"tenant":"t","job_type":"j"},{"tenant":"t","job_type":"j","vesting_delay":"soon"}]'))",
      "22023", "item 2");
  expect_sql_rejected(R"(SELECT * FROM quick.enqueue_batch('[{"tenant":"t","job_type":"j","priority":"high"}]'))",
                      "22023", "priority");
  expect_sql_rejected(R"(SELECT * FROM quick.enqueue_batch('[{"tenant":"t","job_type":"j"},{"job_type":"j"}]'))",
                      "22023", "item 2: tenant");
  expect_sql_rejected(
      R"(SELECT * FROM quick.enqueue_batch('[{"tenant":"t","job_type":"j","vesting_delay":"-1 hour"}]'))", "22023",
      "vesting_delay");
  EXPECT_EQ(items(), 0);
  EXPECT_EQ(pointers(), 0);
}

TEST_F(ValidationTest, SqlZoneOperationsRejectBadArgumentsNamingThem) {
  const auto id = std::to_string(enqueue_committed(make_item("t")));
  expect_sql_rejected("SELECT * FROM quick.peek('t', 0)", "22023", "max_items");
  expect_sql_rejected("SELECT * FROM quick.peek('t', NULL)", "22023", "max_items");
  expect_sql_rejected("SELECT * FROM quick.dequeue('t', 0, '1 minute')", "22023", "max_items");
  expect_sql_rejected("SELECT * FROM quick.dequeue('t', 1, '0')", "22023", "lease_duration");
  expect_sql_rejected("SELECT * FROM quick.dequeue('t', 1, NULL)", "22023", "lease_duration");
  expect_sql_rejected("SELECT * FROM quick.obtain_lease(" + id + ", '-1 second')", "22023", "lease_duration");
  expect_sql_rejected("SELECT * FROM quick.extend_lease(" + id + ", gen_random_uuid(), '0')", "22023",
                      "lease_duration");
  expect_sql_rejected("SELECT * FROM quick.extend_lease(" + id + ", NULL, '1 minute')", "22023", "lease_id");
  expect_sql_rejected("SELECT quick.requeue(" + id + ", NULL, '-1 second')", "22023", "vesting_delay");
  expect_sql_rejected("SELECT quick.release_lease(" + id + ", gen_random_uuid(), '-1 second')", "22023",
                      "vesting_delay");
  expect_sql_rejected("SELECT quick.release_lease(" + id + ", NULL)", "22023", "lease_id");
  expect_sql_rejected("SELECT quick.complete(" + id + ", 'not-a-uuid')", "22P02", "uuid");
  const auto stored = stored_item(conn(), std::stoll(id));
  ASSERT_TRUE(stored.has_value());
  EXPECT_FALSE(stored->lease_id.has_value());
  EXPECT_EQ(stored->error_count, 0);
}

TEST_F(ValidationTest, SqlPointerOperationsRejectBadArgumentsNamingThem) {
  enqueue_committed(make_item("t"));
  expect_sql_rejected("SELECT * FROM quick.lease_pointers('{t}', '0')", "22023", "lease_duration");
  expect_sql_rejected("SELECT * FROM quick.lease_next_pointers(0, '1 minute')", "22023", "max_pointers");
  expect_sql_rejected("SELECT * FROM quick.lease_next_pointers(1, '-1 minute')", "22023", "lease_duration");
  expect_sql_rejected("SELECT * FROM quick.settle_pointers('{t}', '{}', '{}', '1 minute')", "22023", "same length");
  expect_sql_rejected("SELECT * FROM quick.settle_pointers('{t}', ARRAY[gen_random_uuid()], '{f}', '-1 minute')",
                      "22023", "min_inactive");
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.pointers WHERE lease_id IS NULL"), 1);
}

TEST_F(ValidationTest, SqlPeekPointersAndApplyPullsRejectNegativeLimitsNamingThem) {
  expect_sql_rejected("SELECT * FROM quick.peek_pointers(-1)", "22023", "max_pointers");
  expect_sql_rejected("SELECT quick.apply_pointer_pulls(-1)", "22023", "max_requests");
}

}  // namespace
}  // namespace quick
