// ConsumerConfig: validate(), the YAML form and load_config_file(). Pure unit tests: no database.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "quick/config.h"
#include "quick/errors.h"

namespace quick {
namespace {

using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;
using ::testing::HasSubstr;

// The smallest valid YAML; tests append the options they are about.
constexpr const char* kOneDatabase = "databases: [{url: \"host=127.0.0.1 dbname=app\"}]\n";

class ConfigTest : public ::testing::Test {
 protected:
  // The InvalidArgument message `action` throws; fails the test when it throws nothing.
  static std::string error_of(const std::function<void()>& action) {
    try {
      action();
    } catch (const InvalidArgument& error) {
      return error.what();
    }
    ADD_FAILURE() << "expected quick::InvalidArgument";
    return "";
  }
  static std::string yaml_error(const std::string& yaml) {
    return error_of([&] { parse_config_yaml(yaml); });
  }
  static ConsumerConfig valid_config() {
    ConsumerConfig config;
    config.databases.push_back({"main", "host=127.0.0.1 dbname=app"});
    return config;
  }
  static std::string validate_error(const std::function<void(ConsumerConfig&)>& change) {
    ConsumerConfig config = valid_config();
    change(config);
    return error_of([&] { validate(config); });
  }
  // Each case: YAML appended to kOneDatabase, and a part of the expected message.
  static void expect_yaml_errors(const std::vector<std::pair<std::string, std::string>>& cases) {
    for (const auto& [yaml, expected] : cases) {
      SCOPED_TRACE(yaml);
      EXPECT_THAT(yaml_error(kOneDatabase + yaml), HasSubstr(expected));
    }
  }

  // Sets (or with nullptr unsets) an environment variable for the test's duration.
  void set_env(const std::string& name, const char* value) {
    const char* old = std::getenv(name.c_str());
    saved_env_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
    if (value) ::setenv(name.c_str(), value, 1);
    else ::unsetenv(name.c_str());
  }
  void TearDown() override {
    for (auto it = saved_env_.rbegin(); it != saved_env_.rend(); ++it) {
      if (it->second) ::setenv(it->first.c_str(), it->second->c_str(), 1);
      else ::unsetenv(it->first.c_str());
    }
  }

