// The dashboard's HTTP API (src/dashboard/, docs/operations.md#dashboard) against a real
// database: the page and the overview are served, actions are refused without the admin token
// (read-only by default) or with a wrong one, take effect in the database with the right one,
// and bad input is answered 400 naming the field.
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "dashboard/authorization.h"
#include "quick/migrate.h"
#include "quick/quick.h"
#include "support/consumer_helpers.h"
#include "support/dashboard_server.h"
#include "support/silent_listener.h"
#include "support/test_database.h"

namespace quick::testing {
namespace {

using ::testing::HasSubstr;

constexpr const char* kToken = "s3cret-admin-token";

class DashboardApiTest : public DatabaseTest {
 protected:
  dashboard::DashboardOptions options(const std::string& token = "") const {
    dashboard::DashboardOptions options;
    options.databases = {{"main", url()}};
    options.admin_token = token;
    return options;
  }
  // POSTs `body` to `path` with `token` as the bearer ("" for no Authorization header).
  static httplib::Result post(const DashboardServer& server, const std::string& path, const std::string& body,
                              const std::string& token) {
    auto client = server.client();
    httplib::Headers headers;
    if (!token.empty()) headers.emplace("Authorization", "Bearer " + token);
    return client.Post(path.c_str(), headers, body, "application/json");
  }
  static nlohmann::json json_of(const httplib::Result& response) { return nlohmann::json::parse(response->body); }
  int paused_count(const std::string& kind, const std::string& name) const {
    return query_value<int>("SELECT count(*) FROM quick.paused WHERE kind = '" + kind + "' AND name = '" + name + "'");
  }
  // A dead item of `tenant`, as a consumer that gave up would leave it; returns its id.
  std::int64_t insert_dead_item(const std::string& tenant, const std::string& job_type) const {
    return query_value<std::int64_t>(
        "INSERT INTO quick.dead_items (id, tenant, job_type, priority, error_count, payload, enqueued_at, last_error, "
        "reason) VALUES ((SELECT coalesce(max(id), 0) + 1000 FROM quick.dead_items), '" +
        tenant + "', '" + job_type + "', 0, 3, '{\"dead\": true}', now(), 'boom', 'gave up') RETURNING id");
  }
};

TEST_F(DashboardApiTest, ServesThePageAndAnOverviewThatCountsWhatTheDatabaseHolds) {
  enqueue_items(url(), 12, 3, "email", "api-tenant");
  insert_dead_item("api-tenant0", "email");
  DashboardServer server(options());
  auto client = server.client();

  const auto page = client.Get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_THAT(page->body, HasSubstr("quick-pg dashboard"));
  EXPECT_THAT(page->get_header_value("Content-Security-Policy"), HasSubstr("script-src 'self'"));
  const auto script = client.Get("/dashboard.js");
  ASSERT_TRUE(script);
  EXPECT_EQ(script->status, 200);
  EXPECT_THAT(script->get_header_value("Content-Type"), HasSubstr("javascript"));

  const auto response = client.Get("/api/overview");
  ASSERT_TRUE(response);
  ASSERT_EQ(response->status, 200) << response->body;
  const auto overview = json_of(response);
  EXPECT_TRUE(overview["read_only"].get<bool>());
  EXPECT_EQ(overview["summary"]["items"].get<int>(), 12);
  EXPECT_EQ(overview["summary"]["dead_items"].get<int>(), 1);
  EXPECT_EQ(overview["summary"]["pointers"].get<int>(), 3);
  EXPECT_FALSE(overview["summary"]["estimated"].get<bool>());
  ASSERT_EQ(overview["job_types"].size(), 1u);
  EXPECT_EQ(overview["job_types"][0]["job_type"], "email");
  EXPECT_EQ(overview["job_types"][0]["items"].get<int>(), 12);
  EXPECT_EQ(overview["job_types"][0]["dead"].get<int>(), 1);
  ASSERT_EQ(overview["deepest_zones"].size(), 3u);
  EXPECT_EQ(overview["deepest_zones"][0]["items"].get<int>(), 4);

  const auto dead = client.Get("/api/dead_items?tenant=api-tenant0");
  ASSERT_TRUE(dead);
  ASSERT_EQ(dead->status, 200) << dead->body;
  ASSERT_EQ(json_of(dead)["dead_items"].size(), 1u);
  EXPECT_EQ(json_of(dead)["dead_items"][0]["payload"]["dead"], true);
}

TEST_F(DashboardApiTest, WithoutAnAdminTokenEveryActionIsRefusedWith403AndChangesNothing) {
  const auto dead_id = insert_dead_item("ro-tenant", "email");
  DashboardServer server(options());
  for (const auto& [path, body] : std::vector<std::pair<std::string, std::string>>{
           {"/api/tenants/pause", R"({"tenant": "ro-tenant"})"},
           {"/api/job_types/pause", R"({"job_type": "email"})"},
           {"/api/dead_items/retry", R"({"ids": [)" + std::to_string(dead_id) + "]}"},
           {"/api/items/cancel", R"({"id": 1})"}}) {
    const auto response = post(server, path, body, kToken);
    ASSERT_TRUE(response) << path;
    EXPECT_EQ(response->status, 403) << path;
    EXPECT_THAT(json_of(response)["error"].get<std::string>(), HasSubstr("read-only")) << path;
  }
  EXPECT_EQ(paused_count("tenant", "ro-tenant"), 0);
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.dead_items"), 1);
  // Reads stay open; an action by GET does not exist.
  auto client = server.client();
  EXPECT_EQ(client.Get("/api/tenants/pause")->status, 404);
}

TEST_F(DashboardApiTest, ActionsNeedTheRightBearerToken) {
  DashboardServer server(options(kToken));
  const std::string body = R"({"tenant": "tok-tenant", "reason": "noisy"})";
  const auto missing = post(server, "/api/tenants/pause", body, "");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 401);
  EXPECT_EQ(missing->get_header_value("WWW-Authenticate"), "Bearer");
  const auto wrong = post(server, "/api/tenants/pause", body, "s3cret-admin-tokeN");
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 401);
  EXPECT_EQ(post(server, "/api/tenants/pause", body, "s3cret")->status, 401);
  EXPECT_EQ(paused_count("tenant", "tok-tenant"), 0);

