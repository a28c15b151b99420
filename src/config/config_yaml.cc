// The YAML form of ConsumerConfig (docs/configuration.md). Parsing is strict so that a typo never
// passes silently: unknown or repeated keys, wrong types and durations without a unit are errors
// naming the option's YAML path and its line and column. Ranges are left to validate(), which
// runs once at the end.
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <utility>

#include <yaml-cpp/yaml.h>

#include "quick/config.h"
#include "quick/database.h"
#include "quick/errors.h"
#include "util/duration.h"

namespace quick {
namespace {

std::string location(const YAML::Node& node) {
  const YAML::Mark mark = node.Mark();
  if (mark.is_null()) return "";
  return " (line " + std::to_string(mark.line + 1) + ", column " + std::to_string(mark.column + 1) + ")";
}

[[noreturn]] void fail(const YAML::Node& node, const std::string& message) {
  throw InvalidArgument(message + location(node));
}

// What was found instead of the expected value, for "must be an integer, got ..." messages.
std::string describe(const YAML::Node& node) {
  if (node.IsScalar()) return "\"" + node.Scalar() + "\"";
  if (node.IsSequence()) return "a list";
  if (node.IsMap()) return "a mapping";
  return "nothing";
}

std::string join(const std::vector<std::string>& words) {
  std::string joined;
  for (const std::string& word : words) joined += (joined.empty() ? "" : ", ") + word;
  return joined;
}

// ---- Single values. `option` is the full YAML path, used in every message. -----------------

template <typename T>
T read_scalar(const YAML::Node& node, const std::string& option, const char* expected) {
  T value{};
  if (!node.IsScalar() || !YAML::convert<T>::decode(node, value)) {
    fail(node, option + " must be " + expected + ", got " + describe(node));
  }
  return value;
}

// Plain decimal only: an optional sign, then digits (a leading zero does not make it octal).
// yaml-cpp would read 010000 as octal (4096) and 0x10 as hexadecimal, quoted or not.
template <typename T>
T read_integer(const YAML::Node& node, const std::string& option) {
  if (!node.IsScalar()) fail(node, option + " must be an integer, got " + describe(node));
  const std::string& text = node.Scalar();
  const std::size_t digits = !text.empty() && (text[0] == '+' || text[0] == '-') ? 1 : 0;
  if (digits == text.size() || text.find_first_not_of("0123456789", digits) != std::string::npos) {
    const bool other_base = text.size() > digits + 1 && text[digits] == '0' &&
                            std::strchr("xXoObB", text[digits + 1]) != nullptr;
    fail(node, option + " must be an integer, got " + describe(node) + (other_base ? " (decimal digits only)" : ""));
  }
  errno = 0;
  const long long value = std::strtoll(text.c_str(), nullptr, 10);
  if (errno == ERANGE || value < std::numeric_limits<T>::min() || value > std::numeric_limits<T>::max()) {
    fail(node, option + " must be an integer between " + std::to_string(std::numeric_limits<T>::min()) + " and " +
                   std::to_string(std::numeric_limits<T>::max()) + ", got " + describe(node));
  }
  return static_cast<T>(value);
}

int read_int(const YAML::Node& node, const std::string& option) { return read_integer<int>(node, option); }
std::int64_t read_int64(const YAML::Node& node, const std::string& option) {
  return read_integer<std::int64_t>(node, option);
}
double read_double(const YAML::Node& node, const std::string& option) {
  return read_scalar<double>(node, option, "a number");
}
bool read_bool(const YAML::Node& node, const std::string& option) {
  return read_scalar<bool>(node, option, "true or false");
}
std::string read_string(const YAML::Node& node, const std::string& option) {
  if (!node.IsScalar()) fail(node, option + " must be a string, got " + describe(node));
  return node.Scalar();
}

Millis read_duration(const YAML::Node& node, const std::string& option) {
  if (!node.IsScalar()) {
    fail(node, option + " must be a duration such as 250ms, 2s or 1m, got " + describe(node));
  }
  std::chrono::microseconds micros{};
  try {
    micros = util::parse_duration(node.Scalar());
  } catch (const std::invalid_argument& error) {
    fail(node, option + ": " + error.what());
  }
  // Every duration option is kept in milliseconds; rounding "1500us" silently would hide a typo.
  if (micros.count() % 1000 != 0) {
    fail(node, option + " must be a whole number of milliseconds, got " + node.Scalar());
  }
  return std::chrono::duration_cast<Millis>(micros);
}

// A sequence is the argv itself; a string is a shell command line.
std::vector<std::string> read_command(const YAML::Node& node, const std::string& option) {
  if (node.IsScalar()) {
    if (node.Scalar().empty()) fail(node, option + " must not be empty");
    return {"/bin/sh", "-c", node.Scalar()};
  }
  if (!node.IsSequence()) {
    fail(node, option + " must be a list of strings (argv) or a shell command string, got " + describe(node));
  }
  std::vector<std::string> argv;
  for (std::size_t i = 0; i < node.size(); ++i) {
    argv.push_back(read_string(node[i], option + "[" + std::to_string(i) + "]"));
  }
  return argv;
}

// A list of environment variable names (JobTypeConfig::environment); validate() checks each name.
std::vector<std::string> read_variable_names(const YAML::Node& node, const std::string& option) {
  if (!node.IsSequence()) fail(node, option + " must be a list of environment variable names, got " + describe(node));
  std::vector<std::string> names;
  for (std::size_t i = 0; i < node.size(); ++i) {
    names.push_back(read_string(node[i], option + "[" + std::to_string(i) + "]"));
  }
  return names;
}

PermanentFailureAction read_permanent_failure_action(const YAML::Node& node, const std::string& option) {
  const std::string value = read_string(node, option);
  if (value == "dead_items") return PermanentFailureAction::kMoveToDeadItems;
  if (value == "delete") return PermanentFailureAction::kDelete;
  fail(node, option + " must be dead_items or delete, got \"" + value + "\"");
}

UnhandledJobTypeAction read_unhandled_job_type_action(const YAML::Node& node, const std::string& option) {
  const std::string value = read_string(node, option);
  if (value == "release") return UnhandledJobTypeAction::kRelease;
  if (value == "dead_letter") return UnhandledJobTypeAction::kDeadLetter;
  fail(node, option + " must be release or dead_letter, got \"" + value + "\"");
}

// ---- Mappings. ------------------------------------------------------------------------------

struct Entry {
  std::string key;
  YAML::Node key_node;  // for the line and column of an unknown key
  YAML::Node value;
};
using Entries = std::vector<Entry>;

// The (key, value) pairs of a mapping, in file order. An absent or empty (null) mapping has none,
// so a section whose options are all commented out means "all defaults". yaml-cpp keeps repeated
// keys and lookups return the first, so repeats are rejected here rather than half-applied.
// `path` is the mapping's YAML path; "" for the top level.
Entries entries_of(const YAML::Node& node, const std::string& path) {
  Entries entries;
  if (!node.IsDefined() || node.IsNull()) return entries;
  const std::string name = path.empty() ? "the configuration" : path;
  if (!node.IsMap()) fail(node, name + " must be a mapping of options, got " + describe(node));
  std::set<std::string> seen;
  for (const auto& entry : node) {
    if (!entry.first.IsScalar()) fail(entry.first, "a key of " + name + " must be a plain name");
    const std::string key = entry.first.Scalar();
    if (!seen.insert(key).second) {
      fail(entry.first, (path.empty() ? key : path + "." + key) + " is given more than once");
    }
    entries.push_back({key, entry.first, entry.second});
  }
  return entries;
}

// A mapping with a fixed set of options: unknown keys are reported before anything is read.
class Section {
 public:
  // `path` is the section's YAML path; "" for the top level.
  Section(const YAML::Node& node, std::string path, std::vector<std::string> known_keys)
      : path_(std::move(path)), entries_(entries_of(node, path_)) {
    for (const Entry& entry : entries_) {
      bool known = false;
      for (const std::string& known_key : known_keys) known = known || entry.key == known_key;
      if (!known) {
        throw InvalidArgument("unknown option " + option(entry.key) + location(entry.key_node) + "; " +
                              (path_.empty() ? "the top level" : path_) + " accepts " + join(known_keys));
      }
    }
  }

