// quick::MetricsServer and quick::Metrics (include/quick/metrics.h) against a real database: a
// consumer's counters and histograms per job type scraped over HTTP, the database gauges of a known
// queue state, bounded per-tenant series, a query rate independent of the scrape rate, an
// unreachable database reported rather than thrown, and the server's lifecycle.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <httplib.h>

#include <limits>
#include <set>

#include "quick/quick.h"
#include "support/consumer_helpers.h"
#include "support/eventually.h"
#include "support/metrics_text.h"
#include "support/silent_listener.h"
#include "support/test_database.h"

namespace quick {
namespace {

using namespace testing;
using ::testing::HasSubstr;

// GET /metrics from a running server.
MetricsPage scrape(int port, std::string* content_type = nullptr) {
  httplib::Client client("127.0.0.1", port);
  client.set_read_timeout(20, 0);
  const auto response = client.Get("/metrics");
  if (!response) {
    ADD_FAILURE() << "no answer from 127.0.0.1:" << port;
    return {};
  }
  EXPECT_EQ(response->status, 200) << response->body;
  if (content_type) *content_type = response->get_header_value("Content-Type");
  return parse_metrics(response->body);
}

MetricsOptions local_options() {
  MetricsOptions options;
  options.address = "127.0.0.1:0";
  return options;
}

class MetricsServerTest : public DatabaseTest {
 protected:
  // A consumer with one handler, never started: the metrics read its configuration and counters.
  static std::unique_ptr<Consumer> idle_consumer(const std::string& database_url, const std::string& id) {
    auto consumer = std::make_unique<Consumer>(fast_config(database_url, id));
    consumer->handle("job", [](JobContext&) { return JobResult::done(); });
    return consumer;
  }
  // One render of a new Metrics of an idle consumer of this test's database.
  MetricsPage render_once(const MetricsOptions& options) const {
    const auto consumer = idle_consumer(url(), "gauges");
    Metrics metrics(*consumer, options);
    return parse_metrics(metrics.render());
  }
};

TEST_F(MetricsServerTest, ScrapedCountersAndHistogramsMatchWhatTheConsumerDidPerJobType) {
  enqueue_items(url(), 20, 5, "ok");
  enqueue_items(url(), 3, 3, "fail", "f");
  enqueue_items(url(), 2, 2, "mystery", "m");  // no handler: dead-lettered under "(other)"
  auto config = fast_config(url(), "metrics-consumer");
  config.unhandled_job_types = UnhandledJobTypeAction::kDeadLetter;
  Consumer consumer(config);
  consumer.handle("ok", [](JobContext&) { return JobResult::done(); });
  consumer.handle("fail", [](JobContext&) { return JobResult::permanent_failure("never works"); });
  MetricsServer server(consumer, local_options());
  server.start();
  ASSERT_GT(server.port(), 0);
  consumer.start();
  ASSERT_TRUE(eventually(
      [&] {
        const auto stats = consumer.stats();
        return stats.items_done == 20 && stats.items_dead == 5;
      },
      seconds(30)))
      << consumer.stats().to_string();

  std::string content_type;
  const auto page = scrape(server.port(), &content_type);
  EXPECT_EQ(content_type.rfind("text/plain; version=0.0.4", 0), 0u) << content_type;

  const std::string ok = R"({consumer="metrics-consumer",job_type="ok"})";
  const std::string fail = R"({consumer="metrics-consumer",job_type="fail"})";
  const std::string other = R"x({consumer="metrics-consumer",job_type="(other)"})x";
  EXPECT_EQ(page.at("quick_items_done_total" + ok), 20);
  EXPECT_EQ(page.at("quick_items_dead_total" + ok), 0);
  EXPECT_EQ(page.at("quick_items_dead_total" + fail), 3);
  EXPECT_EQ(page.at("quick_items_dead_total" + other), 2);
  EXPECT_FALSE(page.has(R"(quick_items_done_total{consumer="metrics-consumer",job_type="mystery"})"));
  EXPECT_EQ(page.types.at("quick_items_done_total"), "counter");
  EXPECT_EQ(page.help.count("quick_items_done_total"), 1u);
  for (const auto& [family, lines] : page.type_lines) EXPECT_EQ(lines, 1) << family << " has several # TYPE lines";

  // Histograms: cumulative buckets ending in +Inf == _count; _sum present.
  EXPECT_EQ(page.types.at("quick_handler_duration_seconds"), "histogram");
  for (const std::string family : {"quick_handler_duration_seconds", "quick_pickup_latency_seconds"}) {
    const std::string labels = R"(consumer="metrics-consumer",job_type="ok")";
    double previous = 0;
    int buckets = 0;
    for (const auto& series : page.series_of(family + "_bucket")) {
      if (series.find(labels) == std::string::npos) continue;
      EXPECT_GE(page.at(series), previous) << series << " is not cumulative";
      previous = page.at(series);
      ++buckets;
    }
    EXPECT_EQ(buckets, static_cast<int>(kLatencyBucketBoundsMs.size()) + 1);
    EXPECT_EQ(page.at(family + "_bucket{" + labels + R"(,le="+Inf"})"), 20);
    EXPECT_EQ(page.at(family + "_count{" + labels + "}"), 20);
    EXPECT_TRUE(page.has(family + "_sum{" + labels + "}"));
    EXPECT_TRUE(page.has(family + "_bucket{" + labels + R"(,le="0.001"})"));
    EXPECT_TRUE(page.has(family + "_bucket{" + labels + R"(,le="60"})"));
  }
  const std::string consumer_label = R"({consumer="metrics-consumer"})";
  EXPECT_GE(page.at("quick_visits_total" + consumer_label), 1);
  EXPECT_GE(page.at("quick_pointer_leases_won_total" + consumer_label), 1);
  EXPECT_TRUE(page.has("quick_items_in_flight" + consumer_label));
  EXPECT_TRUE(page.has("quick_items_buffered" + consumer_label));
  EXPECT_TRUE(page.has("quick_reconnects_total" + consumer_label));
  EXPECT_EQ(page.at(R"(quick_database_up{database="main"})"), 1);
  EXPECT_EQ(page.at(R"(quick_database_dead_items{database="main"})"), 5);  // "fail" and "mystery"
  server.stop();
  consumer.stop();
}

// Sets up a known queue state by hand (as the admin role) and reads it through Metrics::render().
TEST_F(MetricsServerTest, DatabaseGaugesReflectAKnownQueueStateWithBoundedTenantSeries) {
  enqueue_items(url(), 5, 1, "job", "deep");
  enqueue_items(url(), 4, 4, "job", "small");
  enqueue_items(url(), 1, 1, "job", "old");
  enqueue_items(url(), 1, 1, "job", "leased");
  enqueue_items(url(), 1, 1, "job", "later");
  query(
      "UPDATE quick.items SET vesting_time = now() - interval '200 seconds', zone_time = now() - interval '200 "
      "seconds' "
      "WHERE tenant = 'old0'");
  query("UPDATE quick.pointers SET vesting_time = now() - interval '100 seconds' WHERE tenant = 'old0'");
  query(
      "UPDATE quick.items SET lease_id = gen_random_uuid(), vesting_time = now() + interval '1 hour' "
      "WHERE tenant = 'leased0'");
  query(
      "UPDATE quick.items SET vesting_time = now() + interval '1 hour', zone_time = now() + interval '1 hour' "
      "WHERE tenant = 'later0'");
  query("UPDATE quick.pointers SET vesting_time = now() + interval '1 hour' WHERE tenant IN ('leased0', 'later0')");
  query(
      "INSERT INTO quick.dead_items (id, tenant, job_type, priority, error_count, payload, enqueued_at, reason) "
      "VALUES (-1, 'gone', 'job', 0, 1, '{}', now(), 'test')");
  query("SELECT quick.pause_tenant('later0'), quick.pause_job_type('unused')");

  MetricsOptions options;
  options.top_tenants = 2;
  const auto page = render_once(options);

  const std::string db = R"({database="main"})";
  EXPECT_EQ(page.at("quick_database_up" + db), 1);
  EXPECT_EQ(page.at("quick_database_items" + db), 12);
  EXPECT_EQ(page.at("quick_database_vested_items" + db), 10);
  EXPECT_EQ(page.at("quick_database_leased_items" + db), 1);
  EXPECT_EQ(page.at("quick_database_exact_items" + db), 1);
  EXPECT_EQ(page.at("quick_database_zones" + db), 8);
  EXPECT_EQ(page.at("quick_database_dead_items" + db), 1);
  EXPECT_GE(page.at("quick_database_oldest_vested_item_age_seconds" + db), 200);
  EXPECT_LT(page.at("quick_database_oldest_vested_item_age_seconds" + db), 260);
  EXPECT_GE(page.at("quick_database_max_pointer_lag_seconds" + db), 100);
  EXPECT_LT(page.at("quick_database_max_pointer_lag_seconds" + db), 160);
  EXPECT_EQ(page.at("quick_database_paused_tenants" + db), 1);
  EXPECT_EQ(page.at("quick_database_paused_job_types" + db), 1);
  EXPECT_EQ(page.types.at("quick_database_items"), "gauge");

  // Per tenant: the 2 deepest and the 2 oldest zones, no more.
  std::set<std::string> tenants;
  for (const auto& series : page.series_of("quick_tenant_items")) tenants.insert(series);
  EXPECT_LE(tenants.size(), 4u);
  EXPECT_EQ(page.at(R"(quick_tenant_items{database="main",tenant="deep0"})"), 5);
  EXPECT_EQ(page.at(R"(quick_tenant_items{database="main",tenant="old0"})"), 1);
  EXPECT_GE(page.at(R"(quick_tenant_pointer_lag_seconds{database="main",tenant="old0"})"), 100);
  EXPECT_EQ(page.series_of("quick_tenant_pointer_lag_seconds").size(), tenants.size());
}

// The per-tenant series change from round to round, so operations.md offers top_tenants 0 to turn
// them off: then there are none, and the database-wide gauges are all there.
TEST_F(MetricsServerTest, TopTenantsZeroLeavesOutEveryPerTenantSeries) {
  enqueue_items(url(), 6, 3, "job");
  query("UPDATE quick.pointers SET vesting_time = now() - interval '100 seconds'");
  MetricsOptions options;
  options.top_tenants = 0;
  const auto page = render_once(options);
  const std::string db = R"({database="main"})";
  EXPECT_TRUE(page.series_of("quick_tenant_items").empty());
  EXPECT_TRUE(page.series_of("quick_tenant_pointer_lag_seconds").empty());
  EXPECT_EQ(page.at("quick_database_items" + db), 6);
  EXPECT_EQ(page.at("quick_database_zones" + db), 3);
  EXPECT_GE(page.at("quick_database_max_pointer_lag_seconds" + db), 100);
}

TEST_F(MetricsServerTest, CountsAboveTheCountLimitAreEstimatedAndSaySo) {
  enqueue_items(url(), 10, 10, "job");
  MetricsOptions options;
  options.count_limit = 3;
  const auto page = render_once(options);
  const std::string db = R"({database="main"})";
  EXPECT_EQ(page.at("quick_database_up" + db), 1);
  EXPECT_EQ(page.at("quick_database_exact_items" + db), 0);
  EXPECT_GE(page.at("quick_database_items" + db), 4);
  EXPECT_EQ(page.at("quick_database_exact_zones" + db), 0);
  EXPECT_GE(page.at("quick_database_zones" + db), 4);
  EXPECT_EQ(page.at("quick_database_exact_dead_items" + db), 1);
}

TEST_F(MetricsServerTest, ScrapesDoNotDriveTheQueryRate) {
  const auto idle = idle_consumer(url(), "rate");
  const Consumer& consumer = *idle;
  auto options = local_options();
  options.min_query_interval = std::chrono::hours(1);
  MetricsServer server(consumer, options);
  server.start();
  for (int i = 0; i < 20; ++i) scrape(server.port());
  EXPECT_EQ(server.metrics().database_query_rounds(), 1u);
  EXPECT_EQ(scrape(server.port()).at(R"(quick_metrics_database_queries_total{database="main"})"), 1);

  // A short interval: at most one round per interval however fast the scrapes come.
  options.min_query_interval = milliseconds(300);
  Metrics metrics(consumer, options);
  const auto start = Clock::now();
  int renders = 0;
  while (Clock::now() - start < milliseconds(1000)) {
    metrics.render();
    ++renders;
  }
  const auto elapsed = std::chrono::duration_cast<milliseconds>(Clock::now() - start).count();
  EXPECT_GT(renders, 20);
  EXPECT_GE(metrics.database_query_rounds(), 2u);
  EXPECT_LE(metrics.database_query_rounds(), static_cast<std::uint64_t>(elapsed / 300 + 1));
}

TEST_F(MetricsServerTest, AnUnreachableDatabaseIsReportedDownNotThrown) {
  const auto idle = idle_consumer("host=127.0.0.1 port=1 dbname=nowhere user=nobody connect_timeout=2", "down");
  const Consumer& consumer = *idle;
  MetricsServer server(consumer, local_options());
  server.start();
  const auto page = scrape(server.port());
  EXPECT_EQ(page.at(R"(quick_database_up{database="main"})"), 0);
  EXPECT_FALSE(page.has(R"(quick_database_items{database="main"})"));
  EXPECT_TRUE(page.has(R"(quick_scans_total{consumer="down"})"));
}

// Two databases that take connections and never answer (a hung server, a proxy in front of a
// vanished one), beside a healthy one: the databases are queried at once, and a render waits for
// no round longer than query_timeout after its start. Before, they were queried one after the
// other, each for its whole connect_timeout (6 s here): the render took 12 s, past Prometheus's
// default scrape timeout of 10 s, so that quick_database_up 0 never reached it.
TEST_F(MetricsServerTest, DatabasesThatNeverAnswerDoNotHoldUpTheRender) {
  auto first_silent = std::make_unique<SilentListener>();
  auto second_silent = std::make_unique<SilentListener>();
  auto config = fast_config(url(), "silent");
  config.databases = {DatabaseConfig{"silent1", first_silent->url() + " connect_timeout=6"},
                      DatabaseConfig{"main", url()},
                      DatabaseConfig{"silent2", second_silent->url() + " connect_timeout=6"}};
  Consumer consumer(config);
  consumer.handle("job", [](JobContext&) { return JobResult::done(); });
  MetricsOptions options;
  options.query_timeout = seconds(3);
  Metrics metrics(consumer, options);

  const auto render_ms = [&](MetricsPage& page) {
    const auto start = Clock::now();
    page = parse_metrics(metrics.render());
    return std::chrono::duration_cast<milliseconds>(Clock::now() - start).count();
  };
  MetricsPage page;
  EXPECT_LT(render_ms(page), 8000) << "the render waited for the silent databases one after the other";
  for (const std::string silent : {"silent1", "silent2"}) {
    const std::string db = R"({database=")" + silent + R"("})";
    EXPECT_EQ(page.at("quick_database_up" + db), 0) << silent;
    EXPECT_FALSE(page.has("quick_database_items" + db)) << silent;
    EXPECT_FALSE(page.has("quick_database_query_seconds" + db)) << silent;
    EXPECT_EQ(page.at("quick_metrics_database_queries_total" + db), 1) << silent;
  }
  const std::string main = R"({database="main"})";
  EXPECT_EQ(page.at("quick_database_up" + main), 1);
  EXPECT_EQ(page.at("quick_database_items" + main), 0);
  EXPECT_TRUE(page.has("quick_database_query_seconds" + main));
  EXPECT_TRUE(page.has(R"(quick_scans_total{consumer="silent"})"));

  // The next render does not wait again for rounds already past query_timeout: still down, and
  // no second round of theirs started while the first is running.
  EXPECT_LT(render_ms(page), 2000);
  EXPECT_EQ(page.at(R"(quick_database_up{database="silent1"})"), 0);
  EXPECT_EQ(page.at(R"(quick_metrics_database_queries_total{database="silent1"})"), 1);
  EXPECT_EQ(page.at("quick_database_up" + main), 1);
  // Closing the listeners ends the rounds still connecting, so that the Metrics go away promptly.
  first_silent.reset();
  second_silent.reset();
}

TEST_F(MetricsServerTest, StopIsPromptAndIdempotentAndBadAddressesAreRefused) {
  const auto idle = idle_consumer(url(), "lifecycle");
  const Consumer& consumer = *idle;
  {
    MetricsServer never_started(consumer, local_options());
    never_started.stop();
    EXPECT_EQ(never_started.port(), 0);
  }
  MetricsServer server(consumer, local_options());
  server.start();
  server.start();
  const int port = server.port();
  scrape(port);
  const auto before = Clock::now();
  server.stop();
  EXPECT_LT(Clock::now() - before, seconds(2));
  server.stop();
  httplib::Client client("127.0.0.1", port);
  client.set_connection_timeout(1, 0);
  EXPECT_FALSE(client.Get("/metrics")) << "still serving after stop()";

  // The same port twice: the second cannot bind.
  MetricsServer first(consumer, local_options());
  first.start();
  auto taken = local_options();
  taken.address = "127.0.0.1:" + std::to_string(first.port());
  MetricsServer second(consumer, taken);
  EXPECT_THROW(second.start(), Error);
  second.stop();

  for (const std::string bad : {"9464", "127.0.0.1:", "127.0.0.1:99999", "127.0.0.1:http", ":9464"}) {
    auto options = local_options();
    options.address = bad;
    EXPECT_THROW(MetricsServer(consumer, options), InvalidArgument) << bad;
  }
  auto options = local_options();
  options.top_tenants = -1;
  EXPECT_THROW(Metrics(consumer, options), InvalidArgument);
}

// count_limit + 1 rows are counted: at INT_MAX that overflowed quick.queue_metrics's integer
// arithmetic, and the database was reported down on every round. Now the options refuse it.
TEST_F(MetricsServerTest, ACountLimitAboveAMillionIsRefusedNamingTheOption) {
  const auto idle = idle_consumer(url(), "limits");
  const Consumer& consumer = *idle;
  for (const int bad : {0, -1, 1'000'001, std::numeric_limits<int>::max()}) {
    MetricsOptions options;
    options.count_limit = bad;
    try {
      Metrics metrics(consumer, options);
      ADD_FAILURE() << "count_limit " << bad << " was accepted";
    } catch (const InvalidArgument& error) {
      EXPECT_THAT(error.what(),
                  HasSubstr("MetricsOptions::count_limit must be from 1 to 1000000, got " + std::to_string(bad)));
    }
  }
  MetricsOptions largest;
  largest.count_limit = 1'000'000;
  Metrics metrics(consumer, largest);
  const auto page = parse_metrics(metrics.render());
  EXPECT_EQ(page.at(R"(quick_database_up{database="main"})"), 1);
  EXPECT_EQ(page.at(R"(quick_database_exact_items{database="main"})"), 1);
}

}  // namespace
}  // namespace quick