  const auto right = post(server, "/api/tenants/pause", body, kToken);
  ASSERT_TRUE(right);
  ASSERT_EQ(right->status, 200) << right->body;
  EXPECT_TRUE(json_of(right)["changed"].get<bool>());
  EXPECT_EQ(paused_count("tenant", "tok-tenant"), 1);
  EXPECT_EQ(query_value<std::string>("SELECT reason FROM quick.paused WHERE name = 'tok-tenant'"), "noisy");
  EXPECT_FALSE(json_of(post(server, "/api/tenants/pause", body, kToken))["changed"].get<bool>());

  const auto resumed = post(server, "/api/tenants/resume", R"({"tenant": "tok-tenant"})", kToken);
  ASSERT_EQ(resumed->status, 200) << resumed->body;
  EXPECT_EQ(paused_count("tenant", "tok-tenant"), 0);
  ASSERT_EQ(post(server, "/api/job_types/pause", R"({"job_type": "email"})", kToken)->status, 200);
  EXPECT_EQ(paused_count("job_type", "email"), 1);
  ASSERT_EQ(post(server, "/api/job_types/resume", R"({"job_type": "email"})", kToken)->status, 200);
  EXPECT_EQ(paused_count("job_type", "email"), 0);
}

TEST_F(DashboardApiTest, RetryAndCancelTakeEffectInTheDatabase) {
  const auto first = insert_dead_item("retry-tenant", "email");
  const auto second = insert_dead_item("retry-tenant", "email");
  const auto other = insert_dead_item("other-tenant", "report");
  DashboardServer server(options(kToken));

  const auto by_ids = post(server, "/api/dead_items/retry", R"({"ids": [)" + std::to_string(first) + "]}", kToken);
  ASSERT_EQ(by_ids->status, 200) << by_ids->body;
  EXPECT_EQ(json_of(by_ids)["retried"].get<int>(), 1);
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.items WHERE tenant = 'retry-tenant'"), 1);
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.dead_items WHERE id = " + std::to_string(first)), 0);

  const auto by_filter = post(server, "/api/dead_items/retry", R"({"tenant": "retry-tenant", "job_type": "email"})",
                              kToken);
  ASSERT_EQ(by_filter->status, 200) << by_filter->body;
  EXPECT_EQ(json_of(by_filter)["retried"].get<int>(), 1);
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.dead_items WHERE id = " + std::to_string(second)), 0);
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.dead_items WHERE id = " + std::to_string(other)), 1);

  const auto queued = query_value<std::int64_t>("SELECT min(id) FROM quick.items WHERE tenant = 'retry-tenant'");
  const auto cancel = post(server, "/api/items/cancel", R"({"id": ")" + std::to_string(queued) + R"("})", kToken);
  ASSERT_EQ(cancel->status, 200) << cancel->body;
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.items WHERE id = " + std::to_string(queued)), 0);
  EXPECT_EQ(query_value<std::string>("SELECT reason FROM quick.dead_items WHERE id = " + std::to_string(queued)),
            "cancelled");
  const auto again = post(server, "/api/items/cancel", R"({"id": )" + std::to_string(queued) + "}", kToken);
  EXPECT_EQ(again->status, 404) << again->body;
}

