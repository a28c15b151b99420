// The dashboard in a real headless Chromium (support/webdriver.h): with a consumer running
// against the database, the page shows it alive with its roles and counts equal to the
// database's; then, with the admin token entered in the page, pausing a tenant and retrying a dead
// item from the page take effect in the database.
//
// QUICK_DASHBOARD_SCREENSHOT_DIR=DIR makes it save DIR/dashboard-overview.png and
// DIR/dashboard-actions.png (docs/images/ holds the ones docs/operations.md shows).
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "quick/migrate.h"
#include "quick/quick.h"
#include "support/consumer_helpers.h"
#include "support/dashboard_server.h"
#include "support/items.h"
#include "support/test_database.h"
#include "support/webdriver.h"

namespace quick::testing {
namespace {

using ::testing::HasSubstr;

constexpr const char* kToken = "browser-test-token";

// Run before the page's own script (BrowserSession::run_before_page_scripts): the page's timers
// run ten times as fast (its 5 s refresh every 0.5 s), and window.requests counts its requests
// per "METHOD /path": how many started and finished, how many are in flight now and at most at once.
constexpr const char* kPageWatch = R"js(
(() => {
  const scale = 10;
  const setTimeout_ = window.setTimeout.bind(window), setInterval_ = window.setInterval.bind(window);
  window.setTimeout = (f, ms, ...rest) => setTimeout_(f, (ms || 0) / scale, ...rest);
  window.setInterval = (f, ms, ...rest) => setInterval_(f, (ms || 0) / scale, ...rest);
  window.requests = {};
  const fetch_ = window.fetch.bind(window);
  window.fetch = (input, init) => {
    const key = ((init && init.method) || "GET") + " " + new URL(String(input), location.href).pathname;
    const r = window.requests[key] ||
              (window.requests[key] = { started: 0, finished: 0, in_flight: 0, max_in_flight: 0 });
    r.started++;
    r.in_flight++;
    r.max_in_flight = Math.max(r.max_in_flight, r.in_flight);
    return fetch_(input, init).finally(() => { r.in_flight--; r.finished++; });
  };
})();
)js";

class DashboardBrowserTest : public DatabaseTest {
 protected:
  static void screenshot(BrowserSession& browser, const std::string& name) {
    const char* dir = std::getenv("QUICK_DASHBOARD_SCREENSHOT_DIR");
    if (dir != nullptr && *dir != '\0') browser.save_screenshot(std::filesystem::path(dir) / (name + ".png"));
  }
  // Whether the element's text is `expected`, as the page shows it now.
  static bool shows(BrowserSession& browser, const std::string& css, const std::string& expected) {
    return browser.text(css).value_or("") == expected;
  }
  static bool shows_substring(BrowserSession& browser, const std::string& css, const std::string& expected) {
    return browser.text(css).value_or("").find(expected) != std::string::npos;
  }
  // What kPageWatch counted of the page's requests `key` ("GET /api/overview"): zeros if none.
  static nlohmann::json requests(BrowserSession& browser, const std::string& key) {
    const auto counted = browser.execute("return (window.requests || {})[arguments[0]] || null;", {key});
    if (!counted.is_null()) return counted;
    return {{"started", 0}, {"finished", 0}, {"in_flight", 0}, {"max_in_flight", 0}};
  }
  // Types the admin token into the page once it shows the field (when it knows it takes one).
  static void enter_token(BrowserSession& browser) {
    ASSERT_TRUE(eventually([&] { return shows(browser, "#mode", "enter the admin token for actions"); }, seconds(10),
                           milliseconds(20)))
        << "mode: " << browser.text("#mode").value_or("");
    browser.type("#token", kToken);
    browser.click("#token-save");
  }
  static std::string class_of(BrowserSession& browser, const std::string& css) {
    return browser.execute("const e = document.querySelector(arguments[0]); return e ? e.className : '';", {css})
        .get<std::string>();
  }
};

TEST_F(DashboardBrowserTest, ShowsALiveConsumerAndPausesATenantAndRetriesADeadItemFromThePage) {
  const auto started = Clock::now();
  // Work the consumer finishes, one item it gives up on (tenant acme), and eight items for later
  // that stay queued: the numbers the page must show are then stable.
  enqueue_items(url(), 40, 4, "resize-image", "shop");
  {
    auto conn = connect();
    pqxx::work txn(*conn);
    enqueue_in(txn, make_item("acme", "send-invoice", R"({"invoice": 7})"));
    for (int i = 0; i < 3; ++i) enqueue_in(txn, make_item("later", "send-invoice", "{}", std::chrono::hours(1)));
    for (int i = 0; i < 5; ++i) {
      enqueue_in(txn, make_item(i % 2 ? "north" : "south", "export-report", "{}", std::chrono::minutes(30 + i)));
    }
    txn.commit();
  }
  Consumer consumer(fast_config(url(), "dash-consumer"));
  consumer.handle("resize-image", [](JobContext&) { return JobResult::done(); });
  consumer.handle("send-invoice", [](JobContext&) { return JobResult::permanent_failure("SMTP 550: mailbox full"); });
  consumer.start();
  ASSERT_TRUE(eventually(
      [&] {
        return query_value<int>("SELECT count(*) FROM quick.dead_items") == 1 &&
               query_value<int>("SELECT count(*) FROM quick.items") == 8;
      },
      seconds(15)))
      << "the consumer did not finish the work";
  const auto dead_id = query_value<std::int64_t>("SELECT id FROM quick.dead_items");

  dashboard::DashboardOptions options;
  options.databases = {{"main", url()}};
  options.admin_token = kToken;
  DashboardServer server(options);
  ChromeDriver driver;
  BrowserSession browser(driver, 1400, 1250);
  browser.navigate(server.base_url() + "/");

  // Live numbers: the consumer alive with both its roles, the counts the database holds.
  ASSERT_TRUE(eventually(
      [&] {
        return shows_substring(browser, "#consumers tbody", "dash-consumer") &&
               shows_substring(browser, "#consumers tbody", "in-order Scanner");
      },
      seconds(10), milliseconds(100)))
      << "consumers: " << browser.text("#consumers").value_or("(none)")
      << "\nstatus: " << browser.text("#status").value_or("");
  ASSERT_TRUE(eventually(
      [&] {
        return shows(browser, "#summary-items", std::to_string(query_value<int>("SELECT count(*) FROM quick.items"))) &&
               shows(browser, "#summary-dead",
                     std::to_string(query_value<int>("SELECT count(*) FROM quick.dead_items")));
      },
      seconds(10), milliseconds(100)))
      << "items " << browser.text("#summary-items").value_or("?") << ", dead "
      << browser.text("#summary-dead").value_or("?");
  ASSERT_TRUE(eventually([&] { return browser.exists("button.retry-dead[data-id='" + std::to_string(dead_id) + "']"); },
                         seconds(10), milliseconds(100)))
      << browser.text("#dead-items").value_or("(no dead items table)");
  EXPECT_THAT(browser.text("#dead-items").value_or(""), HasSubstr("SMTP 550: mailbox full"));
  EXPECT_THAT(browser.text("#job-types").value_or(""), HasSubstr("send-invoice"));
  screenshot(browser, "dashboard-overview");

  // The admin token, entered in the page.
  browser.type("#token", kToken);
  browser.click("#token-save");
  ASSERT_TRUE(eventually([&] { return shows(browser, "#mode", "actions enabled"); }, seconds(10), milliseconds(50)));

  // Pause tenant acme from the form: it shows in quick.paused.
  browser.type("#pause-name", "acme");
  browser.type("#pause-reason", "invoices bounce");
  browser.click("#pause-button");
  ASSERT_TRUE(eventually(
      [&] {
        return query_value<int>("SELECT count(*) FROM quick.paused WHERE kind = 'tenant' AND name = 'acme'") == 1;
      },
      seconds(10), milliseconds(50)))
      << browser.text("#message").value_or("");
  ASSERT_TRUE(
      eventually([&] { return shows(browser, "#message", "tenant acme paused"); }, seconds(10), milliseconds(50)));
  EXPECT_THAT(browser.text("#paused tbody").value_or(""), HasSubstr("invoices bounce"));

  // Retry the dead item from its row: it is back in acme's zone, where the pause keeps it.
  browser.click("button.retry-dead[data-id='" + std::to_string(dead_id) + "']");
  ASSERT_TRUE(eventually(
      [&] {
        return query_value<int>("SELECT count(*) FROM quick.dead_items WHERE id = " + std::to_string(dead_id)) == 0 &&
               query_value<int>("SELECT count(*) FROM quick.items WHERE tenant = 'acme'") == 1;
      },
      seconds(10), milliseconds(50)))
      << browser.text("#message").value_or("");
  ASSERT_TRUE(eventually([&] { return shows_substring(browser, "#message", "retried 1 dead item"); }, seconds(10),
                         milliseconds(50)));
  screenshot(browser, "dashboard-actions");
  consumer.stop();
  std::cout << "browser test took " << seconds_since(started) << " s" << std::endl;
}

TEST_F(DashboardBrowserTest, ShowsEveryDatabaseAndTheOneChosenInDetail) {
  EmptyDatabase second;
  {
    pqxx::connection conn(second.url());
    migrate(conn);
  }
  enqueue_items(url(), 2, 1, "job", "first-db");
  enqueue_items(second.url(), 7, 2, "job", "second-db");
  pqxx::connection second_conn(second.url());
  pqxx::nontransaction(second_conn).exec("SELECT quick.pause_tenant('second-db1', 'only here')");

  dashboard::DashboardOptions options;
  options.databases = {{"main", url()}, {"second", second.url()}};
  DashboardServer server(options);
  ChromeDriver driver;
  BrowserSession browser(driver);
  browser.navigate(server.base_url() + "/");
  ASSERT_TRUE(eventually(
      [&] {
        return shows(browser, "#database-name", "main") && shows(browser, "#summary-items", "2") &&
               browser.exists("button.select-database[data-database='second']");
      },
      seconds(10), milliseconds(50)))
      << browser.text("#databases").value_or("(no databases table)");
  EXPECT_THAT(browser.text("#databases tbody").value_or(""), HasSubstr("second"));

  browser.click("button.select-database[data-database='second']");
  ASSERT_TRUE(
      eventually([&] { return shows(browser, "#database-name", "second") && shows(browser, "#summary-items", "7"); },
                 seconds(10), milliseconds(50)))
      << browser.text("#summary-items").value_or("?");
  EXPECT_TRUE(
      eventually([&] { return shows_substring(browser, "#paused tbody", "only here"); }, seconds(10), milliseconds(50)))
      << "the chosen database's pauses: " << browser.text("#paused").value_or("");
}

TEST_F(DashboardBrowserTest, AsksOneOverviewAtATimeAndSaysSoWhenTheServerDoesNotAnswer) {
  dashboard::DashboardOptions options;
  options.databases = {{"main", url()}};
  options.statement_timeout = std::chrono::seconds(60);  // the requests wait for the lock below
  DashboardServer server(options);
  ChromeDriver driver;
  BrowserSession browser(driver);
  browser.run_before_page_scripts(kPageWatch);
  browser.navigate(server.base_url() + "/");
  ASSERT_TRUE(eventually([&] { return shows(browser, "#summary-items", "0"); }, seconds(10), milliseconds(50)));

  // The database stops answering: every overview waits for this lock. The page says so once its
  // request has waited 20 s (2 s here), and meanwhile asks no second overview.
  pqxx::connection locker(url());
  pqxx::work lock(locker);
  lock.exec("LOCK TABLE quick.dead_items IN ACCESS EXCLUSIVE MODE");
  const bool said_so = eventually([&] { return shows_substring(browser, "#status", "cannot refresh"); }, seconds(5),
                                  milliseconds(50));
  EXPECT_TRUE(said_so) << "status: " << browser.text("#status").value_or("");
  EXPECT_EQ(requests(browser, "GET /api/overview")["max_in_flight"], 1) << requests(browser, "GET /api/overview");
  EXPECT_EQ(class_of(browser, "#status"), "status error");

  // The database answers again: so does the page, by itself.
  lock.abort();
  EXPECT_TRUE(eventually([&] { return shows_substring(browser, "#status", "updated"); }, seconds(5), milliseconds(50)))
      << "status: " << browser.text("#status").value_or("");
  EXPECT_EQ(requests(browser, "GET /api/overview")["max_in_flight"], 1) << requests(browser, "GET /api/overview");
}

TEST_F(DashboardBrowserTest, AnAnswerForTheDatabaseShownBeforeDoesNotReplaceTheOneChosenSince) {
  EmptyDatabase second;
  {
    pqxx::connection conn(second.url());
    migrate(conn);
  }
  enqueue_items(url(), 2, 1, "job", "first-db");
  enqueue_items(second.url(), 7, 2, "job", "second-db");
  dashboard::DashboardOptions options;
  options.databases = {{"main", url()}, {"second", second.url()}};
  options.statement_timeout = std::chrono::seconds(60);
  DashboardServer server(options);
  ChromeDriver driver;
  BrowserSession browser(driver);
  browser.run_before_page_scripts(kPageWatch);
  browser.navigate(server.base_url() + "/");
  ASSERT_TRUE(eventually([&] { return shows(browser, "#summary-items", "2"); }, seconds(10), milliseconds(50)));

  // main's next refresh waits for this lock (main's summary, which second's overview shows too,
  // does not); meanwhile the user chooses second, which answers.
  pqxx::connection locker(url());
  pqxx::work lock(locker);
  lock.exec("LOCK TABLE quick.paused IN ACCESS EXCLUSIVE MODE");
  const int finished = requests(browser, "GET /api/overview")["finished"].get<int>();
  ASSERT_TRUE(eventually([&] { return requests(browser, "GET /api/overview")["in_flight"].get<int>() > 0; }, seconds(5),
                         milliseconds(20)));
  browser.click("button.select-database[data-database='second']");
  ASSERT_TRUE(
      eventually([&] { return shows(browser, "#database-name", "second") && shows(browser, "#summary-items", "7"); },
                 seconds(5), milliseconds(20)));

  // main's answer comes late: the page keeps showing second.
  lock.abort();
  ASSERT_TRUE(eventually(
      [&] {
        const auto counted = requests(browser, "GET /api/overview");
        return counted["in_flight"].get<int>() == 0 && counted["finished"].get<int>() >= finished + 2;
      },
      seconds(5), milliseconds(20)));
  EXPECT_TRUE(shows(browser, "#database-name", "second") && shows(browser, "#summary-items", "7"))
      << browser.text("#database-name").value_or("?") << ": " << browser.text("#summary-items").value_or("?");
}

TEST_F(DashboardBrowserTest, TheRowsOfTheDatabaseShownBeforeGoOnceAnotherIsChosen) {
  EmptyDatabase second;
  {
    pqxx::connection conn(second.url());
    migrate(conn);
  }
  // A dead item with the same id in each database, as ids are each database's own.
  const auto bury = [](const std::string& database_url, const std::string& tenant) {
    pqxx::connection conn(database_url);
    pqxx::nontransaction(conn).exec_params(
        "INSERT INTO quick.dead_items (id, tenant, job_type, priority, error_count, payload, enqueued_at, "
        "last_error, reason) VALUES (424242, $1, 'job', 0, 1, '{}', now(), 'boom', 'permanent failure')",
        tenant);
  };
  bury(url(), "first-db");
  bury(second.url(), "second-db");
  const std::string retry_button = "button.retry-dead[data-id='424242']";

  dashboard::DashboardOptions options;
  options.databases = {{"main", url()}, {"second", second.url()}};
  options.admin_token = kToken;
  options.statement_timeout = std::chrono::seconds(60);
  DashboardServer server(options);
  ChromeDriver driver;
  BrowserSession browser(driver);
  browser.run_before_page_scripts(kPageWatch);
  browser.navigate(server.base_url() + "/");
  enter_token(browser);
  ASSERT_TRUE(eventually([&] { return shows(browser, "#mode", "actions enabled") && browser.exists(retry_button); },
                         seconds(10), milliseconds(50)));

  // second is slow to answer; the user chooses it, and right away clicks the Retry the page shows.
  pqxx::connection locker(second.url());
  pqxx::work lock(locker);
  lock.exec("LOCK TABLE quick.dead_items IN ACCESS EXCLUSIVE MODE");
  browser.click("button.select-database[data-database='second']");
  const bool stale_row = browser.exists(retry_button);
  const std::string dead_items_shown = browser.text("#dead-items tbody").value_or("");
  if (stale_row) browser.click(retry_button);
  lock.abort();
  ASSERT_TRUE(eventually(
      [&] {
        return requests(browser, "POST /api/dead_items/retry")["in_flight"] == 0 &&
               requests(browser, "GET /api/dead_items")["in_flight"] == 0 &&
               shows(browser, "#database-name", "second") && !shows_substring(browser, "#dead-items tbody", "first-db");
      },
      seconds(5), milliseconds(20)))
      << browser.text("#dead-items").value_or("");

  EXPECT_FALSE(stale_row) << "main's dead items, with their Retry buttons, stayed in the page once second was chosen: "
                          << dead_items_shown;
  EXPECT_EQ(pqxx::nontransaction(locker).exec("SELECT count(*) FROM quick.dead_items").at(0).at(0).as<int>(), 1)
      << "second's dead item 424242 was retried from main's row";
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.dead_items"), 1);
}

TEST_F(DashboardBrowserTest, WhenTheFirstDatabaseIsDownThePageOffersTheOthers) {
  enqueue_items(url(), 3, 1, "job", "alive");
  dashboard::DashboardOptions options;
  // Nothing listens on port 1: the first database, shown by default, refuses at once.
  options.databases = {{"down", "host=127.0.0.1 port=1 dbname=none connect_timeout=2"}, {"main", url()}};
  DashboardServer server(options);
  ChromeDriver driver;
  BrowserSession browser(driver);
  browser.run_before_page_scripts(kPageWatch);
  browser.navigate(server.base_url() + "/");
  ASSERT_TRUE(
      eventually([&] { return shows_substring(browser, "#status", "cannot refresh"); }, seconds(10), milliseconds(50)))
      << browser.text("#status").value_or("");
  ASSERT_TRUE(eventually([&] { return browser.exists("button.select-database[data-database='main']"); }, seconds(5),
                         milliseconds(50)))
      << "no way to the database that answers; databases: " << browser.text("#databases").value_or("(none)");
  EXPECT_THAT(browser.text("#databases tbody").value_or(""), HasSubstr("cannot read"));

  browser.click("button.select-database[data-database='main']");
  EXPECT_TRUE(
      eventually([&] { return shows(browser, "#database-name", "main") && shows(browser, "#summary-items", "3"); },
                 seconds(5), milliseconds(50)))
      << browser.text("#status").value_or("");
}

TEST_F(DashboardBrowserTest, RetryAllMatchingRetriesWhatTheSearchShowsOnceConfirmed) {
  const auto bury = [&](int id, const std::string& tenant) {
    query(
        "INSERT INTO quick.dead_items (id, tenant, job_type, priority, error_count, payload, enqueued_at, "
        "last_error, reason) VALUES (" +
        std::to_string(id) + ", '" + tenant + "', 'job', 0, 1, '{}', now(), 'boom', 'permanent failure')");
  };
  bury(101, "alpha");
  bury(201, "beta");
  bury(202, "beta");
  dashboard::DashboardOptions options;
  options.databases = {{"main", url()}};
  options.admin_token = kToken;
  DashboardServer server(options);
  ChromeDriver driver;
  BrowserSession browser(driver);
  browser.run_before_page_scripts(kPageWatch);
  browser.navigate(server.base_url() + "/");
  enter_token(browser);
  ASSERT_TRUE(eventually([&] { return shows(browser, "#mode", "actions enabled"); }, seconds(10), milliseconds(50)));

  // Search alpha's dead items; then start typing another tenant, without searching.
  browser.type("#dead-tenant", "alpha");
  browser.click("#dead-search-button");
  ASSERT_TRUE(eventually(
      [&] {
        return browser.exists("button.retry-dead[data-id='101']") &&
               !browser.exists("button.retry-dead[data-id='201']");
      },
      seconds(5), milliseconds(20)))
      << browser.text("#dead-items").value_or("");
  browser.type("#dead-tenant", "beta");
  const int searches = requests(browser, "GET /api/dead_items")["finished"].get<int>();
  ASSERT_TRUE(eventually([&] { return requests(browser, "GET /api/dead_items")["finished"] >= searches + 2; },
                         seconds(5), milliseconds(20)));
  EXPECT_TRUE(browser.exists("button.retry-dead[data-id='101']") && !browser.exists("button.retry-dead[data-id='201']"))
      << "the refresh searched what was typed, not what was searched: " << browser.text("#dead-items").value_or("");

  // "Retry all matching" retries what the search shows, once the user confirms it.
  browser.click("#retry-matching");
  const auto question = browser.dialog_text();
  EXPECT_TRUE(question.has_value()) << "no confirmation asked before retrying every dead item matching a filter";
  if (question) {
    EXPECT_THAT(*question, HasSubstr("tenant \"alpha\""));
    browser.accept_dialog();
  }
  ASSERT_TRUE(eventually([&] { return shows_substring(browser, "#message", "retried"); }, seconds(5), milliseconds(20)))
      << browser.text("#message").value_or("");
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.dead_items WHERE tenant = 'alpha'"), 0);
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.dead_items WHERE tenant = 'beta'"), 2)
      << "beta was typed but never searched";
}

TEST_F(DashboardBrowserTest, AnActionClickedTwiceRunsOnce) {
  enqueue_items(url(), 1, 1, "job", "queued");
  const auto id = query_value<std::int64_t>("SELECT id FROM quick.items");
  dashboard::DashboardOptions options;
  options.databases = {{"main", url()}};
  options.admin_token = kToken;
  options.statement_timeout = std::chrono::seconds(60);
  DashboardServer server(options);
  ChromeDriver driver;
  BrowserSession browser(driver);
  browser.run_before_page_scripts(kPageWatch);
  browser.navigate(server.base_url() + "/");
  enter_token(browser);
  ASSERT_TRUE(eventually([&] { return shows(browser, "#mode", "actions enabled"); }, seconds(10), milliseconds(50)));

  // The cancel waits for this lock (reads do not), long enough for the user to click again.
  pqxx::connection locker(url());
  pqxx::work lock(locker);
  lock.exec("LOCK TABLE quick.items IN SHARE MODE");
  browser.type("#cancel-id", std::to_string(id));
  browser.click("#cancel-button");
  ASSERT_TRUE(eventually([&] { return requests(browser, "POST /api/items/cancel")["started"] == 1; }, seconds(5),
                         milliseconds(20)));
  browser.click("#cancel-button");
  // After 20 s (2 s here) the page gives up waiting, says so, and takes actions again.
  ASSERT_TRUE(
      eventually([&] { return shows_substring(browser, "#message", "no answer"); }, seconds(5), milliseconds(20)))
      << "the page says: " << browser.text("#message").value_or("");
  EXPECT_EQ(requests(browser, "POST /api/items/cancel")["started"], 1) << "the second click sent the cancel again";
  EXPECT_THAT(browser.text("#message").value_or(""), HasSubstr("it may still take effect"));
  EXPECT_TRUE(browser.execute("return !document.getElementById('cancel-button').disabled;").get<bool>());
  lock.abort();
  EXPECT_TRUE(eventually(
      [&] { return query_value<int>("SELECT count(*) FROM quick.dead_items WHERE reason = 'cancelled'") == 1; },
      seconds(5), milliseconds(20)));
}

TEST_F(DashboardBrowserTest, WithoutTheRightTokenThePageAsksForIt) {
  dashboard::DashboardOptions options;
  options.databases = {{"main", url()}};
  options.admin_token = kToken;
  DashboardServer server(options);
  ChromeDriver driver;
  BrowserSession browser(driver);
  browser.run_before_page_scripts(kPageWatch);
  browser.navigate(server.base_url() + "/");
  ASSERT_TRUE(eventually([&] { return shows(browser, "#mode", "enter the admin token for actions"); }, seconds(10),
                         milliseconds(50)));

  // No token yet: the page says to enter it (the server would say "wrong admin token").
  browser.type("#pause-name", "acme");
  browser.click("#pause-button");
  EXPECT_TRUE(eventually([&] { return shows_substring(browser, "#message", "enter the admin token"); }, seconds(5),
                         milliseconds(20)))
      << "the page says: " << browser.text("#message").value_or("");

  // A wrong token: refused, forgotten, and asked for again rather than shown as "actions enabled".
  browser.type("#token", "not-the-token");
  browser.click("#token-save");
  browser.click("#pause-button");
  ASSERT_TRUE(eventually([&] { return shows_substring(browser, "#message", "wrong admin token"); }, seconds(5),
                         milliseconds(20)))
      << "the page says: " << browser.text("#message").value_or("");
  EXPECT_TRUE(eventually([&] { return shows(browser, "#mode", "enter the admin token for actions"); }, seconds(2),
                         milliseconds(20)))
      << "mode: " << browser.text("#mode").value_or("");
  EXPECT_TRUE(browser.execute("return sessionStorage.getItem('quick-dashboard-token');").is_null());
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.paused"), 0);
}

TEST_F(DashboardBrowserTest, EstimatedCountsGiveNoRates) {
  // Many pages of items against a budget of one page: the counts are sample estimates, which
  // differ from refresh to refresh while nothing changes in the database.
  enqueue_items(url(), 4000, 4, "bulk", "t", 1000);
  query("ANALYZE quick.items");
  dashboard::DashboardOptions options;
  options.databases = {{"main", url()}};
  options.page_budget = 1;
  DashboardServer server(options);
  ChromeDriver driver;
  BrowserSession browser(driver);
  browser.run_before_page_scripts(kPageWatch);
  browser.navigate(server.base_url() + "/");
  ASSERT_TRUE(
      eventually([&] { return shows_substring(browser, "#job-types tbody", "bulk"); }, seconds(10), milliseconds(50)));
  EXPECT_THAT(browser.text("#job-types tbody").value_or(""), HasSubstr("≈"));

  // Nothing changes in the database: no rate may say it does.
  std::set<std::string> rates;
  const auto until = Clock::now() + seconds(3);
  while (Clock::now() < until) {
    for (const auto& rate : browser.execute("return Array.from(document.querySelectorAll('#job-types tbody tr'), "
                                            "(tr) => tr.cells[6] ? tr.cells[6].textContent : '');")) {
      rates.insert(rate.get<std::string>());
    }
    std::this_thread::sleep_for(milliseconds(100));
  }
  rates.erase("");  // a refresh whose sample found no item: no row
  for (const auto& rate : rates) {
    EXPECT_TRUE(rate == "–" || rate == "0.00") << "items/s " << rate << " from estimates of an unchanging queue";
  }
}

TEST_F(DashboardBrowserTest, TheDeadItemsRefreshDoesNotDownloadWholePayloads) {
  // Twenty dead items of 100 kB each: 2 MB that a refresh every 5 s would download again.
  query(
      "INSERT INTO quick.dead_items (id, tenant, job_type, priority, error_count, payload, enqueued_at, last_error, "
      "reason) SELECT g, 'big', 'job', 0, 1, jsonb_build_object('blob', repeat('x', 100000), 'n', g), now(), "
      "'boom', 'permanent failure' FROM generate_series(1, 20) g");
  dashboard::DashboardOptions options;
  options.databases = {{"main", url()}};
  DashboardServer server(options);
  ChromeDriver driver;
  BrowserSession browser(driver);
  browser.navigate(server.base_url() + "/");
  ASSERT_TRUE(
      eventually([&] { return browser.exists("button.retry-dead[data-id='20']"); }, seconds(10), milliseconds(50)));
  const auto sizes = browser.execute(
      "return performance.getEntriesByType('resource').filter((e) => e.name.includes('/api/dead_items'))"
      ".map((e) => e.decodedBodySize);");
  ASSERT_FALSE(sizes.empty());
  for (const auto& size : sizes) EXPECT_LT(size.get<double>(), 64 * 1024) << "bytes of one dead items search";
  // The payload cell shows its beginning, and says there is more.
  const auto payload = browser.text("#dead-items tbody tr td.payload").value_or("");
  EXPECT_THAT(payload, HasSubstr("{\"n\": 20, \"blob\": \"xxx"));
  EXPECT_THAT(
      browser.execute("return document.querySelector('#dead-items tbody tr td.payload').title;").get<std::string>(),
      HasSubstr(query_value<std::string>("SELECT octet_length(payload::text) FROM quick.dead_items WHERE id = 20") +
                " bytes"));
}

TEST_F(DashboardBrowserTest, CheckedDeadItemsStayCheckedWhenTheTableIsRedrawn) {
  query(
      "INSERT INTO quick.dead_items (id, tenant, job_type, priority, error_count, payload, enqueued_at, last_error, "
      "reason) SELECT g, 't' || g, 'job', 0, 1, '{}', now(), 'boom', 'permanent failure' "
      "FROM generate_series(1, 3) g");
  dashboard::DashboardOptions options;
  options.databases = {{"main", url()}};
  options.admin_token = kToken;
  DashboardServer server(options);
  ChromeDriver driver;
  BrowserSession browser(driver);
  browser.navigate(server.base_url() + "/");
  enter_token(browser);
  ASSERT_TRUE(
      eventually([&] { return shows(browser, "#mode", "actions enabled") && browser.exists("input.select-dead"); },
                 seconds(10), milliseconds(50)));

  // Item 1 checked, then item 3 retried from its row: the table is drawn again without item 3.
  browser.click("input.select-dead[data-id='1']");
  browser.click("button.retry-dead[data-id='3']");
  ASSERT_TRUE(eventually([&] { return shows_substring(browser, "#message", "retried 1 dead item"); }, seconds(5),
                         milliseconds(20)));
  ASSERT_FALSE(browser.exists("input.select-dead[data-id='3']"));
  const auto checked = browser.execute(
      "return Array.from(document.querySelectorAll('input.select-dead:checked'), (box) => box.dataset.id);");
  EXPECT_EQ(checked, nlohmann::json::array({"1"})) << "the user's selection was lost";

  browser.click("#retry-selected");
  ASSERT_TRUE(eventually([&] { return query_value<int>("SELECT count(*) FROM quick.dead_items") == 1; }, seconds(5),
                         milliseconds(20)));
  EXPECT_EQ(query_value<int>("SELECT id FROM quick.dead_items"), 2);
}

TEST_F(DashboardBrowserTest, TheDatabaseChosenIsStillShownAfterAReload) {
  EmptyDatabase second;
  {
    pqxx::connection conn(second.url());
    migrate(conn);
  }
  enqueue_items(url(), 2, 1, "job", "first-db");
  enqueue_items(second.url(), 7, 2, "job", "second-db");
  dashboard::DashboardOptions options;
  options.databases = {{"main", url()}, {"second", second.url()}};
  DashboardServer server(options);
  ChromeDriver driver;
  BrowserSession browser(driver);
  browser.navigate(server.base_url() + "/");
  ASSERT_TRUE(eventually([&] { return browser.exists("button.select-database[data-database='second']"); }, seconds(10),
                         milliseconds(50)));
  browser.click("button.select-database[data-database='second']");
  ASSERT_TRUE(
      eventually([&] { return shows(browser, "#database-name", "second") && shows(browser, "#summary-items", "7"); },
                 seconds(5), milliseconds(20)));

  // A reload (or a tab the browser discarded and loads again) shows the database chosen.
  browser.navigate(browser.execute("return location.href;").get<std::string>());
  ASSERT_TRUE(eventually([&] { return shows(browser, "#summary-items", "7") || shows(browser, "#summary-items", "2"); },
                         seconds(10), milliseconds(20)));
  EXPECT_TRUE(shows(browser, "#database-name", "second") && shows(browser, "#summary-items", "7"))
      << browser.text("#database-name").value_or("?") << ": " << browser.text("#summary-items").value_or("?");

  // A link to a database this dashboard does not show falls back to the first, saying so.
  browser.navigate(server.base_url() + "/#database=gone");
  EXPECT_TRUE(
      eventually([&] { return shows(browser, "#database-name", "main") && shows(browser, "#summary-items", "2"); },
                 seconds(10), milliseconds(20)))
      << browser.text("#database-name").value_or("?") << ": " << browser.text("#status").value_or("?");
  EXPECT_THAT(browser.text("#message").value_or(""), HasSubstr("gone"));
}

TEST_F(DashboardBrowserTest, EveryControlHasANameThatSaysWhatItActsOn) {
  query(
      "INSERT INTO quick.dead_items (id, tenant, job_type, priority, error_count, payload, enqueued_at, last_error, "
      "reason) VALUES (77, 'acme', 'send-invoice', 0, 1, '{}', now(), 'boom', 'permanent failure')");
  enqueue_items(url(), 3, 1, "resize-image", "shop");
  dashboard::DashboardOptions options;
  options.databases = {{"main", url()}};
  options.admin_token = kToken;
  DashboardServer server(options);
  ChromeDriver driver;
  BrowserSession browser(driver);
  browser.navigate(server.base_url() + "/");
  ASSERT_TRUE(eventually([&] { return browser.exists("input.select-dead") && browser.exists("button.pause"); },
                         seconds(10), milliseconds(50)));
  // What a screen reader announces: something for every control, and for the buttons and boxes
  // of a row, what they act on (not "Pause" five times over).
  for (const std::string css : {"input", "select", "button"}) {
    for (const auto& name : browser.accessible_names(css)) EXPECT_NE(name, "") << "a nameless " << css;
  }
  using ::testing::Contains;
  const auto row_buttons = browser.accessible_names("button.row-action");
  EXPECT_THAT(row_buttons, Contains("Pause job type resize-image"));
  EXPECT_THAT(row_buttons, Contains("Pause tenant shop0"));
  EXPECT_THAT(row_buttons, Contains("Retry dead item 77"));
  EXPECT_THAT(browser.accessible_names("input.select-dead"), Contains("Select dead item 77"));
}

TEST_F(DashboardBrowserTest, EveryCountOfACappedZoneSaysItIsALowerBound) {
  // A zone past the 100,000 rows its counts read, every item vested and every other one failing:
  // of each count (and of its oldest item's age) the page shows what the first 100,000 rows hold,
  // and must not pass it as exact.
  query(
      "INSERT INTO quick.items (tenant, job_type, vesting_time, zone_time, error_count) "
      "SELECT 'huge', 'job', now() - interval '1 hour', now() - interval '1 hour', g % 2 "
      "FROM generate_series(1, 100010) g");
  query(
      "INSERT INTO quick.pointers (tenant, vesting_time, last_active_time) VALUES ('huge', now() - interval '1 hour', "
      "now())");
  dashboard::DashboardOptions options;
  options.databases = {{"main", url()}};
  DashboardServer server(options);
  ChromeDriver driver;
  BrowserSession browser(driver);
  browser.navigate(server.base_url() + "/");
  const auto row_cells = [&](const std::string& table) {
    return browser.execute(
        "const tr = document.querySelector('#' + arguments[0] + ' tbody tr');"
        "return tr && tr.cells.length > 1 ? Array.from(tr.cells, (td) => td.textContent) : null;",
        {table});
  };
  ASSERT_TRUE(eventually([&] { return !row_cells("deepest-zones").is_null() && !row_cells("lagging-zones").is_null(); },
                         seconds(10), milliseconds(50)));
  const auto deepest = row_cells("deepest-zones");
  EXPECT_EQ(deepest[1], "100,000+");
  EXPECT_EQ(deepest[2], "100,000+") << "vested: " << deepest;
  EXPECT_EQ(deepest[3], "0+") << "leased: " << deepest;
  EXPECT_EQ(deepest[4], "50,000+") << "failing: " << deepest;
  EXPECT_EQ(deepest[5].get<std::string>().back(), '+') << "oldest item age, of the first rows only: " << deepest;
  const auto lagging = row_cells("lagging-zones");
  EXPECT_EQ(lagging[3], "100,000+");
  EXPECT_EQ(lagging[4], "100,000+") << "vested: " << lagging;
  EXPECT_EQ(lagging[5], "50,000+") << "failing: " << lagging;
  EXPECT_EQ(lagging[6].get<std::string>().back(), '+') << "oldest item age: " << lagging;
}

TEST_F(DashboardBrowserTest, AReadOnlyDashboardShowsNeitherTheTokenFieldNorActions) {
  query(
      "INSERT INTO quick.dead_items (id, tenant, job_type, priority, error_count, payload, enqueued_at, last_error, "
      "reason) VALUES (5, 'acme', 'job', 0, 1, '{}', now(), 'boom', 'permanent failure')");
  dashboard::DashboardOptions options;
  options.databases = {{"main", url()}};  // no admin token: read-only
  DashboardServer server(options);
  ChromeDriver driver;
  BrowserSession browser(driver);
  browser.navigate(server.base_url() + "/");
  ASSERT_TRUE(eventually([&] { return shows(browser, "#mode", "read-only") && browser.exists("button.retry-dead"); },
                         seconds(10), milliseconds(50)));
  const auto shown = [&](const std::string& css) {
    return browser
        .execute("const e = document.querySelector(arguments[0]); return !!e && e.getClientRects().length > 0;", {css})
        .get<bool>();
  };
  EXPECT_FALSE(shown("#token-form")) << "a token field on a dashboard that takes no token";
  EXPECT_FALSE(shown("#token"));
  EXPECT_FALSE(shown("button.retry-dead"));
  EXPECT_FALSE(shown("#pause-button"));
  EXPECT_FALSE(shown("#pause-name")) << "a form whose button is not there";
  EXPECT_FALSE(shown("input.select-dead"));
  EXPECT_TRUE(shown("#dead-search-button"));
}

}  // namespace
}  // namespace quick::testing
