#include "scanner/wakeup_listener.h"

#include <poll.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <vector>

#include "core/database_session.h"
#include "store/error_classification.h"
#include "util/logging.h"
#include "util/retry_delay.h"

namespace quick::scanner {
namespace {

using Clock = std::chrono::steady_clock;
constexpr const char* kChannel = "quick_wakeup";

// libpqxx 6.4 delivers notifications to receivers from get_notifs(); a receiver LISTENs when it
// is constructed and must be destroyed before its connection. A payload, when there is one, is
// the start of the committed transaction's first notifying statement in microseconds since the
// epoch (sql/functions/notify_consumers.sql): noted for the Scanner's next wide scan. Anything
// else (the one-call enqueues' bare NOTIFY, or anyone's) only wakes the Scanner.
class WakeupReceiver final : public pqxx::notification_receiver {
 public:
  WakeupReceiver(pqxx::connection_base& conn, core::DatabaseRuntime& runtime)
      : pqxx::notification_receiver(conn, kChannel), runtime_(runtime) {}
  void operator()(const std::string& payload, int /*backend_pid*/) override {
    ++received;
    std::int64_t epoch_us = 0;
    const char* end = payload.data() + payload.size();
    const auto parsed = std::from_chars(payload.data(), end, epoch_us);
    if (!payload.empty() && parsed.ec == std::errc() && parsed.ptr == end && epoch_us > 0 &&
        epoch_us < kLatestPlausibleUs) {
      runtime_.note_write_started(epoch_us);
    }
  }
  // 2100-01-01: anyone may send a payload, and a time far beyond would overflow DbTime's nanoseconds.
  static constexpr std::int64_t kLatestPlausibleUs = 4102444800LL * 1000000;
  int received = 0;

 private:
  core::DatabaseRuntime& runtime_;
};

struct ListenedDatabase {
  core::DatabaseRuntime* runtime;
  core::DatabaseSession session;
  util::RetryDelay retry_delay;
  std::unique_ptr<WakeupReceiver> receiver;  // set while listening
  pqxx::connection* conn = nullptr;          // the session's connection, while listening
  Clock::time_point retry_at{};
};

void stop_listening(core::ConsumerCore& core, ListenedDatabase& db) {
  if (!db.receiver) return;
  // Closed first: the receiver's destructor would otherwise send UNLISTEN, which on a connection
  // cut off by the network waits for tcp_user_timeout (30 s), holding up stop(). The server
  // forgets a closed session's LISTENs anyway.
  db.conn->disconnect();
  db.receiver.reset();  // before the connection it refers to
  db.conn = nullptr;
  db.session.reset();
  core.databases_listening.fetch_sub(1);
}

// Connects and LISTENs, or schedules the next attempt. Returns true when it starts listening.
bool start_listening(core::ConsumerCore& core, ListenedDatabase& db, spdlog::logger& log) {
  try {
    pqxx::connection& conn = db.session.connection();
    db.receiver = std::make_unique<WakeupReceiver>(conn, *db.runtime);
    db.conn = &conn;
    core.databases_listening.fetch_add(1);
    db.retry_delay.reset();
    log.debug("listening for wake-ups on database {}", db.runtime->config.name);
    return true;
  } catch (...) {
    const auto error = store::classify_current_exception();
    db.receiver.reset();
    db.session.reset();
    core::add(core.counters.database_errors);
    const auto wait = db.retry_delay.next();
    db.retry_at = Clock::now() + wait;
    log.warn("listening for wake-ups on database {} failed ({}): {}; polling every {} ms meanwhile, retrying in {} ms",
             db.runtime->config.name, store::to_string(error.kind), error.message,
             core.config.scanner.idle_poll_interval.count(), wait.count());
    return false;
  }
}

// Reads what arrived on a listening connection. Returns the notifications received, or -1 when
// the connection broke: listening stops until the next attempt.
int receive(core::ConsumerCore& core, ListenedDatabase& db, short revents, spdlog::logger& log) {
  try {
    db.receiver->received = 0;
    db.conn->get_notifs();
    if ((revents & (POLLERR | POLLHUP | POLLNVAL)) != 0 || !db.conn->is_open()) {
      throw pqxx::broken_connection("the connection closed");
    }
    return db.receiver->received;
  } catch (...) {
    const auto error = store::classify_current_exception();
    stop_listening(core, db);
    core::add(core.counters.reconnects);
    db.retry_at = Clock::now() + db.retry_delay.next();
    log.warn("wake-up listener lost database {} ({}): {}; polling meanwhile", db.runtime->config.name,
             store::to_string(error.kind), error.message);
    return -1;
  }
}

}  // namespace

void run_wakeup_listener(std::shared_ptr<core::ConsumerCore> core_owner) {
  core::ConsumerCore& core = *core_owner;
  auto log = util::component_logger("quick.listener");
  std::vector<ListenedDatabase> databases;
  databases.reserve(core.databases.size());
  for (auto& runtime : core.databases) {
    databases.push_back(ListenedDatabase{
        runtime.get(),
        core::DatabaseSession(runtime->config.url, "quick/" + core.config.consumer_id + "/listener", std::nullopt,
                              std::nullopt, core::DatabaseSession::Connecting::kInBackground),
        util::RetryDelay(std::chrono::milliseconds(50), core.config.reconnect_delay_max), nullptr, nullptr,
        Clock::time_point{}});
  }

  std::vector<pollfd> fds;
  std::vector<ListenedDatabase*> polled;
  while (!core.stop_scanning.requested()) {
    bool wake = false;
    auto next_attempt = Clock::now() + std::chrono::seconds(1);
    for (auto& db : databases) {
      if (db.receiver) continue;
      // Notifications sent while this database was not listened to are lost: look once.
      if (Clock::now() >= db.retry_at) wake = start_listening(core, db, *log) || wake;
      if (!db.receiver) next_attempt = std::min(next_attempt, db.retry_at);
    }
    if (wake) core.wakeups.signal();

    fds.assign(1, pollfd{core.listener_stop.fd(), POLLIN, 0});
    polled.clear();
    for (auto& db : databases) {
      if (db.receiver && !db.conn->is_open()) {
        stop_listening(core, db);
        db.retry_at = Clock::now() + db.retry_delay.next();
        core.wakeups.signal();
      }
      if (!db.receiver) continue;
      fds.push_back(pollfd{db.conn->sock(), POLLIN, 0});
      polled.push_back(&db);
    }
    const auto timeout = std::chrono::duration_cast<std::chrono::milliseconds>(next_attempt - Clock::now());
    const int ready = ::poll(fds.data(), fds.size(), static_cast<int>(std::max<std::int64_t>(0, timeout.count())));
    if (ready <= 0 || core.stop_scanning.requested()) continue;  // timeout, EINTR, or stopping
    int received = 0;
    bool lost = false;
    for (std::size_t i = 0; i < polled.size(); ++i) {
      if (fds[i + 1].revents == 0) continue;
      const int count = receive(core, *polled[i], fds[i + 1].revents, *log);
      if (count < 0) lost = true;
      else received += count;
    }
    core::add(core.counters.wakeups, static_cast<std::uint64_t>(received));
    // A lost connection wakes the Scanner too: it now polls, and must not first sleep a long
    // listening interval.
    if (received > 0 || lost) core.wakeups.signal();
  }
  for (auto& db : databases) stop_listening(core, db);
  log->debug("stopped");
}

}  // namespace quick::scanner