// As `quick dead retry --id N --tenant T` does: ids and the filter fields together retry the items
// that match both, not every listed id.
TEST_F(DashboardApiTest, RetryByIdsHonoursTheFilterGivenWithThem) {
  const auto mine = insert_dead_item("ids-tenant", "email");
  const auto other = insert_dead_item("ids-other", "email");
  DashboardServer server(options(kToken));
  const std::string ids = "[" + std::to_string(mine) + ", " + std::to_string(other) + "]";

  const auto none = post(server, "/api/dead_items/retry", R"({"ids": )" + ids + R"(, "tenant": "nonexistent"})",
                         kToken);
  ASSERT_EQ(none->status, 200) << none->body;
  EXPECT_EQ(json_of(none)["retried"].get<int>(), 0);
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.dead_items"), 2);

  const auto one = post(server, "/api/dead_items/retry",
                        R"({"ids": )" + ids + R"(, "tenant": "ids-tenant", "job_type": "email"})", kToken);
  ASSERT_EQ(one->status, 200) << one->body;
  EXPECT_EQ(json_of(one)["retried"].get<int>(), 1);
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.dead_items WHERE id = " + std::to_string(mine)), 0);
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.dead_items WHERE id = " + std::to_string(other)), 1);

  const auto bad = post(server, "/api/dead_items/retry", R"({"ids": )" + ids + R"(, "older_than": "7"})", kToken);
  EXPECT_EQ(bad->status, 400) << "a filter field given with ids is checked too: " << bad->body;
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.dead_items"), 1);
}

TEST_F(DashboardApiTest, BadInputIsAnswered400NamingWhatWasWrong) {
  DashboardServer server(options(kToken));
  const std::vector<std::tuple<std::string, std::string, std::string>> cases = {
      {"/api/dead_items/retry", R"({"ids": [1, "x"]})", "ids[1]"},
      {"/api/dead_items/retry", R"({"ids": []})", "ids must be a non-empty array"},
      {"/api/dead_items/retry", R"({})", "say which dead items"},
      {"/api/dead_items/retry", R"({"tenant": "t", "older_than": "soon"})", "older_than"},
      {"/api/items/cancel", R"({"id": "12abc"})", "id must be a positive integer"},
      {"/api/items/cancel", R"({"id": -4})", "id must be a positive integer"},
      {"/api/items/cancel", R"(not json)", "JSON object"},
      {"/api/tenants/pause", R"({"tenant": ""})", "tenant is required"},
      {"/api/tenants/pause", R"({"tenant": 7})", "tenant must be a string"},
      {"/api/job_types/resume", R"({})", "job_type is required"},
  };
  for (const auto& [path, body, expected] : cases) {
    const auto response = post(server, path, body, kToken);
    ASSERT_TRUE(response) << path << " " << body;
    EXPECT_EQ(response->status, 400) << path << " " << body << ": " << response->body;
    EXPECT_THAT(json_of(response)["error"].get<std::string>(), HasSubstr(expected)) << path << " " << body;
  }
  auto client = server.client();
  for (const auto& [query, expected] : std::vector<std::pair<std::string, std::string>>{
           {"/api/dead_items?limit=0", "limit must be an integer from 1 to 1000"},
           {"/api/dead_items?limit=ten", "limit"},
           {"/api/dead_items?older_than=5", "older_than"}}) {
    const auto response = client.Get(query.c_str());
    ASSERT_TRUE(response) << query;
    EXPECT_EQ(response->status, 400) << query << ": " << response->body;
    EXPECT_THAT(json_of(response)["error"].get<std::string>(), HasSubstr(expected)) << query;
  }
}

