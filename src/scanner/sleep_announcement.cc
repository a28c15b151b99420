#include "scanner/sleep_announcement.h"

#include <pqxx/pqxx>

#include "store/consumer_store.h"
#include "store/error_classification.h"
#include "util/logging.h"

namespace quick::scanner {
namespace {

using Clock = std::chrono::steady_clock;

// The database refuses the call itself (its functions predate the handshake, or the login may not
// execute it): no lock was taken.
bool refused_call(const store::ErrorClassification& error) {
  return error.sqlstate == "42883" || error.sqlstate == "42501";
}

}  // namespace

SleepAnnouncement::BeforeSleep SleepAnnouncement::before_sleep(core::DatabaseSession& session) {
  busy_rounds_ = 0;
  if (holds(session)) return BeforeSleep::kSleep;
  // Without a session (its last scan failed) nothing is announced: the Scanner polls, and its
  // next scan reconnects.
  if (!session.connected()) return BeforeSleep::kPoll;
  const auto now = Clock::now();
  if (now < refused_until_) return BeforeSleep::kSleep;  // as before the handshake
  if (now < failed_until_) return BeforeSleep::kPoll;
  try {
    pqxx::nontransaction statement(session.connection());
    if (!store::scanner_sleeps(statement)) return BeforeSleep::kPoll;
    announced_ = true;
    announced_connects_ = session.connects();
    return BeforeSleep::kScanOnceMore;
  } catch (...) {
    const auto error = store::classify_current_exception();
    announced_ = false;
    if (refused_call(error)) {
      refused_until_ = now + kRefusedRetry;
      util::component_logger("quick.scanner")
          ->warn("quick.scanner_sleeps() refused ({}): for {} s an idle Scanner sleeps without announcing it",
                 error.message, kRefusedRetry.count());
      return BeforeSleep::kSleep;
    }
    // The call may have taken a lock before it failed: a new session surely holds none. Polled
    // meanwhile, and tried again a second later, not at every idle round.
    session.reset();
    failed_until_ = now + kFailedRetry;
    util::component_logger("quick.scanner")->warn("announcing an idle Scanner's sleep: {}", error.message);
    return BeforeSleep::kPoll;
  }
}

void SleepAnnouncement::after_round(core::DatabaseSession& session, bool selected) {
  if (!selected) {
    busy_rounds_ = 0;
    return;
  }
  if (busy_rounds_ < kBusyRoundsToWake) ++busy_rounds_;
  if (busy_rounds_ < kBusyRoundsToWake || !announced_) return;
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
