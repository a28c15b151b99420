#include "scanner/sleep_announcement.h"

#include <pqxx/pqxx>

#include "store/consumer_store.h"
#include "store/error_classification.h"
#include "util/logging.h"

namespace quick::scanner {

SleepAnnouncement::BeforeSleep SleepAnnouncement::before_sleep(core::DatabaseSession& session) {
  busy_rounds_ = 0;
  if (holds(session) || std::chrono::steady_clock::now() < unsupported_until_) return BeforeSleep::kSleep;
  try {
    pqxx::connection& conn = session.connection();
    pqxx::nontransaction statement(conn);
    if (!store::scanner_sleeps(statement)) return BeforeSleep::kPoll;
    announced_ = true;
    announced_connects_ = session.connects();
    return BeforeSleep::kScanOnceMore;
  } catch (...) {
    const auto error = store::classify_current_exception();
    announced_ = false;
    if (error.sqlstate == "42883") {
      // The database's functions predate the handshake: sleep without announcing, as before.
      unsupported_until_ = std::chrono::steady_clock::now() + kUnsupportedRetry;
      util::component_logger("quick.scanner")
          ->warn(
              "this database has no quick.scanner_sleeps() (run quick migrate): for a minute, an idle Scanner "
              "sleeps there without announcing it");
      return BeforeSleep::kSleep;
    }
    // The call may have taken a lock before it failed: a new session surely holds none.
    session.reset();
    util::component_logger("quick.scanner")->warn("announcing an idle Scanner's sleep: {}", error.message);
    return BeforeSleep::kPoll;
  }
}

void SleepAnnouncement::after_round(core::DatabaseSession& session, bool selected) {
  if (!selected) {
    busy_rounds_ = 0;
    return;
  }
  if (++busy_rounds_ < kBusyRoundsToWake || !announced_) return;
  const bool held = holds(session);
  announced_ = false;
  if (!held) return;  // a new session holds no lock
  try {
    pqxx::nontransaction statement(session.connection());
    store::scanner_wakes(statement);
  } catch (...) {
    // Whatever failed, a new session is sure to hold no lock: a lock left held would only make
    // enqueues keep sending wake-ups, but for as long as this session lived.
    const auto error = store::classify_current_exception();
    session.reset();
    util::component_logger("quick.scanner")->warn("announcing a Scanner awake: {}", error.message);
  }
}

}  // namespace quick::scanner
