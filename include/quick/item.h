// Queued items: what producers enqueue and what consumers read back.
//
// A queue zone is one tenant's items; within a zone, items are ordered by (priority,
// vesting_time), lower priority values first. All times are read from the database clock.
// The lengths of tenant, job_type and client_item_id are counted in characters (Unicode code
// points), not bytes; all three must be valid UTF-8 without NUL characters.
//
// Thread safety: plain values.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace quick {

// A point in time on the database server's clock.
using DbTime = std::chrono::system_clock::time_point;

// Limits enforced by both this library (validate_new_item, producer.h) and the SQL API
// (quick.enqueue, quick.enqueue_batch).
inline constexpr std::size_t kMaxTenantLength = 200;        // characters
inline constexpr std::size_t kMaxJobTypeLength = 100;       // characters
inline constexpr std::size_t kMaxClientItemIdLength = 200;  // characters

// An item to enqueue.
struct NewItem {
  std::string tenant;    // the queue zone: 1..200 characters, chosen by the application
  std::string job_type;  // 1..100 characters; selects the handler and its retry policy
  // JSON text, stored as jsonb. Default "{}". Its size as JSON text (octet_length(payload::text))
  // may not exceed quick.limits.max_payload_bytes, 1048576 (1 MiB) unless changed; the database
  // checks that one (docs/inspecting.md#change-the-payload-size-limit-and-the-other-limits).
  std::string payload = "{}";
  // Time from the enqueue until the item vests (becomes visible to consumers), in milliseconds.
  // Range >= 0. Default: 0 (vested at once).
  std::chrono::milliseconds vesting_delay{0};
  int priority = 0;  // any int; lower value = more urgent. Default: 0.
  // Optional id chosen by the client, 1..200 characters, unique within the tenant: enqueueing it
  // again while the item still exists inserts nothing and reports a duplicate. Default: none.
  std::optional<std::string> client_item_id;
};

struct EnqueueResult {
  // The new item, or the existing one when duplicate (0 in the rare case that the existing item
  // was completed between the conflict and its lookup).
  std::int64_t item_id = 0;
  bool duplicate = false;  // client_item_id named an item that is still queued
};

// An item as stored in its zone.
struct Item {
  std::int64_t id = 0;
  std::string tenant;
  std::string job_type;
  int priority = 0;
  DbTime vesting_time;                  // for a leased item: when the lease runs out
  std::optional<std::string> lease_id;  // set while (or since) the item was leased
  int error_count = 0;                  // failed attempts recorded so far (>= 0)
  std::string payload;                  // JSON text
  DbTime enqueued_at;
  std::optional<std::string> client_item_id;
  std::optional<std::string> last_error;  // message recorded by the last requeue, if any
};

// What a lease-conditional operation found.
enum class Outcome {
  kDone,       // the operation took effect
  kLeaseLost,  // the item exists but the caller does not hold its lease (another does, or did)
  kItemGone,   // no such item: completed, cancelled, or never existed
};

const char* to_string(Outcome outcome);

// A lease on one item.
struct ItemLease {
  std::int64_t item_id = 0;
  std::string lease_id;  // random uuid; proves ownership to complete/extend/requeue
  DbTime expires_at;     // the item vests again at this time unless the lease is extended
};

}  // namespace quick
