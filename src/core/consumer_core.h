// The state a consumer's threads share (see include/quick/consumer.h for the roles and
// docs/consumer.md for the data flow):
//
//   Scanner --PointerBatch--> Managers --HeldItem--> WorkQueue --> Workers --Ack--> Acknowledger
//                                  \--hold--> LeaseKeeper <--let_go--/
//
// Owned through a shared_ptr by the Consumer and by every thread, so a thread that outlives
// stop() (a handler ignoring should_stop) never touches freed memory.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/counters.h"
#include "core/scan_pacing.h"
#include "core/visit_size_limit.h"
#include "core/work_queue.h"
#include "quick/config.h"
#include "quick/handler.h"
#include "store/consumer_store.h"
#include "util/blocking_queue.h"
#include "util/event_fd.h"
#include "util/once_per_key.h"
#include "util/stop_signal.h"
#include "util/wake_signal.h"

namespace quick::core {

// One served database, as the threads see it.
struct DatabaseRuntime {
  explicit DatabaseRuntime(DatabaseConfig database_config) : config(std::move(database_config)) {}

  DatabaseConfig config;
  // Written by the Scanner's election, read by stats().
  std::atomic<bool> in_order_role{false};
  // Visits of this database in a row that found every one of their pointers taken by other
  // consumers (0 after a visit that won one). The Scanner backs off accordingly, doubling up to
  // idle_poll_interval, instead of racing them for the same few pointers: on a lightly loaded
  // queue every consumer peeks the same ones. Written by Managers, read by the Scanner.
  std::atomic<int> visits_lost_in_a_row{0};
  // Live consumers of this database (itself included), as the Scanner's membership last read it.
  std::atomic<int> live_consumers{1};
  // Zones per visit the Scanner hands to Managers now (scanner/visit_size.h, within
  // visit_size_limit), for stats().
  std::atomic<int> pointers_per_visit{0};
  // Lowered by Managers whose visits ran past p_duration, applied by the Scanner.
  VisitSizeLimit visit_size_limit;
  // Whether the Scanner paces its scans of this database: Managers report their visits.
  ScanPacing scan_pacing;
  // The Scanner has completed a scan of this database since start (Consumer::wait_until_ready).
  std::atomic<bool> scanned{false};

  // The earliest start of a committed transaction's first notifying statement that wake-up
  // notifications reported since the Scanner last took it (microseconds since the epoch, by the
  // database's clock): the wake-up listener notes it, the Scanner's next wide scan reaches back to
  // it (scanner/scan_floors.h).
  void note_write_started(std::int64_t epoch_us) {
    std::int64_t seen = earliest_write_started_us_.load();
    while (epoch_us < seen && !earliest_write_started_us_.compare_exchange_weak(seen, epoch_us)) {
    }
  }
  std::optional<std::int64_t> take_write_started() {
    const std::int64_t seen = earliest_write_started_us_.exchange(kNoWriteStarted);
    if (seen == kNoWriteStarted) return std::nullopt;
    return seen;
  }

  // Tenants the Scanner handed to Managers whose pointers are not settled yet: the Scanner leaves
  // them out of its selections (Algorithm 1, line 7).
  void mark_in_progress(const std::vector<std::string>& tenants);
  void unmark_in_progress(const std::vector<std::string>& tenants);
  // Also left out: zones whose visit ended after the current peek began. The peek's snapshot may
  // predate that visit's commit and show the pointer vested although the visit has just requeued
  // it; selecting it again would lose the lease to ourselves. The Scanner calls begin_peek()
  // right before each peek.
  void begin_peek();
  enum class ZoneActivity { kIdle, kInProgress, kSettledSincePeek };
  ZoneActivity activity(const std::string& tenant) const;  // one lock per peeked pointer

 private:
  static constexpr std::int64_t kNoWriteStarted = std::numeric_limits<std::int64_t>::max();
  std::atomic<std::int64_t> earliest_write_started_us_{kNoWriteStarted};
  mutable std::mutex in_progress_mutex_;
  std::set<std::string> in_progress_;         // guarded by in_progress_mutex_
  std::set<std::string> settled_since_peek_;  // guarded by in_progress_mutex_
};

// Tenants of one database selected by the Scanner, for one Manager visit.
struct PointerBatch {
  int database = 0;
  std::vector<std::string> tenants;
};

// An acknowledgment on its way to the Acknowledger.
struct PendingAck {
  int database = 0;
  store::Ack ack;
  // The held item it acknowledges (its `acknowledging` set): the Acknowledger lets it go once the
  // acknowledgment is written or given up. Null for none.
  HeldItemPtr held;
};

class LeaseKeeper;
class Acknowledger;

struct ConsumerCore {
  explicit ConsumerCore(ConsumerConfig consumer_config);

  ConsumerConfig config;
  std::map<std::string, Handler> handlers;  // written before start(), then read-only
  // Job types the Workers met without a handler, so that each is logged once per consumer.
  util::OncePerKey unhandled_job_types_logged;
  std::vector<std::unique_ptr<DatabaseRuntime>> databases;
  Counters counters;

  util::BlockingQueue<PointerBatch> manager_queue;
  // Pointer batches handed to the Managers whose visit has not ended: the Scanner keeps at most
  // one per Manager in flight. Added to by the Scanner, subtracted by the Managers.
  std::atomic<int> visits_in_flight{0};

  // Signalled by a Manager whenever it finishes a visit: a Scanner that found only pointers its
  // Managers are visiting waits for this instead of its idle poll interval.
  void notify_visit_finished();
  // Waits until a visit finishes, up to `timeout` (or stop).
  void wait_for_visit(std::chrono::steady_clock::duration timeout);
  std::mutex visit_mutex;
  std::condition_variable visit_finished;
  std::uint64_t visits_finished = 0;  // guarded by visit_mutex
  // Wake-ups of an idle Scanner: signalled by the wake-up listener when a notification arrives
  // (or its connection was lost), by every visit's end, and by stop(). docs/consumer.md#waking-up.
  util::WakeSignal wakeups;
  // Databases whose wake-up listener connection is up; the Scanner sleeps longer than
  // idle_poll_interval only while this equals databases.size().
  std::atomic<int> databases_listening{0};
  bool listening_to_all() const { return databases_listening.load() == static_cast<int>(databases.size()); }
  util::EventFd listener_stop;  // ends the listener's poll() at stop

  WorkQueue work_queue;
  util::BlockingQueue<PendingAck> ack_queue;
  // Acknowledgments submitted and not yet written or given up by the Acknowledger (queued, or in
  // its batches): Consumer::wait_until_idle waits for none.
  std::atomic<std::int64_t> acks_outstanding{0};
  void submit_ack(PendingAck ack) {
    acks_outstanding.fetch_add(1);
    ack_queue.push(std::move(ack));
  }
  std::unique_ptr<LeaseKeeper> lease_keeper;

  // Stop phases (see Consumer::stop): the Scanner and Managers stop at stop_scanning, handlers
  // are asked to give up at stop_handlers, the LeaseKeeper and Acknowledger end at stop_background
  // after a final flush.
  util::StopSignal stop_scanning;
  util::StopSignal stop_handlers;
  util::StopSignal stop_background;

  // Items a Worker could not finish because the consumer stopped are released, not retried.
  bool stopping() const { return stop_scanning.requested(); }
};

}  // namespace quick::core
