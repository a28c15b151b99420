// quick demo: the main job, end to end. On its own database (quick_demo, next to the configured
// or local one, recreated each run so it never touches real work), it enqueues a backlog for a
// few noisy tenants, runs two consumers while a producer trickles single jobs in for many quiet
// tenants, prints progress every second, and ends with a summary that shows whether the quiet
// tenants were served promptly while the noisy backlog drained.
#include <atomic>
#include <iomanip>
#include <iostream>
#include <random>
#include <thread>

#include "cli/commands.h"
#include "cli/database_target.h"
#include "cli/table_printer.h"
#include "quick/consumer.h"
#include "quick/database.h"
#include "quick/migrate.h"
#include "quick/producer.h"
#include "util/latency_histogram.h"
#include "util/redact.h"

namespace quick::cli {
namespace {

constexpr const char* kDemoDatabase = "quick_demo";

struct DemoOptions {
  DatabaseOptions database;
  int noisy_tenants = 3;
  int noisy_backlog = 2000;  // items per noisy tenant, enqueued up front
  int quiet_tenants = 300;
  double quiet_rate = 40;  // quiet items per second, each for a random quiet tenant
  int seconds = 12;        // how long the producer runs
  int job_ms = 5;          // simulated work per item
  int consumers = 2;
  int workers = 4;  // per consumer
};

struct DemoLatencies {
  util::LatencyHistogram noisy, quiet;
  std::atomic<int> noisy_done{0}, quiet_done{0};
};

std::string recreate_demo_database(const std::string& url) {
  auto admin = connect(url);
  pqxx::nontransaction session(*admin);
  session.exec("DROP DATABASE IF EXISTS " + session.quote_name(kDemoDatabase) + " WITH (FORCE)");
  session.exec("CREATE DATABASE " + session.quote_name(kDemoDatabase));
  const std::string demo_url = with_database_name(url, kDemoDatabase);
  auto conn = connect(demo_url);
  migrate(*conn);
  return demo_url;
}

void enqueue_backlog(pqxx::connection& conn, const DemoOptions& options) {
  for (int t = 0; t < options.noisy_tenants; ++t) {
    pqxx::work txn(conn);
    std::vector<NewItem> batch;
    for (int i = 0; i < options.noisy_backlog; ++i) {
      NewItem item;
      item.tenant = "noisy-" + std::to_string(t);
      item.job_type = "render";
      item.payload = R"({"page":)" + std::to_string(i) + "}";
      batch.push_back(std::move(item));
      if (batch.size() == 1000) {
        enqueue_batch_in(txn, batch);
        batch.clear();
      }
    }
    if (!batch.empty()) enqueue_batch_in(txn, batch);
    txn.commit();
  }
}

// One quiet job at a time, each in its own transaction, like an application serving requests.
void produce_quiet_jobs(const std::string& url, const DemoOptions& options, std::atomic<bool>& running,
                        std::atomic<int>& produced) {
  auto conn = connect(url);
  std::mt19937 random(7);
  std::uniform_int_distribution<int> tenant(0, options.quiet_tenants - 1);
  const auto period = std::chrono::microseconds(static_cast<long long>(1e6 / options.quiet_rate));
  // Each job commits at once, so a parked zone's pointer is moved in its transaction (protocol.md).
  EnqueueOptions pull;
  pull.pull_in_transaction = true;
  auto next = std::chrono::steady_clock::now();
  while (running.load()) {
    NewItem item;
    item.tenant = "quiet-" + std::to_string(tenant(random));
    item.job_type = "notify";
    item.payload = R"({"n":)" + std::to_string(produced.load()) + "}";
    pqxx::work txn(*conn);
    enqueue_in(txn, item, pull);
    txn.commit();
    ++produced;
    next += period;
    std::this_thread::sleep_until(next);
  }
}

ConsumerConfig demo_consumer_config(const std::string& url, const DemoOptions& options, int index) {
  ConsumerConfig config;
  config.consumer_id = "demo-consumer-" + std::to_string(index + 1);
  config.databases.push_back(DatabaseConfig{"demo", url});
  config.worker.threads = options.workers;
  config.manager.min_inactive = std::chrono::seconds(5);
  return config;
}

Handler simulated_work(const DemoOptions& options, DemoLatencies& latencies) {
  return [&options, &latencies](JobContext& job) {
    const bool quiet = job.item().tenant.rfind("quiet-", 0) == 0;
    (quiet ? latencies.quiet : latencies.noisy).record(job.waited());
    std::this_thread::sleep_for(std::chrono::milliseconds(options.job_ms));
    ++(quiet ? latencies.quiet_done : latencies.noisy_done);
    return JobResult::done();
  };
}

std::string ms(double value) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(1) << value << " ms";
  return out.str();
}

int run_demo(const DemoOptions& options) {
  const auto target = resolve_database(options.database);
  const std::string url = recreate_demo_database(target.url);
  std::cout << "demo database: " << util::redact_passwords(url)
            << (target.local ? "  (local cluster; `build/quick db stop` stops it)" : "") << "\n\n";
  auto conn = connect(url);
  const int backlog = options.noisy_tenants * options.noisy_backlog;
  enqueue_backlog(*conn, options);
  std::cout << "enqueued a backlog of " << backlog << " jobs for " << options.noisy_tenants << " noisy tenants; now "
            << options.quiet_rate << " jobs/s arrive for " << options.quiet_tenants << " quiet tenants, for "
            << options.seconds << " s.\n"
            << options.consumers << " consumers x " << options.workers << " workers; each job takes " << options.job_ms
            << " ms.\n\n";

  DemoLatencies latencies;
  std::vector<std::unique_ptr<Consumer>> consumers;
  for (int i = 0; i < options.consumers; ++i) {
    consumers.push_back(std::make_unique<Consumer>(demo_consumer_config(url, options, i)));
    consumers.back()->handle("render", simulated_work(options, latencies));
    consumers.back()->handle("notify", simulated_work(options, latencies));
    consumers.back()->start();
  }
  std::atomic<bool> producing{true};
  std::atomic<int> produced{0};
  std::thread producer([&] { produce_quiet_jobs(url, options, producing, produced); });

  const auto start = std::chrono::steady_clock::now();
  std::optional<double> noisy_drained_at;
  int last_done = 0;
  pqxx::nontransaction session(*conn);
  for (int second = 1;; ++second) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    if (second == options.seconds) producing.store(false);
    const int done = latencies.noisy_done.load() + latencies.quiet_done.load();
    const int queued = session.exec("SELECT count(*) FROM quick.items").at(0)[0].as<int>();
    const int noisy_left = backlog - latencies.noisy_done.load();
    if (noisy_left <= 0 && !noisy_drained_at) {
      noisy_drained_at = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    const auto quiet = latencies.quiet.summary();
    std::cout << std::setw(3) << second << "s  done/s " << std::setw(5) << done - last_done << "  queued "
              << std::setw(6) << queued << "  noisy left " << std::setw(6) << std::max(0, noisy_left) << "  quiet jobs "
              << std::setw(4) << quiet.count << "  quiet pickup p50 " << ms(quiet.p50_ms) << "  p99 "
              << ms(quiet.p99_ms) << std::endl;
    last_done = done;
    if (second >= options.seconds && queued == 0) break;
    if (second >= options.seconds + 60) {
      std::cout << "giving up waiting for the queue to drain" << std::endl;
      break;
    }
  }
  producer.join();
  for (auto& consumer : consumers) consumer->stop();

  const auto noisy = latencies.noisy.summary();
  const auto quiet = latencies.quiet.summary();
  std::cout << "\n== summary\n"
            << " tenants        | jobs   | pickup p50 | pickup p99 | pickup max\n"
            << " quiet (" << std::setw(4) << options.quiet_tenants << ")   | " << std::setw(6) << quiet.count << " | "
            << std::setw(10) << ms(quiet.p50_ms) << " | " << std::setw(10) << ms(quiet.p99_ms) << " | "
            << ms(quiet.max_ms) << "\n"
            << " noisy (" << std::setw(3) << options.noisy_tenants << ")   | " << std::setw(6) << noisy.count << " | "
            << std::setw(10) << ms(noisy.p50_ms) << " | " << std::setw(10) << ms(noisy.p99_ms) << " | "
            << ms(noisy.max_ms) << "\n\n";
  if (noisy_drained_at) {
    std::cout << "The noisy backlog of " << backlog << " jobs drained in " << std::fixed << std::setprecision(1)
              << *noisy_drained_at << " s, while quiet tenants' jobs started within " << ms(quiet.p99_ms)
              << " (p99) of being enqueued: a FIFO queue would have made them wait behind the whole backlog.\n\n";
  }
  for (std::size_t i = 0; i < consumers.size(); ++i) {
    std::cout << "consumer " << i + 1 << ":\n" << consumers[i]->stats().to_string() << "\n\n";
  }
  print_query(session, "queue after the demo", "SELECT * FROM quick.queue_summary");
  return 0;
}

}  // namespace

