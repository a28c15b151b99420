#include "scanner/scanner.h"

#include <algorithm>
#include <numeric>
#include <random>

#include "core/database_session.h"
#include "core/loop_errors.h"
#include "scanner/consumer_membership.h"
#include "scanner/dead_item_retention.h"
#include "scanner/idle_wait.h"
#include "scanner/in_order_election.h"
#include "scanner/next_vesting_horizon.h"
#include "scanner/pointer_selection.h"
#include "scanner/scan_floors.h"
#include "scanner/sleep_announcement.h"
#include "scanner/vested_since.h"
#include "scanner/visit_size.h"
#include "store/error_classification.h"
#include "store/pointer_store.h"
#include "util/logging.h"
#include "util/retry_delay.h"

namespace quick::scanner {
namespace {

using core::ConsumerCore;

// Per database: its connection, election, membership, dead-item retention and error backoff.
struct ScannedDatabase {
  core::DatabaseRuntime* runtime;
  core::DatabaseSession session;
  InOrderElection election;
  ConsumerMembership membership;
  DeadItemRetention retention;
  util::RetryDelay retry_delay;
  VestedSince others_vested_since;  // other consumers' vested pointers, for partition_grace
  ScanFloorKeeper scan_floors;      // where the next scan starts reading
  NextVestingHorizon horizon;       // how far ahead the next scan reads the next vesting time
  LastScan last_scan;               // what the last scan found, for the sleep after the round
  int floors_connects;              // session.connects() when scan_floors was last started afresh
  SleepAnnouncement sleep;          // skipping wake-ups while this Scanner is awake
  // After tick_leases failed: no new attempt (and no reconnect) before this.
  std::chrono::steady_clock::time_point leases_retry_at{};
  // After a scan failed: no scan of this database before this. Noted instead of slept, so that
  // the other databases are scanned meanwhile.
  std::chrono::steady_clock::time_point scan_retry_at{};
};

// Whether a notification wakes the Scanner when work becomes due (else it polls).
bool listening(const ConsumerCore& core) { return core.config.scanner.listen_for_wakeups && core.listening_to_all(); }

// The longest an idle round sleeps when listening: listening_poll_interval (never less than
// idle_poll_interval), and never more than a third of the leases, which only the Scanner renews.
std::chrono::milliseconds longest_idle_wait(const ConsumerCore& core) {
  const auto& scanner = core.config.scanner;
  return std::min(std::max(scanner.listening_poll_interval, scanner.idle_poll_interval),
                  std::chrono::duration_cast<std::chrono::milliseconds>(scanner.in_order_lease_duration / 3));
}

// Renews the in-order role and the membership of every database when due, also while the
// Scanner waits for room, so that a busy consumer does not let them lapse. Errors are logged, not
// thrown: the role counts as lost and the last known members stay in use until the next attempt.
// While the Scanner waits for room it calls this every few milliseconds: after a failure it
// backs off (the database's retry delay, shared with the scans), so that a database that is down
// is not sent a connection attempt, nor the log a warning, every time.
void tick_leases(std::vector<std::unique_ptr<ScannedDatabase>>& databases, spdlog::logger& log) {
  for (auto& db : databases) {
    const auto now = std::chrono::steady_clock::now();
    if (now < db->leases_retry_at) continue;
    try {
      db->election.tick(db->session.connection());
      db->membership.tick(db->session.connection());
      if (db->leases_retry_at != std::chrono::steady_clock::time_point{}) {
        db->leases_retry_at = {};
        db->retry_delay.reset();
      }
    } catch (...) {
      const auto error = store::classify_current_exception();
      if (error.connection_unusable()) db->session.reset();
      const auto wait = db->retry_delay.next();
      db->leases_retry_at = now + wait;
      log.warn("in-order role or membership on database {}: {}; trying again in {} ms", db->runtime->config.name,
               error.message, wait.count());
    }
  }
}

// Algorithm 1, line 5, "wait until at least one worker has no task to process", with room for
// pipelining: the Scanner looks for more zones while fewer than `prefetch_zones` zones have items
// waiting in the local buffer and a Manager is free to visit. Counting zones, not items, keeps a
// zone with a big batch in the buffer from hiding the single item of another tenant: Workers
// take items round robin over zones, so a newly found zone is served next.
bool has_room(const ConsumerCore& core) {
  const auto zones = static_cast<std::size_t>(std::max(1, core.config.effective_prefetch_zones()));
  return core.work_queue.buffered_zones() < zones && core.visits_in_flight.load() < core.config.manager.threads;
}

// Waits for room; returns false when stopping.
bool wait_for_room(ConsumerCore& core, std::vector<std::unique_ptr<ScannedDatabase>>& databases, spdlog::logger& log) {
  while (!core.stop_scanning.requested()) {
    if (has_room(core)) return true;
    tick_leases(databases, log);
    core.wait_for_visit(std::chrono::milliseconds(2));
  }
  return false;
}

// Pacing (core/scan_pacing.h): waits until this database's next scan is due, looking again when
// a visit ends (one that found a backlog ends the wait). Returns false when stopping.
bool wait_for_scan_interval(ConsumerCore& core, const ScannedDatabase& db) {
  while (!core.stop_scanning.requested()) {
    const auto wait = db.runtime->scan_pacing.wait_before_scan(db.last_scan.sent_at,
                                                               core.config.scanner.min_scan_interval, IdleClock::now());
    if (wait <= IdleClock::duration::zero()) return true;
    core.wait_for_visit(wait);
  }
  return false;
}

// Zones this consumer is busy with: in a visit, or with enough items waiting to keep every Worker
// busy for two rounds. The Scanner leaves them out (Algorithm 1, line 7: pointers "already being
// processed by this consumer"); such a zone is visited again once its buffer runs low, before
// the Workers run dry.
bool busy_zone(const std::vector<std::string>& well_stocked, core::DatabaseRuntime::ZoneActivity activity,
               const std::string& tenant) {
  return activity == core::DatabaseRuntime::ZoneActivity::kInProgress ||
         std::find(well_stocked.begin(), well_stocked.end(), tenant) != well_stocked.end();
}

struct ScanOutcome {
  int selected = 0;
  bool go_on = false;       // a full peek that selected something: the database's turn goes on
  bool peek_again = false;  // left out zones whose visits ended during the peek: look again now
  bool all_busy = false;    // vested pointers were found, but this consumer is busy with them all
};

// One peek-select-dispatch step in one database.
ScanOutcome scan_once(ConsumerCore& core, ScannedDatabase& db, int database_index, std::mt19937_64& random) {
  const auto& scanner = core.config.scanner;
  pqxx::connection& conn = db.session.connection();
  if (db.session.connects() != db.floors_connects) {
    // A new connection: the server may have restarted. Scans commit without waiting for the WAL
    // flush, so pulls they applied may be lost and be pull requests again, below the floors the
    // Scanner reads from: start again with a full scan (docs/protocol.md#durability-of-a-consumers-commits).
    db.scan_floors = ScanFloorKeeper{};
    db.floors_connects = db.session.connects();
  }
  db.election.tick(conn);  // rate-limited inside
  db.membership.tick(conn);
  db.retention.tick(conn, db.election.holds());  // rate-limited inside; never throws

  pqxx::nontransaction statement(conn);
  db.runtime->begin_peek();
  const auto scan_started = ScanFloorKeeper::Clock::now();
  if (const auto started_us = db.runtime->take_write_started()) {
    db.scan_floors.note_late_commit(DbTime(std::chrono::microseconds(*started_us)));
  }
  const ScanFloorKeeper::Plan plan = db.scan_floors.next(scan_started);
  // Polling, the Scanner does not use the next vesting time: it looks again after idle_poll_interval.
  const std::chrono::milliseconds look_ahead = listening(core) ? db.horizon.next() : std::chrono::milliseconds(0);
  const store::Scan scan = store::scan_pointers(statement, scanner.peek_max, scanner.pulls_per_scan, plan.floors,
                                                look_ahead);
  const auto scan_ended = ScanFloorKeeper::Clock::now();
  db.scan_floors.observe(scan, plan, scan_ended, scan_ended - scan_started);
  const std::vector<store::PeekedPointer>& peeked = scan.pointers;
  core::add(core.counters.pulls_applied, static_cast<std::uint64_t>(scan.pulled));
  core::add(core.counters.scans);
  core::add(core.counters.pointers_peeked, peeked.size());

  const auto well_stocked = core.work_queue.zones_with_at_least(
      database_index, static_cast<std::size_t>(2 * core.config.worker.threads));
  // Candidates: vested pointers this consumer is not busy with. Eligible: the candidates it owns,
  // and others' that their owners left vested beyond the grace period (tenant_partition.h).
  std::size_t candidates = 0;
  std::vector<std::string> eligible;
  std::vector<bool> owned;
  eligible.reserve(peeked.size());
  bool settled_during_peek = false, skipped_busy = false;
  for (const auto& pointer : peeked) {
    const auto activity = db.runtime->activity(pointer.tenant);
    if (busy_zone(well_stocked, activity, pointer.tenant)) {
      skipped_busy = true;
      continue;
    }
    if (activity == core::DatabaseRuntime::ZoneActivity::kSettledSincePeek) {
      settled_during_peek = true;
      continue;
    }
    ++candidates;
    const bool own = !db.membership.enabled() || db.membership.owns(pointer.tenant);
    if (own || scan.database_now - db.others_vested_since.observe(pointer.tenant, pointer.vesting_time) >=
                   scanner.partition_grace) {
      eligible.push_back(pointer.tenant);
      owned.push_back(own);
    }
  }
  db.others_vested_since.end_peek();
  core::add(core.counters.pointers_left_to_owners, candidates - eligible.size());
  // Its times count from when the statement was sent (scan_started): the database read them as
  // of its start, a moment later, so the Scanner's deadlines fall at or before theirs.
  LastScan& last = db.last_scan;
  last.sent_at = scan_started;
  last.saw_vested = !peeked.empty();
  db.horizon.observe(last.saw_vested);
  last.looked_ahead = look_ahead;
  last.next_vesting_in.reset();
  if (scan.next_vesting) {
    last.next_vesting_in = std::chrono::duration_cast<std::chrono::microseconds>(*scan.next_vesting -
                                                                                 scan.database_now);
  }
  last.note_left_over(last.next_vesting_in && last.next_vesting_in->count() <= 0);
  last.wide_scan_due = db.scan_floors.wide_scan_due();
  const bool in_order = db.election.holds();
  if (in_order) core::add(core.counters.in_order_scans);
  const bool alone = db.membership.alone();
  const int configured_size = pointers_per_visit(core.config.manager, alone);
  const int visit_size = db.runtime->visit_size_limit.apply(configured_size);
  if (db.runtime->pointers_per_visit.exchange(visit_size) != visit_size && visit_size == configured_size) {
    util::component_logger("quick.scanner")
        ->info("database {}: visits of up to {} zones ({})", db.runtime->config.name, visit_size,
               alone ? "the only live consumer" : "not known to be the only live consumer");
  }
  auto selected = select_eligible_pointers(eligible, owned, candidates, scanner.selection_frac, scanner.selection_max,
                                           in_order, random, visit_size);
  // Room again, now: a visit that ended during the peek may have filled the buffer (and its
  // zone, no longer "in progress", may have been selected again). Its items landed before its
  // zone was unmarked, so this check sees them. Nothing dispatched then: wait as when busy.
  const bool room = has_room(core);
  if (!room) selected.clear();
  core::add(core.counters.pointers_selected, selected.size());
  db.runtime->mark_in_progress(selected);
  for (auto& tenants : split_into_batches(selected, visit_size)) {
    core.visits_in_flight.fetch_add(1);
    core.manager_queue.push(core::PointerBatch{database_index, std::move(tenants)});
  }
  const bool short_peek = static_cast<int>(peeked.size()) < scanner.peek_max;
  ScanOutcome outcome;
  outcome.selected = static_cast<int>(selected.size());
  outcome.go_on = !short_peek && !selected.empty();
  outcome.peek_again = settled_during_peek && room;
  // Busy: vested pointers were found, and those this consumer may take it is busy with. Others'
  // pointers within their grace do not count: their owners take them.
  outcome.all_busy = (!peeked.empty() && (candidates == 0 || (skipped_busy && eligible.empty()))) || !room;
  return outcome;
}

std::vector<const LastScan*> last_scans(const std::vector<std::unique_ptr<ScannedDatabase>>& databases) {
  std::vector<const LastScan*> scans;
  scans.reserve(databases.size());
  for (const auto& db : databases) scans.push_back(&db->last_scan);
  return scans;
}

// The sleep of a round that selected nothing and was not busy (idle_wait.h).
std::chrono::milliseconds round_idle_wait(const ConsumerCore& core,
                                          const std::vector<std::unique_ptr<ScannedDatabase>>& databases) {
  return idle_wait(IdleWaitBounds{core.config.scanner.idle_poll_interval, longest_idle_wait(core), listening(core)},
                   last_scans(databases), IdleClock::now());
}

// The wait of a round that selected nothing because this consumer is busy with every vested zone
// it may take (idle_wait.h).
std::chrono::milliseconds round_busy_wait(const std::vector<std::unique_ptr<ScannedDatabase>>& databases,
                                          std::chrono::milliseconds base) {
  return left_over_pulls_wait(last_scans(databases), base);
}

// Before an idle sleep of a listening Scanner: announces it in every database
// (scanner/sleep_announcement.h). kScanOnceMore when any database announced it just now (what the
// enqueues that skipped their wake-up wrote is committed, and a round must read it before the
// sleep), kPoll when any could not.
SleepAnnouncement::BeforeSleep announce_sleep(std::vector<std::unique_ptr<ScannedDatabase>>& databases) {
  auto outcome = SleepAnnouncement::BeforeSleep::kSleep;
  for (auto& db : databases) {
    const auto before = db->sleep.before_sleep(db->session);
    if (before == SleepAnnouncement::BeforeSleep::kPoll) {
      outcome = before;
    } else if (before == SleepAnnouncement::BeforeSleep::kScanOnceMore &&
               outcome == SleepAnnouncement::BeforeSleep::kSleep) {
      outcome = before;
    }
  }
  return outcome;
}

}  // namespace

void run_scanner(std::shared_ptr<ConsumerCore> core_owner) {
  ConsumerCore& core = *core_owner;
  auto log = util::component_logger("quick.scanner");
  const auto& scanner = core.config.scanner;

  std::vector<std::unique_ptr<ScannedDatabase>> databases;
  for (auto& runtime : core.databases) {
    databases.push_back(std::make_unique<ScannedDatabase>(ScannedDatabase{
        runtime.get(),
        core::DatabaseSession(runtime->config.url, "quick/" + core.config.consumer_id + "/scanner", std::nullopt,
                              std::nullopt, core::DatabaseSession::Connecting::kInBackground),
        InOrderElection(*runtime, core.config.consumer_id, scanner.in_order_lease_duration, scanner.in_order_election),
        ConsumerMembership(*runtime, core.config.consumer_id, scanner.in_order_lease_duration,
                           scanner.partition_grace.count() > 0),
        DeadItemRetention(runtime->config.name),
        util::RetryDelay(std::chrono::milliseconds(50), core.config.reconnect_delay_max), VestedSince{},
        ScanFloorKeeper{}, NextVestingHorizon(scanner.idle_poll_interval, longest_idle_wait(core)), LastScan{}, 0,
        SleepAnnouncement{}}));
  }
  std::mt19937_64 random(std::random_device{}());
  std::vector<int> order(databases.size());
  std::iota(order.begin(), order.end(), 0);

  log->info("started: {} database(s), peek_max={}, selection_frac={}, selection_max={}", databases.size(),
            scanner.peek_max, scanner.selection_frac, scanner.selection_max);
  while (!core.stop_scanning.requested()) {
    // Read before the round looks for work, so a notification that arrives during it ends the
    // sleep after it at once.
    const std::uint64_t wakeups_seen = core.wakeups.generation();
    // stop() requests, then signals: a stop that came before the read above is seen here.
    if (core.stop_scanning.requested()) break;
    std::shuffle(order.begin(), order.end(), random);  // Algorithm 1, line 1
    int selected_this_round = 0;
    bool all_busy = false;
    for (int index : order) {
      auto& db = *databases[static_cast<std::size_t>(index)];
      if (std::chrono::steady_clock::now() < db.scan_retry_at) continue;
      int processed = 0;
      if (const int lost = db.runtime->visits_lost_in_a_row.load(); lost > 0) {
        // Our last visits here lost every pointer to other consumers: back off, so that on a
        // quiet queue one consumer takes the trickle instead of all of them racing for it.
        const auto base = std::max(std::chrono::milliseconds(1), scanner.idle_poll_interval / 4);
        core.stop_scanning.wait_for(std::min(scanner.idle_poll_interval, base * (1 << std::min(lost - 1, 6))));
      }
      while (processed < scanner.processing_bound && wait_for_room(core, databases, *log) &&
             wait_for_scan_interval(core, db)) {
        try {
          const ScanOutcome outcome = scan_once(core, db, index, random);
          db.runtime->scanned.store(true);
          processed += outcome.selected;
          selected_this_round += outcome.selected;
          all_busy = all_busy || outcome.all_busy;
          db.retry_delay.reset();
          if (!outcome.go_on && !outcome.peek_again) break;
        } catch (...) {
          // What an older scan found no longer holds: until one succeeds, this database is polled.
          db.last_scan.forget();
          const auto noted = core::note_loop_error(core, *log, "scan", db.runtime->config.name, &db.session,
                                                   db.retry_delay);
          db.scan_retry_at = std::chrono::steady_clock::now() + noted.retry_in;
          break;
        }
      }
      if (core.stop_scanning.requested()) break;
    }
    for (auto& db : databases) db->sleep.after_round(db->session, selected_this_round > 0);
    if (selected_this_round == 0) {
      // Nothing new to select. If only because this consumer is busy with every vested zone,
      // look again soon: when a visit ends or a notification comes, or after a quarter of the
      // idle interval, so that a quiet tenant's new item is found promptly. Otherwise the queue
      // is idle: sleep until woken (a notification, a visit's end) or new work can vest.
      const auto busy_wait = std::max(std::chrono::milliseconds(1),
                                      std::min(scanner.idle_poll_interval, scanner.in_order_lease_duration / 3) / 4);
      // A listening Scanner announces its sleep first, so that enqueues send their wake-ups again
      // (scanner/sleep_announcement.h): then one more round, or a poll when it could not.
      auto before_sleep = SleepAnnouncement::BeforeSleep::kSleep;
      if (!all_busy && listening(core)) before_sleep = announce_sleep(databases);
      if (before_sleep == SleepAnnouncement::BeforeSleep::kScanOnceMore) continue;
      const bool short_wait = all_busy || before_sleep == SleepAnnouncement::BeforeSleep::kPoll;
      core.wakeups.wait_for(wakeups_seen,
                            short_wait ? round_busy_wait(databases, busy_wait) : round_idle_wait(core, databases));
    }
  }
  for (auto& db : databases) {
    if (!db->session.connected()) continue;
    try {
      db->election.release(db->session.connection());
      db->membership.release(db->session.connection());
    } catch (...) {
      // Best effort: an unreleased role simply expires.
    }
  }
  log->info("stopped");
}

}  // namespace quick::scanner
