// The consumer's batch operations on the items and the top-level queue (sql/functions/). Each
// function runs one statement in the transaction passed in; the consumer runs each in its own
// short READ COMMITTED transaction.
//
// Thread safety: as for the transaction passed in.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <pqxx/pqxx>

#include "quick/item.h"
#include "store/pointer_store.h"

namespace quick::store {

struct DequeuedItem {
  Item item;                               // lease_id is the new item lease
  std::chrono::microseconds ready_lag{0};  // how long it had been vested when dequeued
  std::chrono::microseconds age{0};        // time since enqueue, when dequeued
};

// What a visit did to one zone's pointer.
struct VisitedZone {
  std::string tenant;
  SettleAction action = SettleAction::kRequeued;  // requeued, parked, collected or released_busy
  std::chrono::microseconds pointer_lag{0};       // how long the pointer had been vested
};

struct ZoneVisit {
  std::vector<DequeuedItem> items;
  std::vector<VisitedZone> zones;  // the zones visited (their pointers were locked)
  // Named tenants not visited, by reason: another consumer was visiting the zone; it had been
  // visited and requeued since it was peeked; its pointer was gone.
  int conflicts_locked = 0;
  int conflicts_not_vested = 0;
  int conflicts_gone = 0;
};

// Algorithm 2 for `tenants`, in one transaction (quick.visit_zones, sql/functions/visit_zones.sql,
// which comments every step):
// lease, dequeue up to dequeue_max items per zone and max_bytes of payload in all, requeue / park /
// garbage-collect each pointer. `txn` must be READ COMMITTED and should commit right after; its
// commit does not wait for the WAL flush (synchronous_commit = off for that transaction:
// docs/protocol.md#durability-of-a-consumers-commits).
ZoneVisit visit_zones(pqxx::transaction_base& txn, const std::vector<std::string>& tenants, int dequeue_max,
                      std::chrono::milliseconds item_lease_duration, std::chrono::milliseconds min_inactive,
                      const std::vector<std::string>& excluded_job_types, std::int64_t max_bytes = 4194304);

// Extends item leases; returns the ids that were extended (the others lost their lease).
struct ExtendedLeases {
  std::vector<std::int64_t> extended;
  std::vector<std::int64_t> busy;  // row locked by another transaction right now: not extended, not lost
};
ExtendedLeases extend_item_leases(pqxx::transaction_base& txn,
                                  const std::vector<std::pair<std::int64_t, std::string>>& leases,
                                  std::chrono::milliseconds lease_duration);

enum class AckAction { kComplete, kRetry, kRelease, kDead, kDelete };
const char* to_string(AckAction action);

struct Ack {
  std::int64_t item_id = 0;
  std::string lease_id;
  AckAction action = AckAction::kComplete;
  std::chrono::milliseconds delay{0};  // kRetry, kRelease: when the item vests again
  std::string error;                   // kRetry: last_error; kDead: the reason
  int failed_attempts = 0;             // kRetry, kDead: failures to add to error_count (in-line retries included)
};

struct AckOutcome {
  std::int64_t item_id = 0;
  Outcome outcome = Outcome::kDone;
};

std::vector<AckOutcome> ack_items(pqxx::transaction_base& txn, const std::vector<Ack>& acks);

// Claims or renews `role` for `holder`; returns the holder after the call.
std::string claim_role(pqxx::transaction_base& txn, const std::string& role, const std::string& holder,
                       std::chrono::milliseconds lease_duration);
void release_role(pqxx::transaction_base& txn, const std::string& role, const std::string& holder);

// The Scanner's side of skipping wake-ups while every listening Scanner is awake
// (sql/functions/scanner_sleep.sql), on its own session: before an idle sleep (false: the wait for
// enqueues that skipped their wake-up ran out), and once it selects work again.
bool scanner_sleeps(pqxx::transaction_base& txn);
void scanner_wakes(pqxx::transaction_base& txn);

// Ids of the consumers whose membership role ('member:<id>') is live, sorted; forgets memberships
// that ran out long ago.
std::vector<std::string> live_consumers(pqxx::transaction_base& txn);

// Deletes up to `max_rows` dead items older than quick.limits.dead_item_max_age (none while it is
// unset); returns how many.
std::int64_t expire_dead_items(pqxx::transaction_base& txn, int max_rows);

}  // namespace quick::store