TEST_F(DashboardApiTest, SeveralDatabasesEachWithItsSummaryAndActionsOnTheOneNamed) {
  EmptyDatabase second;
  {
    pqxx::connection conn(second.url());
    migrate(conn);
  }
  enqueue_items(url(), 4, 2, "email", "first-db-tenant");
  enqueue_items(second.url(), 6, 3, "email", "second-db-tenant");
  dashboard::DashboardOptions both = options(kToken);
  both.databases.push_back({"second", second.url()});
  DashboardServer server(both);
  auto client = server.client();

  const auto first_view = client.Get("/api/overview");
  ASSERT_TRUE(first_view);
  ASSERT_EQ(first_view->status, 200) << first_view->body;
  const auto first = json_of(first_view);
  EXPECT_EQ(first["database"], "main") << "the first database by default";
  EXPECT_EQ(first["summary"]["items"].get<int>(), 4);
  ASSERT_EQ(first["databases"].size(), 2u) << "every database's summary";
  EXPECT_EQ(first["databases"][0]["name"], "main");
  EXPECT_EQ(first["databases"][1]["name"], "second");
  EXPECT_EQ(first["databases"][1]["summary"]["items"].get<int>(), 6);

  const auto second_view = client.Get("/api/overview?database=second");
  ASSERT_TRUE(second_view);
  const auto details = json_of(second_view);
  EXPECT_EQ(details["database"], "second");
  EXPECT_EQ(details["summary"]["pointers"].get<int>(), 3);

  const auto unknown = client.Get("/api/overview?database=third");
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 404);
  EXPECT_THAT(unknown->body, HasSubstr("this dashboard shows main, second"));

  const auto paused = post(server, "/api/tenants/pause?database=second", R"({"tenant": "second-db-tenant0"})", kToken);
  ASSERT_TRUE(paused);
  EXPECT_EQ(paused->status, 200) << paused->body;
  EXPECT_EQ(paused_count("tenant", "second-db-tenant0"), 0) << "not in the first database";
  pqxx::connection conn(second.url());
  pqxx::nontransaction check(conn);
  EXPECT_EQ(check.exec("SELECT count(*) FROM quick.paused_tenants WHERE tenant = 'second-db-tenant0'")[0][0].as<int>(),
            1);
}

TEST_F(DashboardApiTest, ADatabaseThatNeverAnswersGetsAnErrorWhileTheOthersAreShown) {
  enqueue_items(url(), 5, 1, "email", "alive-tenant");
  SilentListener silent;
  dashboard::DashboardOptions both = options();
  both.databases.push_back({"silent", silent.url()});
  DashboardServer server(both);
  auto client = server.client();
  client.set_read_timeout(60, 0);  // far beyond the bound checked: without one it waited forever

  for (int poll = 0; poll < 2; ++poll) {  // the second poll connects again: nothing was pooled
    SCOPED_TRACE("poll " + std::to_string(poll));
    const auto began = std::chrono::steady_clock::now();
    const auto response = client.Get("/api/overview");
    ASSERT_TRUE(response) << "no answer";
    EXPECT_LT(std::chrono::steady_clock::now() - began, std::chrono::seconds(15));
    ASSERT_EQ(response->status, 200) << response->body;
    const auto overview = json_of(response);
    EXPECT_EQ(overview["summary"]["items"].get<int>(), 5);
    ASSERT_EQ(overview["databases"].size(), 2u);
    EXPECT_EQ(overview["databases"][1]["name"], "silent");
    EXPECT_THAT(overview["databases"][1]["error"].get<std::string>(), HasSubstr("timeout"));
  }
  const auto began = std::chrono::steady_clock::now();
  const auto selected = client.Get("/api/overview?database=silent");
  ASSERT_TRUE(selected) << "no answer";
  EXPECT_LT(std::chrono::steady_clock::now() - began, std::chrono::seconds(15));
  EXPECT_EQ(selected->status, 503) << selected->body;
}

