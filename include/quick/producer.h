// Enqueueing items, inside the caller's own transaction.
//
// These functions call the SQL functions quick.enqueue / quick.enqueue_batch in the transaction
// the caller passes, and never commit or abort it: the items become visible to consumers when,
// and only if, the caller commits. Any isolation level works. Under REPEATABLE READ or
// SERIALIZABLE a race with the garbage collection of the tenant's pointer can surface as a
// serialization failure (pqxx::serialization_failure) when, after the caller's snapshot was
// taken, the tenant's pointer was created by another transaction, or a consumer settled it under
// the GC lock (garbage-collected it, parked it, or requeued it to a later time: the lock that
// keeps an empty zone's pointer from vanishing under a READ COMMITTED enqueue is also what an
// older snapshot cannot see past). Retry the whole transaction, as for any other 40001; READ
// COMMITTED callers never see these. See docs/protocol.md.
//
// Bad input is reported as quick::InvalidArgument (errors.h), from one of two places:
// - Before any statement runs (transaction_aborted() false), which leaves the caller's
//   transaction usable: everything validate_new_item checks.
// - By the database (transaction_aborted() true), which then aborts the caller's transaction as
//   Postgres does for any error: roll it back (the caller's earlier work in it is lost; a COMMIT
//   would roll back too). These are the limits that are database settings, a payload over
//   quick.limits.max_payload_bytes and a vesting_delay over quick.limits.max_vesting_delay, and a
//   JSON number in the payload that Postgres's numeric cannot store (more than 16383 digits after
//   the decimal point, such as 1e-20000).
// Other database errors arrive as libpqxx exceptions. Field limits: item.h.
//
// Thread safety: as for the transaction passed in (one thread per connection).
#pragma once

#include <vector>

#include <pqxx/pqxx>

#include "quick/item.h"

namespace quick {

// How an enqueue into a parked zone (one whose pointer vests later than the new item) makes the
// consumers find the item (docs/protocol.md#pulling-a-pointer-earlier).
struct EnqueueOptions {
  // false (the default): record a pull request, which a consumer applies after the caller
  // commits. The caller's transaction holds nothing a consumer needs, however long it stays open.
  //
  // true: move the pointer inside the caller's transaction, where it can be locked without
  // waiting (FOR NO KEY UPDATE SKIP LOCKED; otherwise a request is recorded as above). For
  // producers that commit promptly after enqueueing: the zone vests at the commit, without the
  // request's detour through a consumer, which shortens the pickup latency, and an enqueue into a
  // parked zone writes fewer WAL records (measurements:
  // docs/protocol.md#pulling-inside-the-callers-transaction-opt-in). The price: until the caller
  // commits or rolls back, it holds that tenant's pointer, and consumers skip the zone. Items of
  // the same tenant that other transactions commit meanwhile, or whose leases run out meanwhile,
  // wait for this transaction to end. Other tenants are not affected. Only READ COMMITTED callers
  // pull; other isolation levels always record a request. Items with a client_item_id (and
  // batches holding one) go through quick.enqueue / quick.enqueue_batch, which always record a
  // request: the option has no effect on them.
  bool pull_in_transaction = false;
};

// Enqueues one item in `txn`, which it never commits. Returns its id, or the existing item's id
// (duplicate = true) when item.client_item_id names an item of the same tenant that is still
// queued. Throws InvalidArgument: before any statement runs for what validate_new_item checks,
// from the database for the rest (see above).
EnqueueResult enqueue_in(pqxx::transaction_base& txn, const NewItem& item, const EnqueueOptions& options = {});

// Enqueues several items in one statement in `txn`: all or none. Results are in input order. An
// empty `items` runs no statement. No count limit is checked. Throws InvalidArgument for the
// first invalid item ("item <1-based position>: ...") before any statement runs, for what
// validate_new_item checks; from the database for the rest (see above).
std::vector<EnqueueResult> enqueue_batch_in(pqxx::transaction_base& txn, const std::vector<NewItem>& items,
                                            const EnqueueOptions& options = {});

// One-call enqueue, for a producer with nothing else to commit with its items: one autocommit
// statement (one round trip, no BEGIN/COMMIT); when it returns, the items are committed and
// visible to consumers. Parked zones' pointers are moved in that statement (as
// pull_in_transaction does; it commits at once, so it holds them only that long). `conn` must have
// no transaction open (libpqxx refuses a second one). Same validation and results as enqueue_in /
// enqueue_batch_in (the batch: all or none). If the connection breaks during the call, whether the
// items were committed is unknown (pqxx::broken_connection): retry with a client_item_id to make
// the retry safe. Thread safety: one thread per connection.
EnqueueResult enqueue(pqxx::connection_base& conn, const NewItem& item);
std::vector<EnqueueResult> enqueue_batch(pqxx::connection_base& conn, const std::vector<NewItem>& items);

// Throws InvalidArgument naming the first field of `item` that the SQL API or Postgres would
// reject (empty/over-long/NUL-containing/non-UTF-8 text, negative delay, invalid JSON, "\u0000"
// in JSON strings), except what only the database checks: the limits in quick.limits (payload
// size, vesting_delay) and JSON numbers too small for numeric (1e-20000). One limit is this
// library's own: JSON numbers beyond the range of a double are refused (jsonb would keep them as
// numeric); send such numbers as strings, or enqueue through SQL.
void validate_new_item(const NewItem& item);

}  // namespace quick
