// Consumer: starts the Scanner, Managers, Workers, LeaseKeeper and Acknowledger threads, and
// stops them in an order that loses nothing (see stop()).
#include "quick/consumer.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <random>
#include <thread>

#include "core/consumer_core.h"
#include "core/lease_keeper.h"
#include "manager/manager.h"
#include "quick/errors.h"
#include "scanner/scanner.h"
#include "scanner/wakeup_listener.h"
#include "store/consumer_store.h"
#include "util/logging.h"
#include "worker/acknowledger.h"
#include "worker/lease_extender.h"
#include "worker/worker.h"

namespace quick {
namespace {

std::string default_consumer_id() {
  char host[256] = {0};
  ::gethostname(host, sizeof host - 1);
  std::mt19937 random(std::random_device{}());
  return std::string(host) + "-" + std::to_string(::getpid()) + "-" + std::to_string(random() % 100000);
}

ConsumerConfig prepared(ConsumerConfig config) {
  if (config.consumer_id.empty()) config.consumer_id = default_consumer_id();
  for (std::size_t i = 0; i < config.databases.size(); ++i) {
    if (config.databases[i].name.empty()) config.databases[i].name = "db" + std::to_string(i + 1);
  }
  validate(config);
  return config;
}

}  // namespace

class Consumer::Impl {
 public:
  explicit Impl(ConsumerConfig config)
      : core_(std::make_shared<core::ConsumerCore>(prepared(std::move(config)))),
        log_(util::component_logger("quick.consumer")) {}

  void handle(const std::string& job_type, Handler handler) {
    std::lock_guard<std::mutex> lock(lifecycle_);
    if (started_) throw InvalidArgument("Consumer::handle(\"" + job_type + "\") must be called before start()");
    if (!handler) throw InvalidArgument("Consumer::handle(\"" + job_type + "\"): empty handler");
    core_->handlers[job_type] = std::move(handler);
    core_->counters.job_types.track(job_type);
  }

  void start() {
    std::lock_guard<std::mutex> lock(lifecycle_);
    if (started_) return;
    // Every item would only be put aside: certainly a mistake, better reported now.
    if (core_->handlers.empty()) {
      throw InvalidArgument("Consumer::start(): no handler registered; call handle(job_type, handler) before start()");
    }
    started_ = true;
    running_.store(true);
    auto& config = core_->config;
    log_->info("consumer {} starting: {} database(s), {} managers, {} workers", config.consumer_id,
               config.databases.size(), config.manager.threads, config.worker.threads);
    auto core = core_;
    background_.emplace_back([core] { worker::run_acknowledger(core); });
    background_.emplace_back([core] { worker::run_lease_extender(core); });
    for (int i = 0; i < config.worker.threads; ++i) workers_.emplace_back([core, i] { worker::run_worker(core, i); });
    for (int i = 0; i < config.manager.threads; ++i)
      managers_.emplace_back([core, i] { manager::run_manager(core, i); });
    if (config.scanner.listen_for_wakeups) listener_ = std::thread([core] { scanner::run_wakeup_listener(core); });
    scanner_ = std::thread([core] { scanner::run_scanner(core); });
  }

