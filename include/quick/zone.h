// Operations on the items of a queue zone (paper section 5), inside the caller's transaction.
//
// Each function runs one statement in `txn` and never commits or aborts it. Lease-conditional
// operations report an Outcome: done, lease lost, or item gone. Durations are in milliseconds and
// computed by the database from its own clock (statement_timestamp() + duration), so clients'
// clocks never matter.
//
// Errors: bad arguments (max_items < 1, a lease_duration < 1 ms, a negative vesting_delay, a
// lease_id that is not a UUID like 123e4567-e89b-12d3-a456-426614174000) throw InvalidArgument
// before any statement runs, so `txn` stays usable. A value only the database refuses (such as a
// duration beyond its timestamp range) is reported as InvalidArgument too, with `txn` aborted.
// Other database errors arrive as libpqxx exceptions. `tenant` and `job_type` are not checked:
// a name that matches no item finds nothing.
//
// Typical consumer use, one item at a time:
//   quick::DequeueOptions options;
//   options.max_items = 10;
//   auto items = quick::dequeue_in(txn, "tenant-7", options);
//   ... process ...
//   quick::complete_in(txn, item.id, item.lease_id);   // exactly once with txn.commit()
//
// Thread safety: as for the transaction passed in (one thread per connection).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <pqxx/pqxx>

#include "quick/item.h"

namespace quick {

struct PeekOptions {
  int max_items = 1;                    // max items returned. >= 1. Default 1.
  std::optional<std::string> job_type;  // only items of this type. Default: any type.
};

// Vested items of `tenant`, in zone order (priority, then zone_time). Does not lease them.
std::vector<Item> peek_in(pqxx::transaction_base& txn, const std::string& tenant, const PeekOptions& options = {});

struct DequeueOptions {
  int max_items = 1;                                 // max items leased. >= 1. Default 1.
  std::chrono::milliseconds lease_duration{30'000};  // lease length, ms. >= 1. Default 30s.
  std::optional<std::string> job_type;               // only items of this type. Default: any.
};

// Peek and lease in one statement. Items locked by concurrent dequeuers are skipped, never
// waited for. Each returned item carries its new lease_id and its lease expiry as vesting_time.
std::vector<Item> dequeue_in(pqxx::transaction_base& txn, const std::string& tenant, const DequeueOptions& options);

struct LeaseResult {
  Outcome outcome = Outcome::kItemGone;
  std::optional<ItemLease> lease;  // set when outcome == kDone
};

// Leases one item for `lease_duration` (ms, >= 1) unless another live lease holds it (then
// kLeaseLost).
LeaseResult obtain_lease_in(pqxx::transaction_base& txn, std::int64_t item_id,
                            std::chrono::milliseconds lease_duration);

struct ExtendResult {
  Outcome outcome = Outcome::kItemGone;
  std::optional<DbTime> expires_at;  // set when outcome == kDone
};

// Extends a lease: it now runs out `lease_duration` (ms, >= 1) after this statement, whatever
// was left of it. Succeeds while `lease_id` is still the item's lease: the lease is live, or it
// ran out and nobody leased the item since.
ExtendResult extend_lease_in(pqxx::transaction_base& txn, std::int64_t item_id, const std::string& lease_id,
                             std::chrono::milliseconds lease_duration);

// Deletes a processed item; only the holder of `lease_id` succeeds.
Outcome complete_in(pqxx::transaction_base& txn, std::int64_t item_id, const std::string& lease_id);

// Deletes an item whatever its lease (the paper's complete without a lease id).
Outcome cancel_in(pqxx::transaction_base& txn, std::int64_t item_id);

// After a failure: the item vests again after `vesting_delay` (ms, >= 0), its error count goes up
// by one, `error` (if any) is recorded as last_error (else the previous one stays), and the lease
// is released. With a lease id only the holder succeeds; without one (an operator's retry) it
// applies whatever the lease.
Outcome requeue_in(pqxx::transaction_base& txn, std::int64_t item_id, const std::optional<std::string>& lease_id,
                   std::chrono::milliseconds vesting_delay, const std::optional<std::string>& error = std::nullopt);

// Gives a lease back without counting an error; the item vests again after `vesting_delay`
// (ms, >= 0; default 0: at once).
Outcome release_lease_in(pqxx::transaction_base& txn, std::int64_t item_id, const std::string& lease_id,
                         std::chrono::milliseconds vesting_delay = std::chrono::milliseconds{0});

}  // namespace quick