void add_demo_command(CLI::App& app) {
  auto options = std::make_shared<DemoOptions>();
  auto* command = app.add_subcommand("demo", "Run the demo: noisy and quiet tenants served fairly by two consumers");
  add_database_options(*command, options->database);
  command->add_option("--noisy-tenants", options->noisy_tenants)->capture_default_str()->check(CLI::Range(1, 1000));
  command->add_option("--noisy-backlog", options->noisy_backlog, "jobs per noisy tenant")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000000));
  command->add_option("--quiet-tenants", options->quiet_tenants)->capture_default_str()->check(CLI::Range(1, 1000000));
  command->add_option("--quiet-rate", options->quiet_rate, "quiet jobs per second")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 100000.0));
  command->add_option("--seconds", options->seconds, "how long quiet jobs arrive")
      ->capture_default_str()
      ->check(CLI::Range(1, 3600));
  command->add_option("--job-ms", options->job_ms, "simulated work per job")
      ->capture_default_str()
      ->check(CLI::Range(0, 60000));
  command->add_option("--consumers", options->consumers)->capture_default_str()->check(CLI::Range(1, 32));
  command->add_option("--workers", options->workers, "worker threads per consumer")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  on_selected(*command, [options] { return run_demo(*options); });
}

}  // namespace quick::cli
