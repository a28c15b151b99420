// ConsumerConfig accessors and validate(): every range stated in include/quick/config.h is
// checked here, once, so the consumer's components can trust their settings. Messages name the
// option by its YAML path (docs/configuration.md) and never echo a connection string, which may
// carry a password.
#include "quick/config.h"

#include <set>
#include <sstream>

#include "quick/database.h"
#include "quick/errors.h"
#include "quick/item.h"
#include "util/duration.h"

namespace quick {

const JobTypeConfig& ConsumerConfig::job_type(const std::string& name) const {
  const auto found = job_types.find(name);
  return found == job_types.end() ? default_job_type : found->second;
}
Millis ConsumerConfig::effective_lease_extend_interval() const {
  return worker.lease_extend_interval.value_or(worker.item_lease_duration / 3);
}
int ConsumerConfig::effective_prefetch_zones() const { return worker.prefetch_zones.value_or(worker.threads); }

namespace {

using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

std::string show(Millis duration) { return util::format_duration(duration); }

std::string show(double value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

void check_between(const std::string& option, long long value, long long min, long long max) {
  if (value < min || value > max) {
    throw InvalidArgument(option + " must be between " + std::to_string(min) + " and " + std::to_string(max) +
                          ", got " + std::to_string(value));
  }
}

void check_at_least(const std::string& option, long long value, long long min) {
  if (value < min) {
    throw InvalidArgument(option + " must be >= " + std::to_string(min) + ", got " + std::to_string(value));
  }
}

void check_between(const std::string& option, Millis value, Millis min, Millis max) {
  if (value < min || value > max) {
    throw InvalidArgument(option + " must be between " + show(min) + " and " + show(max) + ", got " + show(value));
  }
}

// Written as !(in range) so that NaN is rejected too.
void check_fraction(const std::string& option, double value, bool zero_allowed) {
  const bool ok = (zero_allowed ? value >= 0 : value > 0) && value <= 1;
  if (!ok) {
    throw InvalidArgument(option + " must be " + (zero_allowed ? ">= 0" : "> 0") + " and <= 1, got " + show(value));
  }
}

std::size_t utf8_length(const std::string& text) {
  std::size_t characters = 0;
  for (unsigned char c : text) {
    if ((c & 0xC0) != 0x80) ++characters;  // count lead bytes, not continuation bytes
  }
  return characters;
}

void validate_databases(const std::vector<DatabaseConfig>& databases) {
  if (databases.empty()) throw InvalidArgument("databases must list at least one database");
  std::set<std::string> names;
  for (std::size_t i = 0; i < databases.size(); ++i) {
    const std::string option = "databases[" + std::to_string(i) + "]";
    const DatabaseConfig& database = databases[i];
    if (database.name.empty()) throw InvalidArgument(option + ".name must not be empty");
    if (!names.insert(database.name).second) {
      throw InvalidArgument(option + ".name \"" + database.name +
                            "\" is already used by another database; names must be unique");
    }
    // An empty string would silently mean "libpq's defaults", most likely an unset variable.
    if (database.url.empty()) throw InvalidArgument(option + ".url must not be empty");
    try {
      validate_connection_string(database.url);
    } catch (const InvalidArgument& error) {
      throw InvalidArgument(option + ".url: " + error.what());
    }
  }
}

void validate_scanner(const ScannerConfig& scanner) {
  check_between("scanner.peek_max", scanner.peek_max, 1, 100000);
  check_fraction("scanner.selection_frac", scanner.selection_frac, /*zero_allowed=*/false);
  check_at_least("scanner.selection_max", scanner.selection_max, 1);
  check_at_least("scanner.processing_bound", scanner.processing_bound, 1);
  check_between("scanner.idle_poll_interval", scanner.idle_poll_interval, Millis(1), seconds(10));
  check_between("scanner.min_scan_interval", scanner.min_scan_interval, Millis(0), seconds(1));
  check_between("scanner.listening_poll_interval", scanner.listening_poll_interval, Millis(1), minutes(10));
  check_between("scanner.partition_grace", scanner.partition_grace, Millis(0), minutes(10));
  check_between("scanner.in_order_lease_duration", scanner.in_order_lease_duration, seconds(1), minutes(10));
  check_at_least("scanner.pulls_per_scan", scanner.pulls_per_scan, 1);
}

void validate_manager(const ManagerConfig& manager) {
  check_between("manager.threads", manager.threads, 1, 256);
  check_between("manager.dequeue_max", manager.dequeue_max, 1, 10000);
  check_between("manager.p_duration", manager.p_duration, Millis(100), minutes(10));
  check_between("manager.min_inactive", manager.min_inactive, Millis(0), hours(24));
  check_between("manager.pointers_per_batch", manager.pointers_per_batch, 1, 1000);
  check_between("manager.pointers_per_batch_alone", manager.pointers_per_batch_alone, 0, 1000);
  check_between("manager.visit_max_bytes", manager.visit_max_bytes, 1024, 1073741824);
}

void validate_worker(const WorkerConfig& worker) {
  check_between("worker.threads", worker.threads, 1, 1024);
  check_between("worker.item_lease_duration", worker.item_lease_duration, seconds(1), hours(24));
  if (worker.lease_extend_interval) {
    const Millis interval = *worker.lease_extend_interval;
    if (interval < Millis(1)) {
      throw InvalidArgument("worker.lease_extend_interval must be >= 1ms, got " + show(interval));
    }
    if (interval >= worker.item_lease_duration) {
      throw InvalidArgument("worker.lease_extend_interval (" + show(interval) + ") must be < item_lease_duration (" +
                            show(worker.item_lease_duration) + ")");
    }
  }
  if (worker.prefetch_zones) check_between("worker.prefetch_zones", *worker.prefetch_zones, 0, 100000);
  check_between("worker.ack_interval", worker.ack_interval, Millis(1), seconds(10));
  check_between("worker.ack_batch_max", worker.ack_batch_max, 1, 100000);
}

void validate_retry(const std::string& prefix, const RetryPolicy& retry) {
  check_between(prefix + "inline_retries", retry.inline_retries, 0, 100);
  check_at_least(prefix + "max_attempts", retry.max_attempts, 0);
  if (retry.give_up_after < Millis(0)) {
    throw InvalidArgument(prefix + "give_up_after must be >= 0s, got " + show(retry.give_up_after));
  }
  check_between(prefix + "backoff_base", retry.backoff_base, Millis(1), hours(24));
  if (retry.backoff_max < retry.backoff_base) {
    throw InvalidArgument(prefix + "backoff_max (" + show(retry.backoff_max) + ") must be >= backoff_base (" +
                          show(retry.backoff_base) + ")");
  }
  check_fraction(prefix + "backoff_jitter", retry.backoff_jitter, /*zero_allowed=*/true);
  if (retry.on_permanent_failure != PermanentFailureAction::kMoveToDeadItems &&
      retry.on_permanent_failure != PermanentFailureAction::kDelete) {
    throw InvalidArgument(prefix + "on_permanent_failure must be dead_items or delete");
  }
}

// A name a shell can export: an ASCII letter or underscore, then letters, digits and underscores.
bool is_variable_name(const std::string& name) {
  if (name.empty() || (name.front() >= '0' && name.front() <= '9')) return false;
  for (char c : name) {
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (!letter && !(c >= '0' && c <= '9') && c != '_') return false;
  }
  return true;
}

// The names a job command may inherit (JobTypeConfig::environment). PG* and QUICK_* are never
// passed on: they carry the worker's database settings and the item's own variables.
void validate_environment(const std::string& option, const std::vector<std::string>& names) {
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string& name = names[i];
    const std::string entry = option + "[" + std::to_string(i) + "]";
    if (!is_variable_name(name)) {
      throw InvalidArgument(entry +
                            " must be an environment variable name (letters, digits and _, not starting "
                            "with a digit), got \"" +
                            name + "\"");
    }
    if (name.rfind("PG", 0) == 0 || name.rfind("QUICK_", 0) == 0) {
      throw InvalidArgument(entry + " (" + name +
                            "): variables starting with PG or QUICK_ are never passed to job commands (database "
                            "settings and the item's own variables)");
    }
  }
}

// `option` is "default_job_type" or "job_types.<name>".
void validate_job_type(const std::string& option, const JobTypeConfig& job_type) {
  check_between(option + ".execution_bound", job_type.execution_bound, Millis(1), hours(24 * 7));
  check_at_least(option + ".max_in_flight", job_type.max_in_flight, 0);
  validate_retry(option + ".retry.", job_type.retry);
  // The command itself is required only by `quick worker`, which checks for it.
  if (!job_type.command.empty() && job_type.command.front().empty()) {
    throw InvalidArgument(option + ".command: the program (first element) must not be empty");
  }
  // 0 means success, and statuses above 255 cannot be reported by a process.
  check_between(option + ".permanent_failure_exit_code", job_type.permanent_failure_exit_code, 1, 255);
  // Commands follow sysexits.h: 75 says "try again later", the opposite of a permanent failure.
  if (job_type.permanent_failure_exit_code == kTransientFailureExitCode) {
    throw InvalidArgument(option +
                          ".permanent_failure_exit_code must not be 75 (EX_TEMPFAIL, which always means a "
                          "transient failure); use another status between 1 and 255, such as 65 (EX_DATAERR)");
  }
  validate_environment(option + ".environment", job_type.environment);
}

}  // namespace

void validate(const ConsumerConfig& config) {
  validate_databases(config.databases);
  validate_scanner(config.scanner);
  validate_manager(config.manager);
  validate_worker(config.worker);
  validate_job_type("default_job_type", config.default_job_type);
  for (const auto& [name, job_type] : config.job_types) {
    const std::size_t length = utf8_length(name);
    if (length == 0 || length > kMaxJobTypeLength) {
      throw InvalidArgument("job_types: the name \"" + name + "\" must be 1 to " + std::to_string(kMaxJobTypeLength) +
                            " characters, got " + std::to_string(length) + " characters");
    }
    validate_job_type("job_types." + name, job_type);
  }
  check_between("stop_deadline", config.stop_deadline, Millis(0), hours(1));
  check_between("reconnect_delay_max", config.reconnect_delay_max, Millis(10), minutes(10));
  if (config.unhandled_job_types != UnhandledJobTypeAction::kRelease &&
      config.unhandled_job_types != UnhandledJobTypeAction::kDeadLetter) {
    throw InvalidArgument("unhandled_job_types must be release or dead_letter");
  }
  check_between("unhandled_job_type_delay", config.unhandled_job_type_delay, seconds(1), hours(24));
}

}  // namespace quick
