// The plain FIFO queue the demo compares quick-pg with (demo_queues.h): what most applications
// write on Postgres, kept small on purpose. The benchmarks' baseline (bench/support/
// baseline_queue.cc) is the same design with options for their experiments; the tool cannot link
// bench/, which is optional in the build, so the demo has this copy of the idea.
#include <thread>

#include "cli/database_target.h"
#include "cli/demo_queues.h"
#include "quick/database.h"
#include "util/logging.h"
#include "util/stop_signal.h"

namespace quick::cli {
namespace {

// Oldest first; a job another worker holds is skipped, not waited for.
constexpr const char* kClaim =
    "SELECT id, tenant, payload::text FROM demo_fifo.jobs ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED";
constexpr const char* kDelete = "DELETE FROM demo_fifo.jobs WHERE id = $1";
// How long a worker that found no job waits before it looks again: quick-pg's Scanner waits as
// long (scanner.idle_poll_interval's default) when it finds nothing.
constexpr auto kIdlePoll = std::chrono::milliseconds(20);
constexpr auto kRetryDelay = std::chrono::milliseconds(200);  // after a failed transaction

class FifoDemoQueue : public DemoQueue {
 public:
  FifoDemoQueue(std::string url, const DemoLoad& load) : url_(std::move(url)), threads_(load.worker_threads()) {
    auto conn = connect_with_timeout(url_);
    pqxx::nontransaction session(*conn);
    session.exec(
        "DROP SCHEMA IF EXISTS demo_fifo CASCADE;"
        "CREATE SCHEMA demo_fifo;"
        "CREATE TABLE demo_fifo.jobs ("
        "  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
        "  tenant text NOT NULL,"
        "  payload jsonb NOT NULL)");
  }
  ~FifoDemoQueue() override { stop(); }

  std::string name() const override { return "plain FIFO"; }

  void enqueue_batch(pqxx::connection& conn, const std::vector<DemoJob>& jobs) override {
    if (jobs.empty()) return;
    pqxx::work txn(conn);
    std::string insert = "INSERT INTO demo_fifo.jobs (tenant, payload) VALUES ";
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      insert += (i ? ", (" : "(") + txn.quote(jobs[i].tenant) + ", " + txn.quote(jobs[i].payload) + ")";
    }
    txn.exec(insert);
    txn.commit();
  }

  void enqueue_one(pqxx::connection& conn, const DemoJob& job, const std::function<void()>& before_commit) override {
    pqxx::work txn(conn);
    txn.exec_params("INSERT INTO demo_fifo.jobs (tenant, payload) VALUES ($1, $2)", job.tenant, job.payload);
    before_commit();
    txn.commit();
  }

  void start(JobRunner run) override {
    for (int i = 0; i < threads_; ++i) workers_.emplace_back([this, run] { work(run); });
  }

  // A worker finishes the job it holds, deletes it and commits before it ends; its connection
  // closes with it.
  void stop() override {
    stopping_.request();
    for (auto& worker : workers_) worker.join();
    workers_.clear();
  }

 private:
  void work(const JobRunner& run) {
    std::unique_ptr<pqxx::connection> conn;
    while (!stopping_.requested()) {
      try {
        if (!conn) {
          conn = connect_with_timeout(url_);
          conn->prepare("claim", kClaim);
          conn->prepare("delete", kDelete);
        }
        pqxx::work txn(*conn);
        const auto claimed = txn.exec_prepared("claim");
        if (claimed.empty()) {
          txn.commit();
          stopping_.wait_for(kIdlePoll);
          continue;
        }
        const auto& job = claimed[0];
        run(job[1].as<std::string>(), job[2].as<std::string>());
        txn.exec_prepared("delete", job[0].as<std::int64_t>());
        txn.commit();
      } catch (const std::exception& error) {
        util::component_logger("quick.demo")->warn("FIFO worker: {}; retrying", error.what());
        if (dynamic_cast<const pqxx::broken_connection*>(&error) != nullptr) conn.reset();
        stopping_.wait_for(kRetryDelay);
      }
    }
  }

  const std::string url_;
  const int threads_;
  util::StopSignal stopping_;
  std::vector<std::thread> workers_;
};

}  // namespace

std::unique_ptr<DemoQueue> make_fifo_demo_queue(const std::string& url, const DemoLoad& load) {
  return std::make_unique<FifoDemoQueue>(url, load);
}

}  // namespace quick::cli
