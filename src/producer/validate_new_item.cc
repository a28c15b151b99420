// Enqueue protocol: its files change together (docs/protocol.md#where-the-enqueue-protocol-lives).
// Client-side twin of quick.check_new_item (sql/functions/argument_checks.sql). It exists so that
// bad input is reported before any statement runs in the caller's transaction: once Postgres
// rejects a statement, the whole transaction is aborted, and the caller's own work with it. So it
// also rejects what the SQL checks never see because the server refuses it earlier: NUL bytes
// (a C-string parameter would silently cut the text short), invalid UTF-8, and "\u0000" inside
// JSON strings (jsonb cannot store it).
#include <nlohmann/json.hpp>

#include "quick/errors.h"
#include "quick/producer.h"
#include "util/text.h"

namespace quick {
namespace {

// Validates JSON syntax and refuses NUL characters in strings and keys, without building a DOM.
class PayloadChecker : public nlohmann::json_sax<nlohmann::json> {
 public:
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t& value) override { return accept_text(value); }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t& value) override { return accept_text(value); }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t position, const std::string& token, const nlohmann::detail::exception& error) override {
    if (error.id == 406) {  // out_of_range.406: valid JSON, but the number does not fit a double
      problem = "payload has the number " + token +
                ", beyond the range this library accepts (a double); "
                "send it as a string, or enqueue through SQL";
    } else {
      problem = "payload is not valid JSON (at byte " + std::to_string(position) + "): " + error.what();
    }
    return false;
  }
  std::string problem;

 private:
  bool accept_text(const string_t& value) {
    if (value.find('\0') == std::string::npos) return true;
    problem = "payload contains a \\u0000 character, which Postgres jsonb cannot store";
    return false;
  }
};

void check_text(const std::string& field, const std::string& value, std::size_t max) {
  if (value.find('\0') != std::string::npos) throw InvalidArgument(field + " must not contain NUL characters");
  if (!util::is_valid_utf8(value)) throw InvalidArgument(field + " is not valid UTF-8");
  const std::size_t length = util::utf8_length(value);
  if (length == 0 || length > max) {
    throw InvalidArgument(field + " must be 1 to " + std::to_string(max) + " characters, got " +
                          std::to_string(length) + " characters");
  }
}

}  // namespace

void validate_new_item(const NewItem& item) {
  check_text("tenant", item.tenant, kMaxTenantLength);
  check_text("job_type", item.job_type, kMaxJobTypeLength);
  if (item.client_item_id) check_text("client_item_id", *item.client_item_id, kMaxClientItemIdLength);
  if (item.vesting_delay.count() < 0) {
    throw InvalidArgument("vesting_delay must be zero or positive, got " + std::to_string(item.vesting_delay.count()) +
                          " ms");
  }
  PayloadChecker checker;
  if (!nlohmann::json::sax_parse(item.payload, &checker)) {
    throw InvalidArgument(checker.problem.empty() ? "payload is not valid JSON" : checker.problem);
  }
}

}  // namespace quick