  std::string option(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

  // The value of `key`, or an undefined node when the key is absent.
  YAML::Node find(const std::string& key) const {
    for (const Entry& entry : entries_) {
      if (entry.key == key) return entry.value;
    }
    return YAML::Node(YAML::NodeType::Undefined);
  }
  bool has(const std::string& key) const { return find(key).IsDefined(); }

  // Each read_* leaves `out` unchanged when the key is absent, so defaults (or inherited values)
  // stay in place.
  void read(const std::string& key, int& out) const { read_with(key, out, read_int); }
  void read(const std::string& key, std::int64_t& out) const { read_with(key, out, read_int64); }
  void read(const std::string& key, double& out) const { read_with(key, out, read_double); }
  void read(const std::string& key, bool& out) const { read_with(key, out, read_bool); }
  void read(const std::string& key, std::string& out) const { read_with(key, out, read_string); }
  void read(const std::string& key, Millis& out) const { read_with(key, out, read_duration); }
  void read(const std::string& key, std::optional<int>& out) const { read_with(key, out, read_int); }
  void read(const std::string& key, std::optional<Millis>& out) const { read_with(key, out, read_duration); }

 private:
  template <typename Out, typename Reader>
  void read_with(const std::string& key, Out& out, Reader reader) const {
    const YAML::Node value = find(key);
    if (value.IsDefined()) out = reader(value, option(key));
  }

  std::string path_;
  Entries entries_;
};

// ---- The configuration's sections. ------------------------------------------------------------

// `url_variables` receives the url_env names, which no job command may inherit.
std::vector<DatabaseConfig> read_databases(const YAML::Node& node, std::vector<std::string>& url_variables) {
  std::vector<DatabaseConfig> databases;
  if (!node.IsDefined() || node.IsNull()) return databases;  // validate() reports the omission
  if (!node.IsSequence()) fail(node, "databases must be a list of databases, got " + describe(node));
  for (std::size_t i = 0; i < node.size(); ++i) {
    const std::string path = "databases[" + std::to_string(i) + "]";
    const Section section(node[i], path, {"name", "url", "url_env"});
    DatabaseConfig database;
    database.name = "db" + std::to_string(i + 1);
    section.read("name", database.name);
    if (section.has("url") && section.has("url_env")) {
      fail(node[i], path + ": give url or url_env, not both");
    }
    if (section.has("url")) {
      section.read("url", database.url);
    } else if (section.has("url_env")) {
      std::string variable;
      section.read("url_env", variable);
      url_variables.push_back(variable);
      const char* url = variable.empty() ? nullptr : std::getenv(variable.c_str());
      if (url == nullptr || *url == '\0') {
        fail(section.find("url_env"), path + ".url_env: environment variable \"" + variable + "\" is not set or empty");
      }
      database.url = url;
      // Reported here, where the variable's name is known; validate() would only say ".url".
      try {
        validate_connection_string(database.url);
      } catch (const InvalidArgument& error) {
        throw InvalidArgument(path + ".url_env (" + variable + "): " + error.what());
      }
    } else {
      fail(node[i], path + " needs url or url_env");
    }
    databases.push_back(std::move(database));
  }
  return databases;
}

ScannerConfig read_scanner(const YAML::Node& node) {
  const Section section(node, "scanner",
                        {"peek_max", "selection_frac", "selection_max", "processing_bound", "idle_poll_interval",
                         "min_scan_interval", "listen_for_wakeups", "listening_poll_interval", "in_order_election",
                         "in_order_lease_duration", "partition_grace", "pulls_per_scan"});
  ScannerConfig scanner;
  section.read("peek_max", scanner.peek_max);
  section.read("selection_frac", scanner.selection_frac);
  section.read("selection_max", scanner.selection_max);
  section.read("processing_bound", scanner.processing_bound);
  section.read("idle_poll_interval", scanner.idle_poll_interval);
  section.read("min_scan_interval", scanner.min_scan_interval);
  section.read("listen_for_wakeups", scanner.listen_for_wakeups);
  section.read("listening_poll_interval", scanner.listening_poll_interval);
  section.read("in_order_election", scanner.in_order_election);
  section.read("in_order_lease_duration", scanner.in_order_lease_duration);
  section.read("partition_grace", scanner.partition_grace);
  section.read("pulls_per_scan", scanner.pulls_per_scan);
  return scanner;
}

ManagerConfig read_manager(const YAML::Node& node) {
  const Section section(node, "manager",
                        {"threads", "dequeue_max", "p_duration", "min_inactive", "pointers_per_batch",
                         "pointers_per_batch_alone", "visit_max_bytes"});
  ManagerConfig manager;
  section.read("threads", manager.threads);
  section.read("dequeue_max", manager.dequeue_max);
  section.read("p_duration", manager.p_duration);
  section.read("min_inactive", manager.min_inactive);
  section.read("pointers_per_batch", manager.pointers_per_batch);
  section.read("pointers_per_batch_alone", manager.pointers_per_batch_alone);
  section.read("visit_max_bytes", manager.visit_max_bytes);
  return manager;
}

WorkerConfig read_worker(const YAML::Node& node) {
  const Section section(
      node, "worker",
      {"threads", "item_lease_duration", "lease_extend_interval", "prefetch_zones", "ack_interval", "ack_batch_max"});
  WorkerConfig worker;
  section.read("threads", worker.threads);
  section.read("item_lease_duration", worker.item_lease_duration);
  section.read("lease_extend_interval", worker.lease_extend_interval);
  section.read("prefetch_zones", worker.prefetch_zones);
  section.read("ack_interval", worker.ack_interval);
  section.read("ack_batch_max", worker.ack_batch_max);
  return worker;
}

// Overrides the fields of `retry` that the mapping gives; the others keep their inherited value.
void read_retry(const YAML::Node& node, const std::string& path, RetryPolicy& retry) {
  const Section section(node, path,
                        {"inline_retries", "max_attempts", "give_up_after", "backoff_base", "backoff_max",
                         "backoff_jitter", "on_permanent_failure"});
  section.read("inline_retries", retry.inline_retries);
  section.read("max_attempts", retry.max_attempts);
  section.read("give_up_after", retry.give_up_after);
  section.read("backoff_base", retry.backoff_base);
  section.read("backoff_max", retry.backoff_max);
  section.read("backoff_jitter", retry.backoff_jitter);
  const YAML::Node action = section.find("on_permanent_failure");
  if (action.IsDefined()) {
    retry.on_permanent_failure = read_permanent_failure_action(action, section.option("on_permanent_failure"));
  }
}

// Overrides the fields of `job_type` that the mapping gives (see read_retry).
void read_job_type(const YAML::Node& node, const std::string& path, JobTypeConfig& job_type) {
  const Section section(
      node, path,
      {"execution_bound", "max_in_flight", "retry", "command", "permanent_failure_exit_code", "environment"});
  section.read("execution_bound", job_type.execution_bound);
  section.read("max_in_flight", job_type.max_in_flight);
  read_retry(section.find("retry"), section.option("retry"), job_type.retry);
  const YAML::Node command = section.find("command");
  if (command.IsDefined()) job_type.command = read_command(command, section.option("command"));
  section.read("permanent_failure_exit_code", job_type.permanent_failure_exit_code);
  const YAML::Node environment = section.find("environment");
  if (environment.IsDefined()) {
    job_type.environment = read_variable_names(environment, section.option("environment"));
  }
}

// A database's URL must never reach a job command, so no environment list may name a url_env.
void refuse_url_variables(const std::string& option, const JobTypeConfig& job_type,
                          const std::vector<std::string>& url_variables) {
  for (std::size_t i = 0; i < job_type.environment.size(); ++i) {
    const std::string& name = job_type.environment[i];
    if (std::find(url_variables.begin(), url_variables.end(), name) != url_variables.end()) {
      throw InvalidArgument(option + ".environment[" + std::to_string(i) + "] (" + name +
                            ") is a database's url_env: job commands never get database URLs");
    }
  }
}

ConsumerConfig read_config(const YAML::Node& root) {
  const Section section(
      root, "",
      {"consumer_id", "databases", "scanner", "manager", "worker", "stop_deadline", "reconnect_delay_max",
       "unhandled_job_types", "unhandled_job_type_delay", "default_job_type", "job_types"});
  ConsumerConfig config;
  section.read("consumer_id", config.consumer_id);
  std::vector<std::string> url_variables;
  config.databases = read_databases(section.find("databases"), url_variables);
  config.scanner = read_scanner(section.find("scanner"));
  config.manager = read_manager(section.find("manager"));
  config.worker = read_worker(section.find("worker"));
  section.read("stop_deadline", config.stop_deadline);
  section.read("reconnect_delay_max", config.reconnect_delay_max);
  const YAML::Node unhandled = section.find("unhandled_job_types");
  if (unhandled.IsDefined()) {
    config.unhandled_job_types = read_unhandled_job_type_action(unhandled, "unhandled_job_types");
  }
  section.read("unhandled_job_type_delay", config.unhandled_job_type_delay);
  read_job_type(section.find("default_job_type"), "default_job_type", config.default_job_type);
  // Listed job types start from default_job_type and override only what they give.
  for (const Entry& entry : entries_of(section.find("job_types"), "job_types")) {
    JobTypeConfig job_type = config.default_job_type;
    read_job_type(entry.value, "job_types." + entry.key, job_type);
    config.job_types.emplace(entry.key, std::move(job_type));
  }
  refuse_url_variables("default_job_type", config.default_job_type, url_variables);
  for (const auto& [name, job_type] : config.job_types) {
    refuse_url_variables("job_types." + name, job_type, url_variables);
  }
  return config;
}

}  // namespace

ConsumerConfig parse_config_yaml(const std::string& yaml_text) {
  std::vector<YAML::Node> documents;
  try {
    documents = YAML::LoadAll(yaml_text);
  } catch (const YAML::Exception& error) {
    throw InvalidArgument("YAML syntax error at line " + std::to_string(error.mark.line + 1) + ", column " +
                          std::to_string(error.mark.column + 1) + ": " + error.msg);
  }
  // A second document (after a `---` line) would otherwise be ignored without a word.
  if (documents.size() > 1) {
    const YAML::Mark second = documents[1].Mark();
    throw InvalidArgument(
        "the configuration must be one YAML document, but the text holds " + std::to_string(documents.size()) +
        " (a --- line starts another one" +
        (second.is_null() ? "" : "; the second's content begins at line " + std::to_string(second.line + 1)) + ")");
  }
  const YAML::Node root = documents.empty() ? YAML::Node() : documents.front();
  ConsumerConfig config;
  try {
    config = read_config(root);
  } catch (const YAML::Exception& error) {  // not expected: every access above is checked
    throw InvalidArgument(std::string("cannot read the configuration: ") + error.what());
  }
  validate(config);
  return config;
}

ConsumerConfig load_config_file(const std::string& path) {
  // A directory opens fine on Linux and then reads as empty; say what is wrong instead.
  std::error_code ignored;
  if (std::filesystem::is_directory(path, ignored)) {
    throw InvalidArgument("cannot read configuration file " + path + ": it is a directory");
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    throw InvalidArgument("cannot read configuration file " + path + ": " + std::strerror(errno));
  }
  std::ostringstream text;
  text << file.rdbuf();
  if (file.bad()) throw InvalidArgument("cannot read configuration file " + path);
  try {
    return parse_config_yaml(text.str());
  } catch (const InvalidArgument& error) {
    throw InvalidArgument(path + ": " + error.what());
  }
}

}  // namespace quick
