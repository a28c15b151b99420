// quick-pg behind the demo's DemoQueue interface: the producer API to enqueue, Consumers to run.
#include "cli/demo_queues.h"
#include "quick/consumer.h"
#include "quick/producer.h"

namespace quick::cli {
namespace {

constexpr const char* kJobType = "demo";

NewItem new_item(const DemoJob& job) {
  NewItem item;
  item.tenant = job.tenant;
  item.job_type = kJobType;
  item.payload = job.payload;
  return item;
}

class QuickDemoQueue : public DemoQueue {
 public:
  QuickDemoQueue(std::string url, const DemoLoad& load) : url_(std::move(url)), load_(load) {}
  ~QuickDemoQueue() override { stop(); }

  std::string name() const override { return "quick-pg"; }

  void enqueue_batch(pqxx::connection& conn, const std::vector<DemoJob>& jobs) override {
    std::vector<NewItem> items;
    for (const auto& job : jobs) items.push_back(new_item(job));
    pqxx::work txn(conn);
    enqueue_batch_in(txn, items);
    txn.commit();
  }

  void enqueue_one(pqxx::connection& conn, const DemoJob& job, const std::function<void()>& before_commit) override {
    // Each job commits at once, so a parked zone's pointer is moved in its own transaction
    // rather than by a pull request a Scanner applies later (docs/protocol.md).
    EnqueueOptions options;
    options.pull_in_transaction = true;
    pqxx::work txn(conn);
    enqueue_in(txn, new_item(job), options);
    before_commit();
    txn.commit();
  }

  void start(JobRunner run) override {
    for (int i = 0; i < load_.consumers; ++i) {
      ConsumerConfig config;
      config.consumer_id = "demo-consumer-" + std::to_string(i + 1);
      config.databases.push_back(DatabaseConfig{"demo", url_});
      config.worker.threads = load_.workers;  // every other setting at the library's defaults
      consumers_.push_back(std::make_unique<Consumer>(config));
      consumers_.back()->handle(kJobType, [run](JobContext& job) {
        run(job.item().tenant, job.item().payload);
        return JobResult::done();
      });
      consumers_.back()->start();
    }
  }

  // Consumer::stop lets running handlers finish, writes their completions and releases the leases
  // of items it still held, so they are available at once to whoever runs next.
  void stop() override {
    for (auto& consumer : consumers_) consumer->stop();
    consumers_.clear();
  }

 private:
  const std::string url_;
  const DemoLoad load_;
  std::vector<std::unique_ptr<Consumer>> consumers_;
};

}  // namespace

std::unique_ptr<DemoQueue> make_quick_demo_queue(const std::string& url, const DemoLoad& load) {
  return std::make_unique<QuickDemoQueue>(url, load);
}

}  // namespace quick::cli
