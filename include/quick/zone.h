// Operations on the items of a queue zone (paper section 5), inside the caller's transaction.
//
// Each function runs one statement in `txn` and never commits or aborts it. Lease-conditional
// operations report an Outcome: done, lease lost, or item gone. Durations are computed by the
// database from its own clock (statement_timestamp() + duration), so clients' clocks never matter.
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
  int max_items = 1;                    // > 0
  std::optional<std::string> job_type;  // only items of this type
};

// Vested items of `tenant`, in (priority, vesting_time) order. Does not lease them.
std::vector<Item> peek_in(pqxx::transaction_base& txn, const std::string& tenant,
                          const PeekOptions& options = {});

struct DequeueOptions {
  int max_items = 1;                                      // > 0
  std::chrono::milliseconds lease_duration{30'000};       // > 0
  std::optional<std::string> job_type;                    // only items of this type
};

// Peek and lease in one statement. Items locked by concurrent dequeuers are skipped, never
// waited for. Each returned item carries its new lease_id and its lease expiry as vesting_time.
std::vector<Item> dequeue_in(pqxx::transaction_base& txn, const std::string& tenant,
                             const DequeueOptions& options);

struct LeaseResult {
  Outcome outcome = Outcome::kItemGone;
  std::optional<ItemLease> lease;  // set when outcome == kDone
};

// Leases one item unless another live lease holds it (then kLeaseLost).
LeaseResult obtain_lease_in(pqxx::transaction_base& txn, std::int64_t item_id,
                            std::chrono::milliseconds lease_duration);

struct ExtendResult {
  Outcome outcome = Outcome::kItemGone;
  std::optional<DbTime> expires_at;  // set when outcome == kDone
};

// Extends a lease. Succeeds while `lease_id` is still the item's lease: the lease is live, or it
// ran out and nobody leased the item since.
ExtendResult extend_lease_in(pqxx::transaction_base& txn, std::int64_t item_id,
                             const std::string& lease_id, std::chrono::milliseconds lease_duration);

// Deletes a processed item; only the holder of `lease_id` succeeds.
Outcome complete_in(pqxx::transaction_base& txn, std::int64_t item_id, const std::string& lease_id);

// Deletes an item whatever its lease (the paper's complete without a lease id).
Outcome cancel_in(pqxx::transaction_base& txn, std::int64_t item_id);

// After a failure: the item vests again after `vesting_delay`, its error count goes up by one,
// `error` (if any) is recorded as last_error, and the lease is released. With a lease id only the
// holder succeeds; without one (an operator's retry) it applies whatever the lease.
Outcome requeue_in(pqxx::transaction_base& txn, std::int64_t item_id,
                   const std::optional<std::string>& lease_id,
                   std::chrono::milliseconds vesting_delay,
                   const std::optional<std::string>& error = std::nullopt);

// Gives a lease back without counting an error; the item vests again after `vesting_delay`.
Outcome release_lease_in(pqxx::transaction_base& txn, std::int64_t item_id,
                         const std::string& lease_id,
                         std::chrono::milliseconds vesting_delay = std::chrono::milliseconds{0});

}  // namespace quick
