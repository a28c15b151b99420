// A program outside quick-pg, built against an installed copy (tests/packaging/install_test.sh),
// through the public API only: reads its configuration with the library's YAML reader, enqueues
// one item inside its own transaction, then runs a Consumer until its handler has completed the
// item. So every part of the library (and each of its dependencies) is linked and used.
//
// Usage: QUICK_DATABASE_URL=... consumer TENANT. Prints the id and payload the handler got.
#include <chrono>
#include <future>
#include <iostream>
#include <string>

#include <quick/quick.h>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: QUICK_DATABASE_URL=... consumer TENANT\n";
    return 2;
  }
  try {
    const quick::ConsumerConfig config = quick::parse_config_yaml("databases:\n  - url_env: QUICK_DATABASE_URL\n");
    auto conn = quick::connect(config.databases.at(0).url);
    quick::require_current_schema(*conn);

    quick::NewItem item;
    item.tenant = argv[1];
    item.job_type = "packaging_check";
    item.payload = R"({"from": "consumer_project"})";
    pqxx::work enqueue(*conn);
    const quick::EnqueueResult enqueued = quick::enqueue_in(enqueue, item);
    enqueue.commit();

    std::promise<std::string> handled;
    quick::Consumer consumer(config);
    consumer.handle(item.job_type, [&handled](quick::JobContext& job) {
      handled.set_value(std::to_string(job.item().id) + " " + job.item().payload);
      return quick::JobResult::done();
    });
    // The metrics server links cpp-httplib through the installed package.
    quick::MetricsOptions metrics_options;
    metrics_options.address = "127.0.0.1:0";
    quick::MetricsServer metrics(consumer, metrics_options);
    metrics.start();
    consumer.start();
    auto result = handled.get_future();
    if (result.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
      std::cerr << "consumer: item " << enqueued.item_id << " was not handled within 60 s\n";
      return 1;
    }
    consumer.stop();  // writes the completion
    if (metrics.port() == 0 || metrics.metrics().render().find("quick_items_done_total") == std::string::npos) {
      std::cerr << "consumer: no metrics\n";
      return 1;
    }
    metrics.stop();
    std::cout << result.get() << "\n";
    return 0;
  } catch (const std::exception& error) {
    std::cerr << "consumer: " << error.what() << "\n";
    return 1;
  }
}