  // A file under a fresh directory of this test's own.
  std::string temp_path(const std::string& name) {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    const auto dir = std::filesystem::path(::testing::TempDir()) /
                     ("quick_config_test_" + std::to_string(::getpid()) + "_" + test->name());
    std::filesystem::create_directories(dir);
    return (dir / name).string();
  }
  static void write_file(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_env_;
};

// ---- Defaults and accessors ----------------------------------------------------------------

TEST_F(ConfigTest, DefaultsWithOneDatabaseAreValid) {
  const ConsumerConfig config = valid_config();
  EXPECT_NO_THROW(validate(config));
  EXPECT_EQ(config.unhandled_job_types, UnhandledJobTypeAction::kRelease);
  EXPECT_EQ(config.unhandled_job_type_delay, minutes(1));
  EXPECT_EQ(config.default_job_type.permanent_failure_exit_code, 65);  // EX_DATAERR
  EXPECT_EQ(kTransientFailureExitCode, 75);                            // EX_TEMPFAIL
  EXPECT_EQ(config.effective_lease_extend_interval(), seconds(10));
  EXPECT_EQ(config.effective_prefetch_zones(), 8);
}

TEST_F(ConfigTest, MinimalYamlGivesTheDefaultsAndNamesTheDatabase) {
  const ConsumerConfig config = parse_config_yaml(kOneDatabase);
  const ConsumerConfig defaults;
  ASSERT_EQ(config.databases.size(), 1u);
  EXPECT_EQ(config.databases[0].name, "db1");
  EXPECT_EQ(config.databases[0].url, "host=127.0.0.1 dbname=app");
  EXPECT_EQ(config.consumer_id, "");
  EXPECT_EQ(config.scanner.peek_max, defaults.scanner.peek_max);
  EXPECT_EQ(config.manager.p_duration, defaults.manager.p_duration);
  EXPECT_FALSE(config.worker.lease_extend_interval.has_value());
  EXPECT_FALSE(config.worker.prefetch_zones.has_value());
  EXPECT_EQ(config.default_job_type.execution_bound, minutes(5));
  EXPECT_TRUE(config.job_types.empty());
  EXPECT_EQ(config.stop_deadline, defaults.stop_deadline);
}

TEST_F(ConfigTest, EmptySectionsMeanDefaults) {
  const ConsumerConfig config = parse_config_yaml(std::string(kOneDatabase) +
                                                  "scanner:\nmanager: {}\njob_types:\n  x:\n");
  EXPECT_EQ(config.scanner.peek_max, 1000);
  EXPECT_EQ(config.job_types.at("x").execution_bound, minutes(5));
}

TEST_F(ConfigTest, FullExampleParsesToTheGivenValues) {
  const ConsumerConfig config = parse_config_yaml(R"(
consumer_id: worker-1
databases:
  - name: main
    url: "host=127.0.0.1 port=5432 dbname=app"
  - url: "postgresql://quick@db2.example/app"
scanner:   { peek_max: 500, selection_frac: 0.05, selection_max: 300, processing_bound: 7000,
             idle_poll_interval: 50ms, min_scan_interval: 7ms, listen_for_wakeups: false,
             listening_poll_interval: 3s,
             in_order_election: false, in_order_lease_duration: 7s,
             partition_grace: 250ms, pulls_per_scan: 123 }
manager:   { threads: 3, dequeue_max: 20, p_duration: 1500ms, min_inactive: 2m,
             pointers_per_batch: 8, pointers_per_batch_alone: 32 }
worker:    { threads: 16, item_lease_duration: 1m, lease_extend_interval: 15s, prefetch_zones: 4,
             ack_interval: 10ms, ack_batch_max: 500 }
stop_deadline: 20s
reconnect_delay_max: 30s
unhandled_job_types: dead_letter
unhandled_job_type_delay: 5m
default_job_type:
  execution_bound: 10m
job_types:
  send_email:
    execution_bound: 30s
    max_in_flight: 4
    command: ["/usr/local/bin/send-email", "--json"]
    permanent_failure_exit_code: 64
    retry: { inline_retries: 1, max_attempts: 10, give_up_after: 24h, backoff_base: 1s,
             backoff_max: 10m, backoff_jitter: 0.5, on_permanent_failure: delete }
)");
  EXPECT_EQ(config.consumer_id, "worker-1");
  ASSERT_EQ(config.databases.size(), 2u);
  EXPECT_EQ(config.databases[0].name, "main");
  EXPECT_EQ(config.databases[0].url, "host=127.0.0.1 port=5432 dbname=app");
  EXPECT_EQ(config.databases[1].name, "db2");
  EXPECT_EQ(config.databases[1].url, "postgresql://quick@db2.example/app");

  EXPECT_EQ(config.scanner.peek_max, 500);
  EXPECT_DOUBLE_EQ(config.scanner.selection_frac, 0.05);
  EXPECT_EQ(config.scanner.selection_max, 300);
  EXPECT_EQ(config.scanner.processing_bound, 7000);
  EXPECT_EQ(config.scanner.idle_poll_interval, Millis(50));
  EXPECT_EQ(config.scanner.min_scan_interval, Millis(7));
  EXPECT_FALSE(config.scanner.listen_for_wakeups);
  EXPECT_EQ(config.scanner.listening_poll_interval, seconds(3));
  EXPECT_FALSE(config.scanner.in_order_election);
  EXPECT_EQ(config.scanner.in_order_lease_duration, seconds(7));
  EXPECT_EQ(config.scanner.partition_grace, std::chrono::milliseconds(250));
  EXPECT_EQ(config.scanner.pulls_per_scan, 123);

  EXPECT_EQ(config.manager.threads, 3);
  EXPECT_EQ(config.manager.dequeue_max, 20);
  EXPECT_EQ(config.manager.p_duration, Millis(1500));
  EXPECT_EQ(config.manager.min_inactive, minutes(2));
  EXPECT_EQ(config.manager.pointers_per_batch, 8);
  EXPECT_EQ(config.manager.pointers_per_batch_alone, 32);

  EXPECT_EQ(config.worker.threads, 16);
  EXPECT_EQ(config.worker.item_lease_duration, minutes(1));
  EXPECT_EQ(config.effective_lease_extend_interval(), seconds(15));
  EXPECT_EQ(config.effective_prefetch_zones(), 4);
  EXPECT_EQ(config.worker.ack_interval, Millis(10));
  EXPECT_EQ(config.worker.ack_batch_max, 500);

  EXPECT_EQ(config.stop_deadline, seconds(20));
  EXPECT_EQ(config.reconnect_delay_max, seconds(30));
  EXPECT_EQ(config.unhandled_job_types, UnhandledJobTypeAction::kDeadLetter);
  EXPECT_EQ(config.unhandled_job_type_delay, minutes(5));
  EXPECT_EQ(config.default_job_type.execution_bound, minutes(10));

  const JobTypeConfig& email = config.job_type("send_email");
  EXPECT_EQ(email.execution_bound, seconds(30));
  EXPECT_EQ(email.max_in_flight, 4);
  EXPECT_EQ(email.command, (std::vector<std::string>{"/usr/local/bin/send-email", "--json"}));
  EXPECT_EQ(email.permanent_failure_exit_code, 64);
  EXPECT_EQ(email.retry.inline_retries, 1);
  EXPECT_EQ(email.retry.max_attempts, 10);
  EXPECT_EQ(email.retry.give_up_after, hours(24));
  EXPECT_EQ(email.retry.backoff_base, seconds(1));
  EXPECT_EQ(email.retry.backoff_max, minutes(10));
  EXPECT_DOUBLE_EQ(email.retry.backoff_jitter, 0.5);
  EXPECT_EQ(email.retry.on_permanent_failure, PermanentFailureAction::kDelete);
  EXPECT_EQ(&config.job_type("unlisted"), &config.default_job_type);
}

// ---- Ranges ----------------------------------------------------------------------------------

TEST_F(ConfigTest, ScannerRangesNameTheOption) {
  expect_yaml_errors({
      {"scanner: {peek_max: 0}", "scanner.peek_max must be between 1 and 100000, got 0"},
      {"scanner: {peek_max: 100001}", "scanner.peek_max must be between 1 and 100000, got 100001"},
      {"scanner: {selection_frac: 0}", "scanner.selection_frac must be > 0 and <= 1, got 0"},
      {"scanner: {selection_frac: 1.5}", "scanner.selection_frac must be > 0 and <= 1, got 1.5"},
      {"scanner: {selection_frac: .nan}", "scanner.selection_frac must be > 0 and <= 1"},
      {"scanner: {selection_max: 0}", "scanner.selection_max must be >= 1, got 0"},
      {"scanner: {processing_bound: -1}", "scanner.processing_bound must be >= 1, got -1"},
      {"scanner: {idle_poll_interval: 0ms}", "scanner.idle_poll_interval must be between 1ms and 10s, got 0s"},
      {"scanner: {idle_poll_interval: 11s}", "scanner.idle_poll_interval must be between 1ms and 10s, got 11s"},
      {"scanner: {min_scan_interval: 2s}", "scanner.min_scan_interval must be between 0s and 1s, got 2s"},
      {"scanner: {min_scan_interval: -1ms}", "scanner.min_scan_interval"},
      {"scanner: {listening_poll_interval: 0ms}",
       "scanner.listening_poll_interval must be between 1ms and 10m, got 0s"},
      {"scanner: {listening_poll_interval: 11m}",
       "scanner.listening_poll_interval must be between 1ms and 10m, got 11m"},
      {"scanner: {listen_for_wakeups: sometimes}", "scanner.listen_for_wakeups"},
      {"scanner: {in_order_lease_duration: 999ms}",
       "scanner.in_order_lease_duration must be between 1s and 10m, got 999ms"},
      {"scanner: {in_order_lease_duration: 11m}",
       "scanner.in_order_lease_duration must be between 1s and 10m, got 11m"},
      {"scanner: {partition_grace: 11m}", "scanner.partition_grace must be between 0s and 10m, got 11m"},
      {"scanner: {pulls_per_scan: 0}", "scanner.pulls_per_scan must be >= 1, got 0"},
  });
}

TEST_F(ConfigTest, ManagerRangesNameTheOption) {
  expect_yaml_errors({
      {"manager: {threads: 0}", "manager.threads must be between 1 and 256, got 0"},
      {"manager: {threads: 257}", "manager.threads must be between 1 and 256, got 257"},
      {"manager: {dequeue_max: 0}", "manager.dequeue_max must be between 1 and 10000, got 0"},
      {"manager: {dequeue_max: 10001}", "manager.dequeue_max must be between 1 and 10000"},
      {"manager: {p_duration: 99ms}", "manager.p_duration must be between 100ms and 10m, got 99ms"},
      {"manager: {p_duration: 601s}", "manager.p_duration must be between 100ms and 10m, got 601s"},
      {"manager: {min_inactive: 25h}", "manager.min_inactive must be between 0s and 24h, got 25h"},
      {"manager: {pointers_per_batch: 0}", "manager.pointers_per_batch must be between 1 and 1000"},
      {"manager: {pointers_per_batch: 1001}", "manager.pointers_per_batch must be between 1 and 1000"},
      {"manager: {pointers_per_batch_alone: -1}", "manager.pointers_per_batch_alone must be between 0 and 1000"},
      {"manager: {pointers_per_batch_alone: 1001}", "manager.pointers_per_batch_alone must be between 0 and 1000"},
  });
  EXPECT_NO_THROW(parse_config_yaml(std::string(kOneDatabase) + "manager: {min_inactive: 0s}"));
}

TEST_F(ConfigTest, WorkerRangesNameTheOption) {
  expect_yaml_errors({
      {"worker: {threads: 0}", "worker.threads must be between 1 and 1024, got 0"},
      {"worker: {threads: 1025}", "worker.threads must be between 1 and 1024, got 1025"},
      {"worker: {item_lease_duration: 999ms}", "worker.item_lease_duration must be between 1s and 24h, got 999ms"},
      {"worker: {item_lease_duration: 25h}", "worker.item_lease_duration must be between 1s and 24h, got 25h"},
      {"worker: {lease_extend_interval: 0s}", "worker.lease_extend_interval must be >= 1ms, got 0s"},
      {"worker: {prefetch_zones: -1}", "worker.prefetch_zones must be between 0 and 100000, got -1"},
      {"worker: {prefetch_zones: 100001}", "worker.prefetch_zones must be between 0 and 100000"},
      {"worker: {ack_interval: 0s}", "worker.ack_interval must be between 1ms and 10s, got 0s"},
      {"worker: {ack_interval: 11s}", "worker.ack_interval must be between 1ms and 10s, got 11s"},
      {"worker: {ack_batch_max: 0}", "worker.ack_batch_max must be between 1 and 100000, got 0"},
      {"worker: {ack_batch_max: 100001}", "worker.ack_batch_max must be between 1 and 100000"},
  });
  EXPECT_EQ(parse_config_yaml(std::string(kOneDatabase) + "worker: {prefetch_zones: 0}").effective_prefetch_zones(), 0);
}

TEST_F(ConfigTest, LeaseExtendIntervalMustBeBelowTheItemLease) {
  EXPECT_THAT(yaml_error(std::string(kOneDatabase) + "worker: {item_lease_duration: 30s, lease_extend_interval: 30s}"),
              HasSubstr("worker.lease_extend_interval (30s) must be < item_lease_duration (30s)"));
  EXPECT_NO_THROW(
      parse_config_yaml(std::string(kOneDatabase) + "worker: {item_lease_duration: 30s, lease_extend_interval: 29s}"));
  // The default, a third of the lease, is always below it.
  EXPECT_NO_THROW(parse_config_yaml(std::string(kOneDatabase) + "worker: {item_lease_duration: 1s}"));
}

TEST_F(ConfigTest, TopLevelDurationRanges) {
  expect_yaml_errors({
      {"stop_deadline: 61m", "stop_deadline must be between 0s and 1h, got 61m"},
      {"reconnect_delay_max: 9ms", "reconnect_delay_max must be between 10ms and 10m, got 9ms"},
      {"reconnect_delay_max: 11m", "reconnect_delay_max must be between 10ms and 10m, got 11m"},
  });
}

TEST_F(ConfigTest, UnhandledJobTypesIsReleaseOrDeadLetterWithADelayOfOneSecondToOneDay) {
  EXPECT_EQ(parse_config_yaml(std::string(kOneDatabase) + "unhandled_job_types: release").unhandled_job_types,
            UnhandledJobTypeAction::kRelease);
  expect_yaml_errors({
      {"unhandled_job_types: delete", "unhandled_job_types must be release or dead_letter, got \"delete\""},
      {"unhandled_job_type_delay: 999ms", "unhandled_job_type_delay must be between 1s and 24h, got 999ms"},
      {"unhandled_job_type_delay: 25h", "unhandled_job_type_delay must be between 1s and 24h, got 25h"},
      {"unhandled_job_type_delay: 60", "unhandled_job_type_delay: '60' has no unit"},
  });
  EXPECT_EQ(parse_config_yaml(std::string(kOneDatabase) + "unhandled_job_type_delay: 1s").unhandled_job_type_delay,
            seconds(1));
}

TEST_F(ConfigTest, JobTypeAndRetryRangesNameTheFullPath) {
  expect_yaml_errors({
      {"job_types: {email: {execution_bound: 0ms}}",
       "job_types.email.execution_bound must be between 1ms and 168h, got 0s"},
      {"job_types: {email: {execution_bound: 169h}}",
       "job_types.email.execution_bound must be between 1ms and 168h, got 169h"},
      {"job_types: {email: {max_in_flight: -1}}", "job_types.email.max_in_flight must be >= 0, got -1"},
      {"job_types: {email: {permanent_failure_exit_code: 0}}",
       "job_types.email.permanent_failure_exit_code must be between 1 and 255, got 0"},
      {"job_types: {email: {permanent_failure_exit_code: 256}}",
       "job_types.email.permanent_failure_exit_code must be between 1 and 255, got 256"},
      {"job_types: {email: {permanent_failure_exit_code: 75}}",
       "job_types.email.permanent_failure_exit_code must not be 75 (EX_TEMPFAIL, which always means a transient "
       "failure)"},
      {"default_job_type: {permanent_failure_exit_code: 75}",
       "default_job_type.permanent_failure_exit_code must not be 75"},
      {"job_types: {email: {retry: {inline_retries: 101}}}",
       "job_types.email.retry.inline_retries must be between 0 and 100, got 101"},
      {"job_types: {email: {retry: {inline_retries: -1}}}",
       "job_types.email.retry.inline_retries must be between 0 and 100, got -1"},
      {"job_types: {email: {retry: {max_attempts: -1}}}", "job_types.email.retry.max_attempts must be >= 0, got -1"},
      {"job_types: {email: {retry: {backoff_base: 0ms}}}",
       "job_types.email.retry.backoff_base must be between 1ms and 24h, got 0s"},
      {"job_types: {email: {retry: {backoff_base: 25h, backoff_max: 30h}}}",
       "job_types.email.retry.backoff_base must be between 1ms and 24h, got 25h"},
      {"job_types: {email: {retry: {backoff_jitter: 1.5}}}",
       "job_types.email.retry.backoff_jitter must be >= 0 and <= 1, got 1.5"},
      {"job_types: {email: {retry: {backoff_jitter: -0.1}}}",
       "job_types.email.retry.backoff_jitter must be >= 0 and <= 1, got -0.1"},
      {"default_job_type: {retry: {max_attempts: -2}}", "default_job_type.retry.max_attempts must be >= 0, got -2"},
  });
  // Negative durations cannot be written in YAML, but can be set in C++.
  EXPECT_THAT(validate_error([](ConsumerConfig& c) { c.default_job_type.retry.give_up_after = Millis(-1); }),
              HasSubstr("default_job_type.retry.give_up_after must be >= 0s, got -1ms"));
}

TEST_F(ConfigTest, BackoffMaxMustNotBeBelowBackoffBase) {
  EXPECT_THAT(
      yaml_error(std::string(kOneDatabase) + "job_types: {email: {retry: {backoff_base: 2s, backoff_max: 1s}}}"),
      HasSubstr("job_types.email.retry.backoff_max (1s) must be >= backoff_base (2s)"));
  // Also when the base comes from default_job_type.
  EXPECT_THAT(yaml_error(std::string(kOneDatabase) + "default_job_type: {retry: {backoff_base: 2m}}\n"
                                                     "job_types: {email: {retry: {backoff_max: 1m}}}"),
              HasSubstr("job_types.email.retry.backoff_max (1m) must be >= backoff_base (2m)"));
}

TEST_F(ConfigTest, JobTypeNamesAreOneToOneHundredCharacters) {
  const std::string long_name(101, 'x');
  EXPECT_THAT(yaml_error(std::string(kOneDatabase) + "job_types: {" + long_name + ": {}}"),
              HasSubstr("must be 1 to 100 characters, got 101 characters"));
  EXPECT_THAT(yaml_error(std::string(kOneDatabase) + "job_types: {\"\": {}}"),
              HasSubstr("must be 1 to 100 characters, got 0 characters"));
  EXPECT_NO_THROW(parse_config_yaml(std::string(kOneDatabase) + "job_types: {" + std::string(100, 'x') + ": {}}"));
}

// ---- Databases -------------------------------------------------------------------------------

TEST_F(ConfigTest, AtLeastOneDatabaseIsRequired) {
  EXPECT_THAT(yaml_error("scanner: {peek_max: 10}"), HasSubstr("databases must list at least one database"));
  EXPECT_THAT(yaml_error("databases: []"), HasSubstr("databases must list at least one database"));
  EXPECT_THAT(yaml_error(""), HasSubstr("databases must list at least one database"));
  EXPECT_THAT(error_of([] { validate(ConsumerConfig{}); }), HasSubstr("databases must list at least one database"));
}

TEST_F(ConfigTest, MalformedUrlNamesTheDatabase) {
  EXPECT_THAT(yaml_error("databases:\n  - url: \"dbname=app\"\n  - url: \"nonsense\"\n"),
              HasSubstr("databases[1].url: malformed connection string"));
  EXPECT_THAT(validate_error([](ConsumerConfig& c) { c.databases[0].url = ""; }),
              HasSubstr("databases[0].url must not be empty"));
}

TEST_F(ConfigTest, UrlEnvReadsTheEnvironment) {
  set_env("QUICK_CONFIG_TEST_URL", "host=db.example dbname=app");
  const ConsumerConfig config = parse_config_yaml("databases: [{name: main, url_env: QUICK_CONFIG_TEST_URL}]");
  EXPECT_EQ(config.databases.at(0).url, "host=db.example dbname=app");
}

TEST_F(ConfigTest, UrlEnvUnsetNamesTheVariable) {
  set_env("QUICK_CONFIG_TEST_URL", nullptr);
  EXPECT_THAT(yaml_error("databases:\n  - url_env: QUICK_CONFIG_TEST_URL\n"),
              HasSubstr("databases[0].url_env: environment variable \"QUICK_CONFIG_TEST_URL\" is "
                        "not set or empty (line 2, column 14)"));
  set_env("QUICK_CONFIG_TEST_URL", "");
  EXPECT_THAT(yaml_error("databases:\n  - url_env: QUICK_CONFIG_TEST_URL\n"),
              HasSubstr("QUICK_CONFIG_TEST_URL\" is not set or empty"));
}

TEST_F(ConfigTest, UrlEnvWithAMalformedUrlNamesTheVariableNotTheValue) {
  set_env("QUICK_CONFIG_TEST_URL", "password=secret nonsense");
  const std::string message = yaml_error("databases: [{url_env: QUICK_CONFIG_TEST_URL}]");
  EXPECT_THAT(message, HasSubstr("databases[0].url_env (QUICK_CONFIG_TEST_URL): malformed connection string"));
  EXPECT_THAT(message, ::testing::Not(HasSubstr("secret")));
}

TEST_F(ConfigTest, EachDatabaseGivesExactlyOneOfUrlAndUrlEnv) {
  EXPECT_THAT(yaml_error("databases: [{name: main}]"), HasSubstr("databases[0] needs url or url_env"));
  EXPECT_THAT(yaml_error("databases: [{url: \"dbname=a\", url_env: X}]"),
              HasSubstr("databases[0]: give url or url_env, not both"));
}

TEST_F(ConfigTest, DatabaseNamesMustBeUnique) {
  EXPECT_THAT(yaml_error("databases:\n  - {name: main, url: \"dbname=a\"}\n"
                         "  - {name: main, url: \"dbname=b\"}\n"),
              HasSubstr("databases[1].name \"main\" is already used by another database"));
  // A default name counts too: the second database is called db2 by default.
  EXPECT_THAT(yaml_error("databases:\n  - {name: db2, url: \"dbname=a\"}\n  - {url: \"dbname=b\"}\n"),
              HasSubstr("databases[1].name \"db2\" is already used"));
  EXPECT_THAT(yaml_error("databases: [{name: \"\", url: \"dbname=a\"}]"),
              HasSubstr("databases[0].name must not be empty"));
}

// ---- Strictness: unknown keys, types, units ---------------------------------------------------

TEST_F(ConfigTest, UnknownKeysAreErrorsNamingTheKeyAndItsLocation) {
  EXPECT_THAT(yaml_error(std::string(kOneDatabase) + "stop_dedline: 5s\n"),
              HasSubstr("unknown option stop_dedline (line 2, column 1); the top level accepts "));
  EXPECT_THAT(yaml_error(std::string(kOneDatabase) + "scanner:\n  peek_maxx: 5\n"),
              HasSubstr("unknown option scanner.peek_maxx (line 3, column 3); scanner accepts "
                        "peek_max, selection_frac"));
  expect_yaml_errors({
      {"job_types: {email: {retry: {backof_base: 1s}}}", "unknown option job_types.email.retry.backof_base"},
      {"job_types: {email: {timeout: 1s}}", "unknown option job_types.email.timeout"},
      {"default_job_type: {retries: 1}", "unknown option default_job_type.retries"},
      {"worker: {lease_extension: 1s}", "unknown option worker.lease_extension"},
  });
  EXPECT_THAT(yaml_error("databases: [{url: \"dbname=a\", password: x}]"),
              HasSubstr("unknown option databases[0].password"));
}

TEST_F(ConfigTest, RepeatedKeysAreErrors) {
  EXPECT_THAT(yaml_error(std::string(kOneDatabase) + "manager:\n  threads: 2\n  threads: 3\n"),
              HasSubstr("manager.threads is given more than once (line 4, column 3)"));
  EXPECT_THAT(yaml_error(std::string(kOneDatabase) + "stop_deadline: 1s\nstop_deadline: 2s\n"),
              HasSubstr("stop_deadline is given more than once (line 3, column 1)"));
  EXPECT_THAT(yaml_error(std::string(kOneDatabase) + "job_types: {a: {}, a: {}}"),
              HasSubstr("job_types.a is given more than once"));
}

TEST_F(ConfigTest, WrongTypesNameTheOption) {
  expect_yaml_errors({
      {"manager: {threads: two}", "manager.threads must be an integer, got \"two\""},
      {"manager: {threads: 2.5}", "manager.threads must be an integer, got \"2.5\""},
      {"manager: {threads: [2]}", "manager.threads must be an integer, got a list"},
      {"manager: {threads: }", "manager.threads must be an integer, got nothing"},
      {"scanner: {selection_frac: lots}", "scanner.selection_frac must be a number, got \"lots\""},
      {"scanner: {in_order_election: maybe}", "scanner.in_order_election must be true or false, got \"maybe\""},
      {"scanner: 5", "scanner must be a mapping of options, got \"5\""},
      {"consumer_id: {a: b}", "consumer_id must be a string, got a mapping"},
      {"job_types: [email]", "job_types must be a mapping of options, got a list"},
      {"worker: {ack_interval: [5ms]}", "worker.ack_interval must be a duration such as 250ms"},
  });
  EXPECT_THAT(yaml_error("databases: {main: \"dbname=a\"}"),
              HasSubstr("databases must be a list of databases, got a mapping"));
  EXPECT_THAT(yaml_error("- a\n- b\n"), HasSubstr("the configuration must be a mapping of options"));
}

// Integers are plain decimal: a leading zero does not make one octal (yaml-cpp read 010000 as
// 4096), and hexadecimal or octal notations are errors naming the option, quoted or not ("0x0"
// was read as 0).
TEST_F(ConfigTest, IntegersArePlainDecimal) {
  const ConsumerConfig config = parse_config_yaml(std::string(kOneDatabase) +
                                                  "worker: {threads: 010}\nmanager: {dequeue_max: 0100}\n");
  EXPECT_EQ(config.worker.threads, 10);
  EXPECT_EQ(config.manager.dequeue_max, 100);
  EXPECT_EQ(parse_config_yaml(std::string(kOneDatabase) + "manager: {visit_max_bytes: \"+0002048\"}\n")
                .manager.visit_max_bytes,
            2048);
  expect_yaml_errors({
      {"worker: {threads: \"0x0\"}", "worker.threads must be an integer, got \"0x0\" (decimal digits only)"},
      {"worker: {threads: 0x10}", "worker.threads must be an integer, got \"0x10\" (decimal digits only)"},
      {"worker: {threads: 0o10}", "worker.threads must be an integer, got \"0o10\" (decimal digits only)"},
      {"worker: {threads: 1_000}", "worker.threads must be an integer, got \"1_000\""},
      {"worker: {threads: \"-\"}", "worker.threads must be an integer, got \"-\""},
      {"worker: {threads: 4294967304}", "worker.threads must be an integer between -2147483648 and 2147483647"},
      {"manager: {visit_max_bytes: 0x400000}", "manager.visit_max_bytes must be an integer, got \"0x400000\""},
      {"manager: {visit_max_bytes: 99999999999999999999}", "manager.visit_max_bytes must be an integer between"},
  });
}

// A file holds one configuration: a second YAML document (after a --- line) was silently ignored.
TEST_F(ConfigTest, ASecondYamlDocumentIsAnError) {
  EXPECT_THAT(yaml_error(std::string(kOneDatabase) + "---\nworker: {threads: 5}\n"),
              HasSubstr("the configuration must be one YAML document, but the text holds 2 (a --- line starts "
                        "another one; the second's content begins at line 3)"));
  EXPECT_THAT(yaml_error("---\n" + std::string(kOneDatabase) + "...\n---\n" + kOneDatabase),
              HasSubstr("must be one YAML document"));
  EXPECT_EQ(parse_config_yaml("---\n" + std::string(kOneDatabase)).databases.size(), 1u);
}

TEST_F(ConfigTest, WrongTypeErrorsGiveTheLineAndColumn) {
  EXPECT_THAT(yaml_error(std::string(kOneDatabase) + "manager:\n  threads: two\n"),
              HasSubstr("manager.threads must be an integer, got \"two\" (line 3, column 12)"));
}

TEST_F(ConfigTest, DurationsMustCarryAUnit) {
  expect_yaml_errors({
      {"manager: {p_duration: 2}", "manager.p_duration: '2' has no unit"},
      {"worker: {ack_interval: 5}", "worker.ack_interval: '5' has no unit"},
      {"stop_deadline: 10 seconds", "stop_deadline: '10 seconds' has an unknown unit"},
      {"manager: {p_duration: soon}", "manager.p_duration: 'soon' is not a duration"},
      {"manager: {p_duration: 1200us}", "manager.p_duration must be a whole number of milliseconds, got 1200us"},
  });
  EXPECT_EQ(parse_config_yaml(std::string(kOneDatabase) + "manager: {p_duration: 1.5s}").manager.p_duration,
            Millis(1500));
}

// ---- Job types -------------------------------------------------------------------------------

TEST_F(ConfigTest, ListedJobTypesInheritFromDefaultJobTypeFieldByField) {
  const ConsumerConfig config = parse_config_yaml(std::string(kOneDatabase) + R"(
job_types:                    # listed before default_job_type on purpose: order does not matter
  email:
    max_in_flight: 4
    retry: { inline_retries: 2 }
  thumbnail:
    execution_bound: 10s
    command: ["/bin/thumb"]
default_job_type:
  execution_bound: 1m
  command: ["/bin/generic"]
  permanent_failure_exit_code: 3
  retry: { max_attempts: 3, backoff_base: 2s, on_permanent_failure: delete }
)");
  const JobTypeConfig& email = config.job_type("email");
  EXPECT_EQ(email.max_in_flight, 4);
  EXPECT_EQ(email.retry.inline_retries, 2);
  EXPECT_EQ(email.execution_bound, minutes(1));
  EXPECT_EQ(email.command, std::vector<std::string>{"/bin/generic"});
  EXPECT_EQ(email.permanent_failure_exit_code, 3);
  EXPECT_EQ(email.retry.max_attempts, 3);
  EXPECT_EQ(email.retry.backoff_base, seconds(2));
  EXPECT_EQ(email.retry.backoff_max, minutes(10));  // the built-in default, never overridden
  EXPECT_EQ(email.retry.on_permanent_failure, PermanentFailureAction::kDelete);

  const JobTypeConfig& thumbnail = config.job_type("thumbnail");
  EXPECT_EQ(thumbnail.execution_bound, seconds(10));
  EXPECT_EQ(thumbnail.command, std::vector<std::string>{"/bin/thumb"});
  EXPECT_EQ(thumbnail.retry.max_attempts, 3);

  EXPECT_EQ(config.job_type("other").execution_bound, minutes(1));
  EXPECT_EQ(config.default_job_type.retry.inline_retries, 0);
}

TEST_F(ConfigTest, CommandStringRunsThroughTheShell) {
  const ConsumerConfig config = parse_config_yaml(std::string(kOneDatabase) +
                                                  "job_types: {email: {command: \"send-email --json | tee log\"}}");
  EXPECT_EQ(config.job_type("email").command,
            (std::vector<std::string>{"/bin/sh", "-c", "send-email --json | tee log"}));
}

TEST_F(ConfigTest, CommandMustNameAProgram) {
  expect_yaml_errors({
      {"job_types: {email: {command: \"\"}}", "job_types.email.command must not be empty"},
      {"job_types: {email: {command: [\"\", x]}}",
       "job_types.email.command: the program (first element) must not be empty"},
      {"job_types: {email: {command: [a, [b]]}}", "job_types.email.command[1] must be a string, got a list"},
      {"job_types: {email: {command: {a: b}}}", "job_types.email.command must be a list of strings"},
  });
  // Absent or empty: only `quick worker` needs a command, and it checks for itself.
  EXPECT_TRUE(parse_config_yaml(std::string(kOneDatabase) + "job_types: {email: {command: []}}")
                  .job_type("email")
                  .command.empty());
}

// environment: the variables a `quick worker` command inherits besides the fixed allow-list. A
// job type's list replaces default_job_type's, as every other key does.
TEST_F(ConfigTest, EnvironmentListsVariableNamesAndAJobTypesListReplacesTheDefault) {
  const ConsumerConfig config = parse_config_yaml(std::string(kOneDatabase) + R"(
default_job_type: { environment: [HTTP_PROXY, _PRIVATE2] }
job_types:
  inherits: {}
  replaces: { environment: [AWS_REGION] }
  clears: { environment: [] }
)");
  EXPECT_EQ(config.default_job_type.environment, (std::vector<std::string>{"HTTP_PROXY", "_PRIVATE2"}));
  EXPECT_EQ(config.job_type("inherits").environment, (std::vector<std::string>{"HTTP_PROXY", "_PRIVATE2"}));
  EXPECT_EQ(config.job_type("replaces").environment, std::vector<std::string>{"AWS_REGION"});
  EXPECT_TRUE(config.job_type("clears").environment.empty());
  EXPECT_TRUE(parse_config_yaml(kOneDatabase).default_job_type.environment.empty());
}

TEST_F(ConfigTest, EnvironmentRefusesBadNamesAndTheDatabasesVariables) {
  expect_yaml_errors({
      {"job_types: {email: {environment: HOME}}",
       "job_types.email.environment must be a list of environment variable names, got \"HOME\""},
      {"job_types: {email: {environment: [[A]]}}", "job_types.email.environment[0] must be a string, got a list"},
      {"job_types: {email: {environment: [OK, \"A=B\"]}}",
       "job_types.email.environment[1] must be an environment variable name (letters, digits and _, not starting "
       "with a digit), got \"A=B\""},
      {"job_types: {email: {environment: [\"\"]}}", "job_types.email.environment[0] must be an environment variable"},
      {"job_types: {email: {environment: [1ABC]}}", "job_types.email.environment[0] must be an environment variable"},
      {"job_types: {email: {environment: [\"WITH SPACE\"]}}",
       "job_types.email.environment[0] must be an environment variable"},
      {"default_job_type: {environment: [PGPASSWORD]}",
       "default_job_type.environment[0] (PGPASSWORD): variables starting with PG or QUICK_ are never passed"},
      {"job_types: {email: {environment: [QUICK_DATABASE_URL]}}",
       "job_types.email.environment[0] (QUICK_DATABASE_URL): variables starting with PG or QUICK_"},
  });
  set_env("QUICK_CONFIG_TEST_URL", "host=db.example dbname=app");
  EXPECT_THAT(yaml_error("databases: [{url_env: QUICK_CONFIG_TEST_URL}, {url_env: APP_DB_URL}]\n"
                         "job_types: {email: {environment: [HOME_DIR, APP_DB_URL]}}"),
              HasSubstr("databases[1].url_env: environment variable \"APP_DB_URL\" is not set or empty"));
  set_env("APP_DB_URL", "host=db.example dbname=other");
  EXPECT_THAT(yaml_error("databases: [{url_env: QUICK_CONFIG_TEST_URL}, {url_env: APP_DB_URL}]\n"
                         "job_types: {email: {environment: [HOME_DIR, APP_DB_URL]}}"),
              HasSubstr("job_types.email.environment[1] (APP_DB_URL) is a database's url_env: job commands never "
                        "get database URLs"));
  EXPECT_THAT(validate_error([](ConsumerConfig& c) { c.default_job_type.environment = {"PGHOST"}; }),
              HasSubstr("default_job_type.environment[0] (PGHOST)"));
}

TEST_F(ConfigTest, OnPermanentFailureAcceptsDeadItemsOrDelete) {
  const auto action = [](const std::string& value) {
    return parse_config_yaml(std::string(kOneDatabase) + "default_job_type: {retry: {on_permanent_failure: " + value +
                             "}}")
        .default_job_type.retry.on_permanent_failure;
  };
  EXPECT_EQ(action("dead_items"), PermanentFailureAction::kMoveToDeadItems);
  EXPECT_EQ(action("delete"), PermanentFailureAction::kDelete);
  EXPECT_THAT(yaml_error(std::string(kOneDatabase) + "default_job_type: {retry: {on_permanent_failure: drop}}"),
              HasSubstr("default_job_type.retry.on_permanent_failure must be dead_items or delete, "
                        "got \"drop\""));
}

// ---- Syntax errors and files ---------------------------------------------------------------

TEST_F(ConfigTest, SyntaxErrorsGiveLineAndColumn) {
  EXPECT_THAT(yaml_error(std::string(kOneDatabase) + "scanner: {peek_max: 1\n"),
              HasSubstr("YAML syntax error at line 3"));
}

TEST_F(ConfigTest, LoadConfigFileReadsTheFile) {
  const std::string path = temp_path("worker.yaml");
  write_file(path, std::string(kOneDatabase) + "manager: {threads: 5}\n");
  EXPECT_EQ(load_config_file(path).manager.threads, 5);
}

TEST_F(ConfigTest, LoadConfigFileNamesAMissingFile) {
  const std::string path = temp_path("missing.yaml");
  EXPECT_THAT(error_of([&] { load_config_file(path); }),
              HasSubstr("cannot read configuration file " + path + ": No such file or directory"));
  EXPECT_THAT(error_of([&] { load_config_file(std::filesystem::path(path).parent_path().string()); }),
              HasSubstr("it is a directory"));
}

TEST_F(ConfigTest, LoadConfigFileNamesTheFileLineAndColumnOfASyntaxError) {
  const std::string path = temp_path("broken.yaml");
  write_file(path, std::string(kOneDatabase) + "manager:\n  threads: [2\n");
  EXPECT_THAT(error_of([&] { load_config_file(path); }),
              ::testing::MatchesRegex(path + ": YAML syntax error at line [0-9]+, column [0-9]+: .*"));
}

TEST_F(ConfigTest, LoadConfigFileNamesTheFileOfAnInvalidValue) {
  const std::string path = temp_path("invalid.yaml");
  write_file(path, std::string(kOneDatabase) + "manager: {dequeue_max: 0}\n");
  EXPECT_EQ(error_of([&] { load_config_file(path); }),
            path + ": manager.dequeue_max must be between 1 and 10000, got 0");
}

// ---- The documentation's example -------------------------------------------------------------

// The first ```yaml block of docs/configuration.md, so that the documented example never rots.
std::string documented_example() {
  const auto docs = std::filesystem::path(__FILE__).parent_path().parent_path().parent_path() / "docs" /
                    "configuration.md";
  std::ifstream file(docs);
  EXPECT_TRUE(file) << "cannot read " << docs;
  std::string line;
  std::string yaml;
  bool inside = false;
  while (std::getline(file, line)) {
    if (!inside && line == "```yaml") {
      inside = true;
    } else if (inside && line == "```") {
      return yaml;
    } else if (inside) {
      yaml += line + "\n";
    }
  }
  ADD_FAILURE() << "no ```yaml block in " << docs;
  return yaml;
}

TEST_F(ConfigTest, DocumentedExampleParses) {
  set_env("QUICK_DATABASE_URL", "host=127.0.0.1 dbname=archive");
  const ConsumerConfig config = parse_config_yaml(documented_example());
  ASSERT_EQ(config.databases.size(), 2u);
  EXPECT_EQ(config.databases[0].name, "main");
  EXPECT_EQ(config.databases[1].url, "host=127.0.0.1 dbname=archive");
  EXPECT_EQ(config.job_type("send_email").max_in_flight, 4);
  EXPECT_EQ(config.job_type("send_email").retry.backoff_jitter, 0.2);
  EXPECT_EQ(config.job_type("resize_image").command.at(0), "/bin/sh");
  EXPECT_EQ(config.job_type("resize_image").retry.on_permanent_failure, PermanentFailureAction::kDelete);
}

// The example's comments claim to show the defaults; hold them to it.
TEST_F(ConfigTest, DocumentedExampleShowsTheDefaults) {
  set_env("QUICK_DATABASE_URL", "host=127.0.0.1 dbname=archive");
  const ConsumerConfig documented = parse_config_yaml(documented_example());
  const ConsumerConfig defaults;
  EXPECT_EQ(documented.scanner.peek_max, defaults.scanner.peek_max);
  EXPECT_EQ(documented.scanner.selection_frac, defaults.scanner.selection_frac);
  EXPECT_EQ(documented.scanner.selection_max, defaults.scanner.selection_max);
  EXPECT_EQ(documented.scanner.processing_bound, defaults.scanner.processing_bound);
  EXPECT_EQ(documented.scanner.idle_poll_interval, defaults.scanner.idle_poll_interval);
  EXPECT_EQ(documented.scanner.min_scan_interval, defaults.scanner.min_scan_interval);
  EXPECT_EQ(documented.scanner.listen_for_wakeups, defaults.scanner.listen_for_wakeups);
  EXPECT_EQ(documented.scanner.listening_poll_interval, defaults.scanner.listening_poll_interval);
  EXPECT_EQ(documented.scanner.in_order_election, defaults.scanner.in_order_election);
  EXPECT_EQ(documented.scanner.in_order_lease_duration, defaults.scanner.in_order_lease_duration);
  EXPECT_EQ(documented.scanner.partition_grace, defaults.scanner.partition_grace);
  EXPECT_EQ(documented.scanner.pulls_per_scan, defaults.scanner.pulls_per_scan);
  EXPECT_EQ(documented.manager.threads, defaults.manager.threads);
  EXPECT_EQ(documented.manager.dequeue_max, defaults.manager.dequeue_max);
  EXPECT_EQ(documented.manager.p_duration, defaults.manager.p_duration);
  EXPECT_EQ(documented.manager.min_inactive, defaults.manager.min_inactive);
  EXPECT_EQ(documented.manager.pointers_per_batch, defaults.manager.pointers_per_batch);
  EXPECT_EQ(documented.manager.pointers_per_batch_alone, defaults.manager.pointers_per_batch_alone);
  EXPECT_EQ(documented.worker.threads, defaults.worker.threads);
  EXPECT_EQ(documented.worker.item_lease_duration, defaults.worker.item_lease_duration);
  EXPECT_EQ(documented.effective_lease_extend_interval(), defaults.effective_lease_extend_interval());
  EXPECT_EQ(documented.effective_prefetch_zones(), defaults.effective_prefetch_zones());
  EXPECT_EQ(documented.worker.ack_interval, defaults.worker.ack_interval);
  EXPECT_EQ(documented.worker.ack_batch_max, defaults.worker.ack_batch_max);
  EXPECT_EQ(documented.stop_deadline, defaults.stop_deadline);
  EXPECT_EQ(documented.reconnect_delay_max, defaults.reconnect_delay_max);
  EXPECT_EQ(documented.unhandled_job_types, defaults.unhandled_job_types);
  EXPECT_EQ(documented.unhandled_job_type_delay, defaults.unhandled_job_type_delay);
  const JobTypeConfig& job = documented.default_job_type;
  const JobTypeConfig& built_in = defaults.default_job_type;
  EXPECT_EQ(job.execution_bound, built_in.execution_bound);
  EXPECT_EQ(job.max_in_flight, built_in.max_in_flight);
  EXPECT_EQ(job.permanent_failure_exit_code, built_in.permanent_failure_exit_code);
  EXPECT_EQ(job.environment, built_in.environment);
  EXPECT_EQ(job.retry.inline_retries, built_in.retry.inline_retries);
  EXPECT_EQ(job.retry.max_attempts, built_in.retry.max_attempts);
  EXPECT_EQ(job.retry.give_up_after, built_in.retry.give_up_after);
  EXPECT_EQ(job.retry.backoff_base, built_in.retry.backoff_base);
  EXPECT_EQ(job.retry.backoff_max, built_in.retry.backoff_max);
  EXPECT_EQ(job.retry.backoff_jitter, built_in.retry.backoff_jitter);
  EXPECT_EQ(job.retry.on_permanent_failure, built_in.retry.on_permanent_failure);
}

}  // namespace
}  // namespace quick
