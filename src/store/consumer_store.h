// The consumer's batch operations on the items and the top-level queue (migrations/0002). Each
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
  Item item;  // lease_id is the new item lease
  std::chrono::microseconds ready_lag{0};  // how long it had been vested when dequeued
  std::chrono::microseconds age{0};        // time since enqueue, when dequeued
};

struct ZoneBatch {
  std::vector<DequeuedItem> items;
  std::vector<PointerVisit> to_settle;  // leased pointers to settle with settle_pointers
  int pointers_locked = 0;              // pointers this call won (the others were taken)
  int pointers_requeued = 0;            // won, and requeued at once because their zone was full
};

// Algorithm 2, lines 1-6, for `tenants` (see quick.lease_and_dequeue).
ZoneBatch lease_and_dequeue(pqxx::transaction_base& txn, const std::vector<std::string>& tenants,
                            std::chrono::milliseconds p_duration, int dequeue_max,
                            std::chrono::milliseconds item_lease_duration,
                            const std::vector<std::string>& excluded_job_types);

// Extends item leases; returns the ids that were extended (the others lost their lease).
std::vector<std::int64_t> extend_item_leases(pqxx::transaction_base& txn,
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

}  // namespace quick::store