TEST_F(DashboardApiTest, WhenTheChosenDatabaseCannotBeReadTheOverviewStillListsEveryDatabase) {
  enqueue_items(url(), 3, 1, "email", "alive-tenant");
  dashboard::DashboardOptions options;
  // Nothing listens on port 1: the first database refuses at once.
  options.databases = {{"down", "host=127.0.0.1 port=1 dbname=none connect_timeout=2"}, {"main", url()}};
  DashboardServer server(options);
  auto client = server.client();

  const auto response = client.Get("/api/overview");
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 503) << response->body;
  auto body = json_of(response);  // not const: operator[] adds what is missing rather than crash
  EXPECT_THAT(body["error"].get<std::string>(), HasSubstr("unreachable"));
  EXPECT_EQ(body["database"], "down") << body;
  ASSERT_EQ(body["databases"].size(), 2u) << "the page needs them to offer the databases that can be read: " << body;
  EXPECT_EQ(body["databases"][0]["name"], "down");
  EXPECT_THAT(body["databases"][0]["error"].get<std::string>(), HasSubstr("unreachable"));
  EXPECT_EQ(body["databases"][1]["name"], "main");
  EXPECT_EQ(body["databases"][1]["summary"]["items"].get<int>(), 3);

  // With one database there is nothing else to offer: the error alone, as before.
  dashboard::DashboardOptions alone;
  alone.databases = {{"down", "host=127.0.0.1 port=1 dbname=none connect_timeout=2"}};
  DashboardServer lonely(alone);
  const auto only = lonely.client().Get("/api/overview");
  ASSERT_TRUE(only);
  EXPECT_EQ(only->status, 503);
  EXPECT_FALSE(json_of(only).contains("databases")) << only->body;
}

TEST_F(DashboardApiTest, DeadItemsWithPayloadCharsGiveEachPayloadsBeginningAndSize) {
  const auto id = insert_dead_item("api-tenant", "email");  // payload {"dead": true}
  DashboardServer server(options());
  auto client = server.client();

  const auto response = client.Get("/api/dead_items?payload_chars=5");
  ASSERT_TRUE(response);
  ASSERT_EQ(response->status, 200) << response->body;
  auto item = json_of(response)["dead_items"].at(0);
  EXPECT_EQ(item["id"].get<std::int64_t>(), id);
  EXPECT_EQ(item["payload_text"], "{\"dea");
  EXPECT_EQ(item["payload_bytes"].get<int>(), 14);
  EXPECT_TRUE(item["payload_truncated"].get<bool>());
  EXPECT_FALSE(item.contains("payload"));

  const auto whole = client.Get("/api/dead_items?payload_chars=14");
  ASSERT_TRUE(whole);
  item = json_of(whole)["dead_items"].at(0);
  EXPECT_EQ(item["payload_text"], "{\"dead\": true}");
  EXPECT_FALSE(item["payload_truncated"].get<bool>());

  const auto without = client.Get("/api/dead_items");  // as before: the payload itself
  ASSERT_TRUE(without);
  EXPECT_EQ(json_of(without)["dead_items"].at(0)["payload"], nlohmann::json({{"dead", true}}));

  const auto bad = client.Get("/api/dead_items?payload_chars=0");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_THAT(bad->body, HasSubstr("payload_chars must be an integer from 1 to 100000"));
}

TEST_F(DashboardApiTest, ALoginWithoutQuickAdminReadsButItsActionsAreRefusedByTheDatabase) {
  TestLogin consumer("quick_consumer");
  pqxx::connection conn(url());  // its keyword form, to which the login's user is appended
  dashboard::DashboardOptions as_consumer = options(kToken);
  as_consumer.databases.front().url = consumer.url("host=" + std::string(conn.hostname()) + " port=" + conn.port() +
                                                   " dbname=" + conn.dbname());
  DashboardServer server(as_consumer);
  auto client = server.client();
  const auto overview = client.Get("/api/overview");
  ASSERT_TRUE(overview);
  EXPECT_EQ(overview->status, 200) << overview->body;
  const auto pause = post(server, "/api/tenants/pause", R"({"tenant": "t"})", kToken);
  ASSERT_TRUE(pause);
  EXPECT_EQ(pause->status, 403) << pause->body;
  EXPECT_THAT(json_of(pause)["error"].get<std::string>(), HasSubstr("quick_admin"));
  EXPECT_EQ(paused_count("tenant", "t"), 0);
}

TEST(DashboardTokenTest, TokensAreEqualOnlyWhenEveryByteAndTheLengthMatch) {
  EXPECT_TRUE(dashboard::tokens_equal("abc", "abc"));
  EXPECT_FALSE(dashboard::tokens_equal("abc", "abd"));
  EXPECT_FALSE(dashboard::tokens_equal("abc", "abcabc"));
  EXPECT_FALSE(dashboard::tokens_equal("abc", "ab"));
  EXPECT_FALSE(dashboard::tokens_equal("abc", ""));
  EXPECT_FALSE(dashboard::tokens_equal("", ""));
}

}  // namespace
}  // namespace quick::testing
