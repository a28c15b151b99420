// Client-side twin of quick.check_new_item (migrations/0001_queue_zones.sql). It exists so that
// bad input is reported before any statement runs in the caller's transaction: once Postgres
// rejects a statement, the whole transaction is aborted, and the caller's own work with it.
#include <nlohmann/json.hpp>

#include "quick/errors.h"
#include "quick/producer.h"

namespace quick {
namespace {

std::size_t utf8_length(const std::string& text) {
  std::size_t characters = 0;
  for (unsigned char c : text) {
    if ((c & 0xC0) != 0x80) ++characters;  // count lead bytes, not continuation bytes
  }
  return characters;
}

void check_length(const std::string& field, const std::string& value, std::size_t max) {
  const std::size_t length = utf8_length(value);
  if (length == 0 || length > max) {
    throw InvalidArgument(field + " must be 1 to " + std::to_string(max) + " characters, got " +
                          std::to_string(length) + " characters");
  }
}

}  // namespace

void validate_new_item(const NewItem& item) {
  check_length("tenant", item.tenant, kMaxTenantLength);
  check_length("job_type", item.job_type, kMaxJobTypeLength);
  if (item.client_item_id) check_length("client_item_id", *item.client_item_id, kMaxClientItemIdLength);
  if (item.vesting_delay.count() < 0) {
    throw InvalidArgument("vesting_delay must be zero or positive, got " +
                          std::to_string(item.vesting_delay.count()) + " ms");
  }
  if (!nlohmann::json::accept(item.payload)) {
    throw InvalidArgument("payload is not valid JSON");
  }
}

}  // namespace quick