  // 1. stop scanning and let the Managers finish the batches they hold;
  // 2. release the buffered items nobody started;
  // 3. let running handlers finish until stop_deadline, then ask them to stop (should_stop());
  // 4. flush acknowledgments and stop extending leases.
  // Handlers that ignore should_stop past a short grace are left behind (logged), so stop()
  // always returns; their items vest again when the leases run out.
  void stop() {
    std::lock_guard<std::mutex> lock(lifecycle_);
    if (!started_ || stopped_) return;
    stopped_ = true;
    running_.store(false);  // the waits return at once, without the lock stop() holds throughout
    auto& core = *core_;
    log_->info("consumer {} stopping", core.config.consumer_id);

    core.stop_scanning.request();
    core.wakeups.signal();
    {
      // The Scanner may be waiting for a visit to end (for room, or for its next paced scan): the
      // lock orders this after its check of stop_scanning.
      std::lock_guard<std::mutex> visit_lock(core.visit_mutex);
    }
    core.visit_finished.notify_all();
    core.listener_stop.signal();
    if (scanner_.joinable()) scanner_.join();
    if (listener_.joinable()) listener_.join();
    core.manager_queue.close();
    for (auto& manager : managers_) manager.join();
    for (auto& batch : core.manager_queue.take_all()) {
      core.databases[static_cast<std::size_t>(batch.database)]->unmark_in_progress(batch.tenants);
      core.visits_in_flight.fetch_sub(1);
    }

    release_buffered_items();

    const auto deadline = std::chrono::steady_clock::now() + core.config.stop_deadline;
    while (core.work_queue.held() > 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    core.stop_handlers.request();
    core.work_queue.close();
    const auto grace_end = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (core.work_queue.held() > 0 && std::chrono::steady_clock::now() < grace_end) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    const std::size_t stuck = core.work_queue.held();
    if (stuck > 0) {
      log_->error(
          "{} handler(s) ignored should_stop(); leaving them behind, their items vest again when "
          "their leases run out",
          stuck);
      for (auto& worker : workers_) worker.detach();
    } else {
      for (auto& worker : workers_) worker.join();
    }
    core.stop_background.request();
    // Wakes the Acknowledger at once (an idle one waits 100 ms for work); a closed queue still
    // hands out what it holds.
    core.ack_queue.close();
    // Joined even when a handler is stuck: neither waits for handlers (both end on
    // stop_background), and the Acknowledger's final flush writes the outcomes of the items that
    // did finish, which would otherwise run again.
    for (auto& thread : background_) thread.join();
    log_->info("consumer {} stopped\n{}", core.config.consumer_id, stats().to_string());
  }

  ConsumerStats stats() const {
    auto& core = *core_;
    ConsumerStats stats = core.counters.snapshot();
    stats.items_buffered = core.work_queue.buffered();
    const auto held = core.work_queue.held();
    stats.items_running = held > stats.items_buffered ? held - stats.items_buffered : 0;
    for (const auto& db : core.databases) {
      stats.in_order_role = stats.in_order_role || db->in_order_role.load();
      stats.live_consumers = std::max<std::uint64_t>(stats.live_consumers,
                                                     static_cast<std::uint64_t>(db->live_consumers.load()));
      stats.pointers_per_visit = std::max<std::uint64_t>(stats.pointers_per_visit,
                                                         static_cast<std::uint64_t>(db->pointers_per_visit.load()));
    }
    return stats;
  }

  const ConsumerConfig& config() const { return core_->config; }

  bool wait_until_ready(std::chrono::milliseconds timeout) const {
    const auto& core = *core_;
    return wait_for(
        [&] {
          const bool scanned = std::all_of(core.databases.begin(), core.databases.end(),
                                           [](const auto& db) { return db->scanned.load(); });
          return scanned && (!core.config.scanner.listen_for_wakeups || core.listening_to_all());
        },
        timeout);
  }

  bool wait_until_idle(std::chrono::milliseconds timeout) const {
    const auto& core = *core_;
    return wait_for(
        [&] {
          return core.work_queue.held() == 0 && core.visits_in_flight.load() == 0 && core.acks_outstanding.load() == 0;
        },
        timeout);
  }

 private:
  // Polls `condition` every millisecond while the consumer runs, up to `timeout`.
  template <typename Condition>
  bool wait_for(Condition condition, std::chrono::milliseconds timeout) const {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
      if (!running_.load()) return false;
      if (condition()) return true;
      if (std::chrono::steady_clock::now() >= deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

  void release_buffered_items() {
    auto& core = *core_;
    for (const auto& held : core.work_queue.drain()) {
      held->acknowledging.store(true);
      core.submit_ack(core::PendingAck{held->database,
                                       store::Ack{held->item.id, *held->item.lease_id, store::AckAction::kRelease,
                                                  std::chrono::milliseconds(0), "", 0},
                                       held});
      core.work_queue.finished(held);
    }
  }

  std::shared_ptr<core::ConsumerCore> core_;
  std::shared_ptr<spdlog::logger> log_;
  mutable std::mutex lifecycle_;
  bool started_ = false;  // guarded by lifecycle_
  bool stopped_ = false;  // guarded by lifecycle_
  // Started and not stopping: read by the waits without lifecycle_, which stop() holds until
  // every thread has ended.
  std::atomic<bool> running_{false};
  std::thread scanner_, listener_;
  std::vector<std::thread> managers_, workers_, background_;
};

Consumer::Consumer(ConsumerConfig config) : impl_(std::make_unique<Impl>(std::move(config))) {}
Consumer::~Consumer() { stop(); }
void Consumer::handle(const std::string& job_type, Handler handler) { impl_->handle(job_type, std::move(handler)); }
void Consumer::start() { impl_->start(); }
void Consumer::stop() { impl_->stop(); }
ConsumerStats Consumer::stats() const { return impl_->stats(); }
bool Consumer::wait_until_ready(std::chrono::milliseconds timeout) const { return impl_->wait_until_ready(timeout); }
bool Consumer::wait_until_idle(std::chrono::milliseconds timeout) const { return impl_->wait_until_idle(timeout); }
const ConsumerConfig& Consumer::config() const { return impl_->config(); }

}  // namespace quick
