// The top-level queue's operations, as the consumer uses them (paper section 6; the protocol and
// why each statement looks as it does: docs/protocol.md). Each function runs one statement in the
// transaction passed in; callers run them in autocommit READ COMMITTED transactions
// (pqxx::work or pqxx::nontransaction), never inside a longer transaction.
//
// Thread safety: as for the transaction passed in.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <pqxx/pqxx>

#include "quick/item.h"

namespace quick::store {

struct PeekedPointer {
  std::string tenant;
  DbTime vesting_time;
};

// Up to `max_pointers` vested pointers, earliest vesting time first. Takes no locks.
std::vector<PeekedPointer> peek_pointers(pqxx::transaction_base& txn, int max_pointers);

struct Scan {
  int pulled = 0;                       // pointers moved earlier by pull requests
  std::vector<PeekedPointer> pointers;  // vested, earliest first
  DbTime database_now{};                // the database clock at the scan
  // database_now when pull requests are left over (their pointers were locked, or another
  // Scanner was applying them), whether or not `pointers` is empty (when it is not, only a scan
  // from a `requested_from` floor looks: not a full scan). Otherwise, only when `pointers` is
  // empty: when the earliest pointer that is not vested yet vests (unset: none within the scan's
  // `next_vesting_within`): no new work vests before this unless an enqueue or pull request
  // notifies (docs/consumer.md#waking-up).
  std::optional<DbTime> next_vesting;
};

// Where a scan starts reading (docs/consumer.md#scanning-from-a-floor): pull requests made from
// requested_from on, vested pointers from vested_from on; unset: from the beginning.
struct ScanFloors {
  std::optional<DbTime> requested_from;
  std::optional<DbTime> vested_from;
};

// The Scanner's round trip: apply up to `max_pulls` pull requests, then peek_pointers. When nothing
// is vested, the next vesting time is looked for up to `next_vesting_within` from now (unset: no
// bound; zero: not at all).
// Its transaction commits without waiting for the WAL flush (synchronous_commit = off for that
// transaction: docs/protocol.md#durability-of-a-consumers-commits).
Scan scan_pointers(pqxx::transaction_base& txn, int max_pointers, int max_pulls, const ScanFloors& floors = {},
                   std::optional<std::chrono::microseconds> next_vesting_within = std::nullopt);

struct PointerLease {
  std::string tenant;
  std::string lease_id;
  DbTime last_active_time;
};

// Leases those of `tenants` whose pointers are vested and not locked by another consumer right
// now; returns the ones won. Never waits.
std::vector<PointerLease> lease_pointers(pqxx::transaction_base& txn, const std::vector<std::string>& tenants,
                                         std::chrono::milliseconds lease_duration);

// Leases up to `max_pointers` vested pointers in vesting order (the in-order Scanner). Never waits.
std::vector<PointerLease> lease_next_pointers(pqxx::transaction_base& txn, int max_pointers,
                                              std::chrono::milliseconds lease_duration);

// A pointer lease to settle after its zone was visited.
struct PointerVisit {
  std::string tenant;
  std::string lease_id;
  bool items_found = false;  // the visit dequeued items: the zone was active
};

enum class SettleAction {
  kRequeued,      // zone has items: pointer vests again at the zone's earliest vesting time
  kParked,        // zone empty but active within min_inactive: pointer waits until then
  kCollected,     // zone empty and inactive for min_inactive: pointer deleted
  kReleasedBusy,  // an enqueue into the zone is in flight: pointer released to vest now
  kSkipped,       // another session held the pointer at that instant: it vests when our lease ends
  kLeaseLost,     // our lease was no longer on the pointer: nothing done
};

const char* to_string(SettleAction action);
SettleAction parse_settle_action(const std::string& text);  // throws std::logic_error

struct SettledPointer {
  std::string tenant;
  SettleAction action = SettleAction::kLeaseLost;
  std::optional<DbTime> next_vesting_time;  // unset for kCollected and kLeaseLost
};

// Algorithm 2, lines 7-12, for many pointers at once. `txn` must be READ COMMITTED (the SQL
// function refuses anything else) and should commit right after.
std::vector<SettledPointer> settle_pointers(pqxx::transaction_base& txn, const std::vector<PointerVisit>& visits,
                                            std::chrono::milliseconds min_inactive);

// Applies up to `max_requests` pull requests (enqueues of earlier items into parked zones that
// have committed). Returns how many pointers moved earlier. Never waits.
int apply_pointer_pulls(pqxx::transaction_base& txn, int max_requests);

}  // namespace quick::store
