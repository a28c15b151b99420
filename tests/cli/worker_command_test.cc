// `quick worker --config FILE`, end to end, as a subprocess: job types map to commands that get
// the payload on stdin and the item in QUICK_* environment variables; exit 0 completes the item,
// permanent_failure_exit_code buries it in quick.dead_items, anything else retries it with
// backoff; SIGTERM/SIGINT stop it promptly with exit 0 and a stats printout; bad configurations
// and unmigrated databases are refused with a message naming the problem.
#include <gtest/gtest.h>

#include <httplib.h>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <regex>
#include <set>
#include <vector>

#include "quick/quick.h"
#include "support/consumer_helpers.h"
#include "support/eventually.h"
#include "support/metrics_text.h"
#include "support/processes.h"
#include "support/test_database.h"

namespace quick {
namespace {

using namespace testing;

class WorkerCommandTest : public testing::DatabaseTest {
 protected:
  // A worker configuration for this test's database with short intervals; `job_types` is the
  // YAML of the job_types section's entries (indented by 2).
  std::string config_yaml(const std::string& job_types, const std::string& database_url = "") const {
    return R"(consumer_id: cli-worker-test
databases:
  - name: maindb
    url: ")" +
           (database_url.empty() ? url() : database_url) + R"("
scanner:
  idle_poll_interval: 5ms
manager:
  min_inactive: 0s
worker:
  threads: 2
  item_lease_duration: 1s
stop_deadline: 1s
reconnect_delay_max: 200ms
default_job_type:
  environment: [OUT_DIR]
  retry:
    backoff_base: 50ms
    backoff_max: 100ms
    backoff_jitter: 0
job_types:
)" + job_types;
  }

  // Starts `quick worker` with `yaml`; OUT_DIR in its environment is the scratch directory (the
  // configuration passes it on to the commands), `extra_environment` is added to its environment,
  // `extra_arguments` to its command line.
  std::unique_ptr<ChildProcess> start_worker(const std::string& yaml, const std::string& name = "worker",
                                             const std::vector<std::string>& extra_environment = {},
                                             const std::vector<std::string>& extra_arguments = {}) {
    const std::string quick = quick_binary();
    if (quick.empty()) return nullptr;
    const auto config_file = dir_ / (name + ".yaml");
    write_text_file(config_file, yaml);
    std::vector<std::string> environment = {"OUT_DIR=" + dir_.path().string()};
    environment.insert(environment.end(), extra_environment.begin(), extra_environment.end());
    std::vector<std::string> arguments{quick, "worker", "--config", config_file.string(), "--stats-interval", "1s"};
    arguments.insert(arguments.end(), extra_arguments.begin(), extra_arguments.end());
    return std::make_unique<ChildProcess>(arguments, environment, dir_ / (name + ".out"), dir_ / (name + ".err"));
  }

  // Runs `quick worker` with a configuration expected to be refused; returns the ended process.
  std::unique_ptr<ChildProcess> run_refused_worker(const std::string& yaml, const std::string& name) {
    auto worker = start_worker(yaml, name);
    if (worker == nullptr) return nullptr;
    EXPECT_TRUE(worker->wait_for(seconds(30))) << "quick worker with a bad configuration kept running:\n"
                                               << worker->err();
    return worker;
  }

  // SIGTERM, then the process must exit 0 within `limit`.
  void stop_worker(ChildProcess& worker, int signal = SIGTERM, milliseconds limit = seconds(10)) {
    ASSERT_FALSE(worker.exited()) << "quick worker ended by itself (" << worker.describe() << "):\n" << worker.err();
    const auto before = Clock::now();
    worker.signal(signal);
    ASSERT_TRUE(worker.wait_for(limit)) << "quick worker did not stop within " << limit.count() << " ms of signal "
                                        << signal << ":\n"
                                        << worker.err();
    std::cout << "quick worker stopped " << std::chrono::duration_cast<milliseconds>(Clock::now() - before).count()
              << " ms after signal " << signal << std::endl;
    EXPECT_EQ(worker.exit_code(), std::optional<int>(0)) << worker.describe() << "\n" << worker.err();
  }

  std::int64_t enqueue_one(const std::string& tenant, const std::string& job_type, const std::string& payload = "{}") {
    auto conn = connect();
    pqxx::work txn(*conn);
    NewItem item;
    item.tenant = tenant;
    item.job_type = job_type;
    item.payload = payload;
    const auto id = enqueue_in(txn, item).item_id;
    txn.commit();
    return id;
  }

  int count(const std::string& table, const std::string& where = "true") {
    return query_value<int>("SELECT count(*) FROM " + table + " WHERE " + where);
  }

  TempDir dir_;
};

TEST_F(WorkerCommandTest, OkCommandGetsThePayloadOnStdinIntactAndTheItemInItsEnvironment) {
  std::string big(60000, 'x');
  const std::vector<std::pair<std::string, std::string>> payloads = {
      {"acme", R"({"n": 1})"},
      {"acme",
       R"({"text": "quote \" backslash \\ tab \t newline \n unicode é 日本 😀", "nested": {"list": [1, 2.5, null, true]}})"},
      {"zeta", "{\"big\": \"" + big + "\"}"},
  };
  std::map<std::int64_t, std::pair<std::string, std::string>> expected;  // id -> tenant, payload as stored
  for (const auto& [tenant, payload] : payloads) {
    const auto id = enqueue_one(tenant, "ok", payload);
    expected[id] = {tenant,
                    query_value<std::string>("SELECT payload::text FROM quick.items WHERE id = " + std::to_string(id))};
  }
  auto worker = start_worker(config_yaml(R"(  ok:
    command: 'printf "%s|%s|%s|%s|%s\n" "$QUICK_ITEM_ID" "$QUICK_TENANT" "$QUICK_JOB_TYPE" "$QUICK_ATTEMPT" "$QUICK_DATABASE" >> "$OUT_DIR/env.txt" && cat > "$OUT_DIR/payload-$QUICK_ITEM_ID.json"'
)"));
  ASSERT_NE(worker, nullptr);
  const bool done = eventually([&] { return count("quick.items") == 0 || worker->exited(); }, seconds(30));
  stop_worker(*worker);
  ASSERT_TRUE(done) << count("quick.items") << " items not done in 30 s\n" << worker->err();
  EXPECT_EQ(count("quick.dead_items"), 0);

  std::map<std::int64_t, std::vector<std::string>> env;
  for (const auto& line : read_lines(dir_ / "env.txt")) {
    std::vector<std::string> fields;
    std::stringstream stream(line);
    for (std::string field; std::getline(stream, field, '|');) fields.push_back(field);
    ASSERT_EQ(fields.size(), 5u) << line;
    env[std::stoll(fields[0])] = fields;
  }
  ASSERT_EQ(env.size(), expected.size());
  for (const auto& [id, tenant_payload] : expected) {
    ASSERT_EQ(env.count(id), 1u) << "item " << id << " did not run";
    EXPECT_EQ(env[id][1], tenant_payload.first) << "QUICK_TENANT";
    EXPECT_EQ(env[id][2], "ok") << "QUICK_JOB_TYPE";
    EXPECT_EQ(env[id][3], "1") << "QUICK_ATTEMPT";
    EXPECT_EQ(env[id][4], "maindb") << "QUICK_DATABASE";
    const std::string received = read_text_file(dir_ / ("payload-" + std::to_string(id) + ".json"));
    EXPECT_EQ(received.size(), tenant_payload.second.size()) << "item " << id;
    EXPECT_TRUE(received == tenant_payload.second)
        << "item " << id << ": the payload on stdin differs from the stored one";
  }
  const std::string out = worker->out();
  EXPECT_NE(out.find("done=3"), std::string::npos) << "the final stats should count 3 done items:\n" << out;
}

// A command gets its item's QUICK_* variables, PATH, HOME, LANG, LC_* and TZ (those set) and
// the names its job type lists, and nothing else of the worker's environment: not the database
// URL, no PG* variable, no other secret the worker happens to have.
TEST_F(WorkerCommandTest, CommandGetsAnAllowListedEnvironmentOnly) {
  enqueue_one("t1", "show_env");
  std::vector<std::string> worker_environment = {"QUICK_DATABASE_URL=" + url(), "PGPASSWORD=pg-secret-value",
                                                 "PGHOST=pg-host-value",        "APP_SECRET=app-secret-value",
                                                 "LISTED_BY_JOB_TYPE=listed",   "LC_QUICK_TEST=c"};
  if (std::getenv("TZ") == nullptr) worker_environment.push_back("TZ=UTC");
  auto worker = start_worker(config_yaml(R"(  show_env:
    command: 'env > "$OUT_DIR/env.txt"'
    environment: [OUT_DIR, LISTED_BY_JOB_TYPE, NOT_SET_ANYWHERE]
)"),
                             "worker", worker_environment);
  ASSERT_NE(worker, nullptr);
  const bool done = eventually([&] { return count("quick.items") == 0 || worker->exited(); }, seconds(30));
  stop_worker(*worker);
  ASSERT_TRUE(done) << worker->err();

  std::set<std::string> names;
  const std::string env = read_text_file(dir_ / "env.txt");
  for (const auto& line : read_lines(dir_ / "env.txt")) names.insert(line.substr(0, line.find('=')));
  names.erase("PWD");  // set by the shell itself
  std::set<std::string> expected = {"QUICK_ITEM_ID",      "QUICK_TENANT",   "QUICK_JOB_TYPE",
                                    "QUICK_ATTEMPT",      "QUICK_DATABASE", "OUT_DIR",
                                    "LISTED_BY_JOB_TYPE", "LC_QUICK_TEST",  "TZ"};
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string name = std::string(*e).substr(0, std::string(*e).find('='));
    if (name == "PATH" || name == "HOME" || name == "LANG" || name.rfind("LC_", 0) == 0) expected.insert(name);
  }
  EXPECT_EQ(names, expected) << env;
  EXPECT_NE(env.find("LISTED_BY_JOB_TYPE=listed\n"), std::string::npos) << env;
  for (const std::string secret : {"pg-secret-value", "pg-host-value", "app-secret-value"}) {
    EXPECT_EQ(env.find(secret), std::string::npos) << secret << " reached the command:\n" << env;
  }
  EXPECT_EQ(env.find(url()), std::string::npos) << "the database URL reached the command:\n" << env;
}

TEST_F(WorkerCommandTest, PermanentFailureExitCodeMovesTheItemToDeadItemsWithTheReason) {
  const auto default_code = enqueue_one("t1", "fails_permanently", R"({"a": 1})");
  const auto custom_code = enqueue_one("t2", "custom_code");
  auto worker = start_worker(config_yaml(R"(  fails_permanently:
    command: 'echo "$QUICK_ITEM_ID" >> "$OUT_DIR/permanent-runs.txt"; echo cannot do this >&2; exit 65'
  custom_code:
    command: ["sh", "-c", "exit 9"]
    permanent_failure_exit_code: 9
)"));
  ASSERT_NE(worker, nullptr);
  const bool buried = eventually([&] { return count("quick.dead_items") == 2 || worker->exited(); }, seconds(30));
  stop_worker(*worker);
  ASSERT_TRUE(buried) << count("quick.dead_items") << " dead items after 30 s\n" << worker->err();
  EXPECT_EQ(count("quick.items"), 0);
  const auto dead = query("SELECT id, reason, payload::text FROM quick.dead_items ORDER BY id");
  ASSERT_EQ(dead.size(), 2u);
  EXPECT_EQ(dead[0][0].as<std::int64_t>(), default_code);
  const std::string reason = dead[0][1].as<std::string>();
  std::cout << "dead item reasons: [" << reason << "] [" << dead[1][1].as<std::string>() << "]" << std::endl;
  EXPECT_NE(reason.find("exit code 65"), std::string::npos) << reason;
  EXPECT_NE(reason.find("cannot do this"), std::string::npos)
      << "the command's output belongs in the reason: " << reason;
  EXPECT_EQ(read_lines(dir_ / "permanent-runs.txt").size(), 1u) << "a permanent failure is not retried";
  EXPECT_EQ(dead[0][2].as<std::string>(), R"({"a": 1})");
  EXPECT_EQ(dead[1][0].as<std::int64_t>(), custom_code);
  EXPECT_NE(dead[1][1].as<std::string>().find("exit code 9"), std::string::npos) << dead[1][1].as<std::string>();
}

// The error text is the tail of the command's output, where its error usually is, however much
// it printed before.
TEST_F(WorkerCommandTest, TheReasonIsTheTailOfALongOutput) {
  enqueue_one("t1", "verbose");
  auto worker = start_worker(config_yaml(R"(  verbose:
    command: 'head -c 100000 /dev/zero | tr "\0" x; echo; echo FATAL-END-MARKER; exit 65'
)"));
  ASSERT_NE(worker, nullptr);
  const bool buried = eventually([&] { return count("quick.dead_items") == 1 || worker->exited(); }, seconds(30));
  stop_worker(*worker);
  ASSERT_TRUE(buried) << worker->err();
  const std::string reason = query_value<std::string>("SELECT reason FROM quick.dead_items");
  EXPECT_NE(reason.find("FATAL-END-MARKER"), std::string::npos) << reason;
  EXPECT_LT(reason.size(), 1000u) << reason;
}

TEST_F(WorkerCommandTest, OtherExitCodesAreTransientFailuresRequeuedWithBackoff) {
  const auto id = enqueue_one("t1", "fails_transiently");
  auto worker = start_worker(config_yaml(R"(  fails_transiently:
    command: 'echo "$QUICK_ATTEMPT" >> "$OUT_DIR/attempts.txt"; echo transient trouble >&2; exit 3'
    retry:
      max_attempts: 0
)"));
  ASSERT_NE(worker, nullptr);
  const std::string item = "quick.items i WHERE i.id = " + std::to_string(id);
  const bool retried = eventually(
      [&] { return query_value<int>("SELECT coalesce(max(error_count), 0) FROM " + item) >= 3 || worker->exited(); },
      seconds(45));
  stop_worker(*worker);
  ASSERT_TRUE(retried) << "error_count is only " << query_value<int>("SELECT max(error_count) FROM " + item) << "\n"
                       << worker->err();
  EXPECT_EQ(count("quick.dead_items"), 0);
  const auto row = query("SELECT error_count, last_error, lease_id IS NULL FROM " + item);
  ASSERT_EQ(row.size(), 1u) << "the item must still be queued";
  const std::string last_error = row[0][1].as<std::string>();
  std::cout << "after " << row[0][0].as<int>() << " failed attempts, last_error: " << last_error << std::endl;
  EXPECT_NE(last_error.find("exit code 3"), std::string::npos) << last_error;
  EXPECT_NE(last_error.find("transient trouble"), std::string::npos) << last_error;
  EXPECT_TRUE(row[0][2].as<bool>()) << "a stopped worker must not keep the item leased";
  const auto attempts = read_lines(dir_ / "attempts.txt");
  ASSERT_GE(attempts.size(), 3u);
  EXPECT_EQ(attempts[0], "1");
  EXPECT_EQ(attempts[1], "2");
  EXPECT_EQ(attempts[2], "3");
}

// Whatever a command prints goes to the worker's log, with passwords hidden: a command that
// shows its connection string does not put the password into the logs.
TEST_F(WorkerCommandTest, PasswordsInACommandsOutputAreHiddenInTheLog) {
  enqueue_one("t1", "chatty");
  auto worker = start_worker(config_yaml(R"(  chatty:
    command: 'echo "using postgresql://app:cmd-secret-one@db.example/app and password=cmd-secret-two"'
)"));
  ASSERT_NE(worker, nullptr);
  const bool done = eventually([&] { return count("quick.items") == 0 || worker->exited(); }, seconds(30));
  stop_worker(*worker);
  ASSERT_TRUE(done) << worker->err();
  const std::string err = worker->err();
  EXPECT_NE(err.find("using postgresql://app:***@db.example/app and password=***"), std::string::npos) << err;
  EXPECT_EQ(err.find("cmd-secret"), std::string::npos) << err;
}

// Tenants and job types come from producers: in the worker's log they are escaped, so that a
// newline or an ANSI escape in them cannot forge a log line or drive the terminal. Here through
// the command's output line, the retry line and the warning about a job type without a handler.
TEST_F(WorkerCommandTest, TenantsAndJobTypesAreEscapedInTheLog) {
  const std::string forged = "\n00:00:00.000 error [quick.worker] forged";
  enqueue_one("evil\x1b[31m" + forged, "fails");
  enqueue_one("t2", "unlisted\x1b[2J" + forged);
  auto worker = start_worker(config_yaml(R"(  fails:
    command: 'echo "tenant $QUICK_TENANT"; exit 3'
    retry: { max_attempts: 0 }
)"));
  ASSERT_NE(worker, nullptr);
  const bool logged = eventually(
      [&] {
        const std::string err = worker->err();
        return (err.find("retrying in") != std::string::npos &&
                err.find("no handler for job type") != std::string::npos) ||
               worker->exited();
      },
      seconds(30));
  stop_worker(*worker);
  const std::string err = worker->err();
  ASSERT_TRUE(logged) << err;
  EXPECT_EQ(err.find('\x1b'), std::string::npos) << "a raw ESC reached the log:\n" << err;
  EXPECT_EQ(err.find("\n00:00:00.000 error [quick.worker] forged"), std::string::npos) << err;
  EXPECT_NE(err.find("(tenant evil\\x1B[31m\\x0A00:00:00.000 error [quick.worker] forged): tenant evil\\x1B[31m"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("of tenant evil\\x1B[31m\\x0A00:00:00.000"), std::string::npos) << err;
  EXPECT_NE(err.find("no handler for job type unlisted\\x1B[2J\\x0A00:00:00.000"), std::string::npos) << err;
}

// 75 is EX_TEMPFAIL, "try again later": a transient failure, retried, never buried; so is it
// for a job type whose permanent code is another one.
TEST_F(WorkerCommandTest, ExitCode75IsATransientFailureRetriedWithBackoff) {
  const auto tempfail = enqueue_one("t1", "tempfail");
  const auto custom = enqueue_one("t2", "tempfail_custom");
  auto worker = start_worker(config_yaml(R"(  tempfail:
    command: 'echo "$QUICK_ATTEMPT" >> "$OUT_DIR/tempfail.txt"; exit 75'
    retry: { max_attempts: 0 }
  tempfail_custom:
    command: 'exit 75'
    permanent_failure_exit_code: 9
    retry: { max_attempts: 0 }
)"));
  ASSERT_NE(worker, nullptr);
  const auto failures = [&](std::int64_t id) {
    return query_value<int>("SELECT coalesce(max(error_count), 0) FROM quick.items WHERE id = " + std::to_string(id));
  };
  const bool retried = eventually(
      [&] { return (failures(tempfail) >= 2 && failures(custom) >= 2) || worker->exited(); }, seconds(45));
  stop_worker(*worker);
  ASSERT_TRUE(retried) << "error counts " << failures(tempfail) << " and " << failures(custom) << "\n" << worker->err();
  EXPECT_EQ(count("quick.dead_items"), 0);
  EXPECT_EQ(count("quick.items"), 2);
  EXPECT_NE(query_value<std::string>("SELECT last_error FROM quick.items WHERE id = " + std::to_string(tempfail))
                .find("exit code 75"),
            std::string::npos);
  EXPECT_GE(read_lines(dir_ / "tempfail.txt").size(), 2u);
}

// A command still running when SIGTERM arrives is given stop_deadline (1s), then stopped; its
// item goes back to the queue unharmed, and the worker exits 0 after printing its counters.
TEST_F(WorkerCommandTest, SigtermStopsTheWorkerPromptlyWithExitZeroAndPrintsStats) {
  const auto slow = enqueue_one("t1", "slow");
  enqueue_one("t2", "ok");
  auto worker = start_worker(config_yaml(R"(  slow:
    command: 'touch "$OUT_DIR/slow-started"; exec sleep 30'
  ok:
    command: 'true'
)"));
  ASSERT_NE(worker, nullptr);
  ASSERT_TRUE(eventually(
      [&] { return (std::filesystem::exists(dir_ / "slow-started") && count("quick.items") == 1) || worker->exited(); },
      seconds(30)))
      << worker->err();
  // stop_deadline 1s + the command's SIGTERM + margin for a loaded machine.
  stop_worker(*worker, SIGTERM, seconds(6));
  const std::string out = worker->out();
  std::cout << "stats printed at exit:\n" << out << std::endl;
  EXPECT_NE(out.find("items:"), std::string::npos) << "no stats on stdout:\n" << out;
  EXPECT_NE(out.find("done=1"), std::string::npos) << out;
  const auto row = query("SELECT error_count, lease_id IS NULL, vesting_time <= now() FROM quick.items WHERE id = " +
                         std::to_string(slow));
  ASSERT_EQ(row.size(), 1u) << "the interrupted item must stay queued";
  EXPECT_EQ(row[0][0].as<int>(), 0) << "an interruption by stop is not an error";
  EXPECT_TRUE(row[0][1].as<bool>()) << "the interrupted item is released";
  EXPECT_TRUE(row[0][2].as<bool>()) << "the interrupted item vests at once";
}

// A command the worker stopped at its execution bound has failed, even if it exits 0 on SIGTERM:
// its work was cut short. The item is retried ("execution bound exceeded", counted), not done.
TEST_F(WorkerCommandTest, ACommandStoppedAtItsExecutionBoundIsRetriedEvenIfItExitsZero) {
  const auto id = enqueue_one("t1", "bounded");
  auto worker = start_worker(config_yaml(R"(  bounded:
    command: 'trap "echo got-term; exit 0" TERM; sleep 30 & wait'
    execution_bound: 1s
    retry: { max_attempts: 0 }
)"));
  ASSERT_NE(worker, nullptr);
  const std::string item = "quick.items WHERE id = " + std::to_string(id);
  const bool ended = eventually(
      [&] {
        return count("quick.items", "error_count >= 1 AND id = " + std::to_string(id)) == 1 ||
               count("quick.items") == 0 || count("quick.dead_items") == 1 || worker->exited();
      },
      seconds(30));
  stop_worker(*worker);
  ASSERT_TRUE(ended) << worker->err();
  ASSERT_EQ(count("quick.items"), 1) << "the interrupted command's item must not be done:\n" << worker->err();
  EXPECT_EQ(count("quick.dead_items"), 0);
  const std::string last_error = query_value<std::string>("SELECT last_error FROM " + item);
  EXPECT_NE(last_error.find("execution bound exceeded"), std::string::npos) << last_error;
  EXPECT_EQ(worker->out().find("execution_bound=0"), std::string::npos) << worker->out();
}

// A command the worker stops at its own stop is interrupted, not finished: whether it then exits
// 0 or with the permanent failure code, its item is released for another run, neither done nor
// dead-lettered, and no error is counted.
TEST_F(WorkerCommandTest, ACommandStoppedWithTheWorkerIsInterruptedWhateverItsExitStatus) {
  const auto exits_zero = enqueue_one("t1", "term_zero");
  const auto exits_permanent = enqueue_one("t2", "term_permanent");
  auto worker = start_worker(config_yaml(R"(  term_zero:
    command: 'trap "exit 0" TERM; touch "$OUT_DIR/zero-started"; sleep 30 & wait'
  term_permanent:
    command: 'trap "exit 65" TERM; touch "$OUT_DIR/permanent-started"; sleep 30 & wait'
)"));
  ASSERT_NE(worker, nullptr);
  ASSERT_TRUE(eventually(
      [&] {
        return (std::filesystem::exists(dir_ / "zero-started") &&
                std::filesystem::exists(dir_ / "permanent-started")) ||
               worker->exited();
      },
      seconds(30)))
      << worker->err();
  stop_worker(*worker, SIGTERM, seconds(8));
  EXPECT_EQ(count("quick.dead_items"), 0) << "a command interrupted by the stop was dead-lettered";
  for (const auto id : {exits_zero, exits_permanent}) {
    const auto row = query("SELECT error_count, lease_id IS NULL FROM quick.items WHERE id = " + std::to_string(id));
    ASSERT_EQ(row.size(), 1u) << "item " << id << " must stay queued:\n" << worker->err();
    EXPECT_EQ(row[0][0].as<int>(), 0) << "an interruption by stop is not an error";
    EXPECT_TRUE(row[0][1].as<bool>()) << "the interrupted item is released";
  }
}

// A command that ignores SIGTERM (and whose children do too) does not keep `quick worker` from
// exiting promptly, and is not left running after the worker has exited: its process group is
// killed (SIGKILL after the kill grace) rather than orphaned.
TEST_F(WorkerCommandTest, SigtermWithACommandIgnoringSigtermStillExitsPromptlyAndLeavesNoOrphans) {
  enqueue_one("t1", "stubborn");
  auto worker = start_worker(config_yaml(R"(  stubborn:
    command: 'trap "" TERM; echo $$ > "$OUT_DIR/stubborn.pid"; sleep 30; echo survived > "$OUT_DIR/survived"'
)"));
  ASSERT_NE(worker, nullptr);
  ASSERT_TRUE(
      eventually([&] { return read_lines(dir_ / "stubborn.pid").size() == 1 || worker->exited(); }, seconds(30)))
      << worker->err();
  const pid_t group = static_cast<pid_t>(std::stol(read_lines(dir_ / "stubborn.pid").at(0)));
  ASSERT_EQ(::kill(-group, 0), 0) << "the command's process group " << group << " is not running";
  // stop_deadline 1s + consumer grace 2s + margin for a loaded machine.
  stop_worker(*worker, SIGTERM, seconds(8));
  const bool group_gone = eventually([&] { return ::kill(-group, 0) != 0 && errno == ESRCH; }, seconds(3));
  if (!group_gone) ::kill(-group, SIGKILL);  // do not leave it behind ourselves
  EXPECT_TRUE(group_gone) << "quick worker exited but the command's process group " << group
                          << " is still running (orphaned):\n"
                          << worker->err();
  EXPECT_FALSE(std::filesystem::exists(dir_ / "survived"));
}

// A command that exits leaving work running in the background (holding its output or not) is
// done, and what it started dies with it: its process group is killed once it exits, while the
// worker runs on, so nothing outlives the item or the worker.
TEST_F(WorkerCommandTest, WhatACommandLeavesRunningInTheBackgroundIsKilledWhenItExits) {
  enqueue_one("t1", "leaves_work");
  auto worker = start_worker(config_yaml(R"(  leaves_work:
    command: 'echo $$ > "$OUT_DIR/group.pid"; sleep 301 & (sleep 302 >/dev/null 2>&1 &); echo started'
)"));
  ASSERT_NE(worker, nullptr);
  const bool done = eventually([&] { return count("quick.items") == 0 || worker->exited(); }, seconds(30));
  ASSERT_TRUE(done) << worker->err();
  const pid_t group = static_cast<pid_t>(std::stol(read_lines(dir_ / "group.pid").at(0)));
  const bool group_gone = eventually([&] { return ::kill(-group, 0) != 0 && errno == ESRCH; }, seconds(3));
  if (!group_gone) ::kill(-group, SIGKILL);  // do not leave them behind ourselves
  EXPECT_TRUE(group_gone) << "the item is done but what its command started (process group " << group
                          << ") still runs:\n"
                          << worker->err();
  stop_worker(*worker);
  EXPECT_NE(worker->out().find("done=1"), std::string::npos) << worker->out();
}

// A worker started with SIGCHLD ignored (ignored signals survive exec: a parent that ignores it
// passes that on) still learns how its commands ended: the kernel would otherwise reap them
// itself, and every handler waited forever for a status.
TEST_F(WorkerCommandTest, AWorkerStartedWithSigchldIgnoredStillCompletesItems) {
  enqueue_one("t1", "ok");
  enqueue_one("t2", "fails");
  struct sigaction ignore {};
  struct sigaction previous {};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(::sigaction(SIGCHLD, &ignore, &previous), 0);
  auto worker = start_worker(config_yaml(R"(  ok:
    command: 'true'
  fails:
    command: 'exit 65'
)"));
  ::sigaction(SIGCHLD, &previous, nullptr);  // before the worker can end, so that we can reap it
  ASSERT_NE(worker, nullptr);
  const bool done = eventually(
      [&] { return (count("quick.items") == 0 && count("quick.dead_items") == 1) || worker->exited(); }, seconds(30));
  stop_worker(*worker);
  ASSERT_TRUE(done) << count("quick.items") << " items still queued after 30 s\n" << worker->err();
  EXPECT_NE(query_value<std::string>("SELECT reason FROM quick.dead_items").find("exit code 65"), std::string::npos);
}

TEST_F(WorkerCommandTest, SigintStopsAnIdleWorkerWithExitZero) {
  auto worker = start_worker(config_yaml("  ok:\n    command: 'true'\n"));
  ASSERT_NE(worker, nullptr);
  // Wait until it is really running (its Scanner has claimed the in-order role).
  ASSERT_TRUE(eventually(
      [&] {
        return query_value<int>("SELECT count(*) FROM quick.consumer_roles WHERE role = 'in_order_scanner'") == 1 ||
               worker->exited();
      },
      seconds(30)))
      << worker->err();
  stop_worker(*worker, SIGINT, seconds(5));
  EXPECT_NE(worker->out().find("items:"), std::string::npos) << worker->out();
}

TEST_F(WorkerCommandTest, JobTypeWithoutACommandIsRefusedNamingTheOption) {
  auto worker = run_refused_worker(config_yaml(R"(  ok:
    command: 'true'
  nocmd:
    execution_bound: 1s
)"),
                                   "nocmd");
  ASSERT_NE(worker, nullptr);
  EXPECT_NE(worker->exit_code(), std::optional<int>(0)) << worker->describe();
  EXPECT_FALSE(worker->term_signal().has_value()) << worker->describe();
  const std::string err = worker->err();
  std::cout << "missing command: " << err << std::endl;
  EXPECT_NE(err.find("job_types.nocmd.command"), std::string::npos) << err;
}

// A worker runs only the listed job types; with none it could only put every item aside.
TEST_F(WorkerCommandTest, ConfigurationWithoutJobTypesIsRefusedNamingTheOption) {
  for (const std::string& job_types : {std::string(""), std::string("  {}\n")}) {
    auto worker = run_refused_worker(config_yaml(job_types), "no-job-types");
    ASSERT_NE(worker, nullptr);
    EXPECT_EQ(worker->exit_code(), std::optional<int>(2)) << worker->describe();
    const std::string err = worker->err();
    std::cout << "no job types: " << err << std::endl;
    EXPECT_NE(err.find("job_types must list at least one job type"), std::string::npos) << err;
  }
}

TEST_F(WorkerCommandTest, BadConfigValuesAreRefusedNamingTheOption) {
  struct Case {
    std::string replace, with, option;  // an edit of the good configuration, and the option it breaks
  };
  const std::vector<Case> cases = {
      {"manager:\n", "manager:\n  dequeue_max: 0\n", "manager.dequeue_max"},  // out of range
      {"scanner:\n", "scanner:\n  peek_maxx: 10\n", "scanner.peek_maxx"},     // unknown key
      {"stop_deadline: 1s\n", "stop_deadline: 5\n", "stop_deadline"},         // no unit
      {"  threads: 2\n", "  threads: two\n", "worker.threads"},               // wrong type
  };
  const std::string good = config_yaml("  ok:\n    command: 'true'\n");
  for (std::size_t n = 0; n < cases.size(); ++n) {
    const auto& c = cases[n];
    std::string yaml = good;
    const auto at = yaml.find(c.replace);
    ASSERT_NE(at, std::string::npos) << c.replace;
    yaml.replace(at, c.replace.size(), c.with);
    auto worker = run_refused_worker(yaml, "bad" + std::to_string(n));
    ASSERT_NE(worker, nullptr);
    EXPECT_NE(worker->exit_code(), std::optional<int>(0)) << c.option << ": " << worker->describe();
    EXPECT_FALSE(worker->term_signal().has_value()) << c.option << ": " << worker->describe();
    const std::string err = worker->err();
    std::cout << c.option << " -> " << err;
    EXPECT_NE(err.find(c.option), std::string::npos) << "the message does not name " << c.option << ":\n" << err;
  }
}

TEST_F(WorkerCommandTest, UnmigratedDatabaseIsRefusedWithAClearMessage) {
  EmptyDatabase empty;
  auto worker = run_refused_worker(config_yaml("  ok:\n    command: 'true'\n", empty.url()), "unmigrated");
  ASSERT_NE(worker, nullptr);
  EXPECT_NE(worker->exit_code(), std::optional<int>(0)) << worker->describe();
  EXPECT_FALSE(worker->term_signal().has_value()) << worker->describe();
  const std::string err = worker->err();
  std::cout << "unmigrated: " << err << std::endl;
  EXPECT_NE(err.find("quick migrate"), std::string::npos) << err;
  EXPECT_NE(err.find(empty.name()), std::string::npos) << "the message should name the database:\n" << err;
  pqxx::connection conn(empty.url());
  pqxx::nontransaction session(conn);
  EXPECT_EQ(session.exec("SELECT count(*) FROM pg_namespace WHERE nspname = 'quick'")[0][0].as<int>(), 0)
      << "the worker must not create the schema itself";
}

// The port a worker serves metrics on, from its log line "metrics on http://127.0.0.1:<port>/metrics";
// 0 when it exited or did not say within 30 s.
int metrics_port(ChildProcess& worker) {
  static const std::regex listening(R"(metrics on http://127\.0\.0\.1:([0-9]+)/metrics)");
  std::smatch match;
  std::string err;
  eventually(
      [&] {
        err = worker.err();
        return std::regex_search(err, match, listening) || worker.exited();
      },
      seconds(30));
  return match.empty() || worker.exited() ? 0 : std::stoi(match[1].str());
}

TEST_F(WorkerCommandTest, ServesPrometheusMetricsOnTheMetricsAddress) {
  for (int i = 0; i < 3; ++i) enqueue_one("acme", "ok");
  auto worker = start_worker(config_yaml("  ok:\n    command: 'true'\n"), "worker", {},
                             {"--metrics-address", "127.0.0.1:0"});
  ASSERT_NE(worker, nullptr);
  const int port = metrics_port(*worker);
  ASSERT_GT(port, 0) << worker->err();
  ASSERT_TRUE(eventually([&] { return count("quick.items") == 0; }, seconds(30))) << worker->err();
  // Counted once the acknowledgment is written, a moment after the row is gone.
  MetricsPage page;
  const std::string done = R"(quick_items_done_total{consumer="cli-worker-test",job_type="ok"})";
  EXPECT_TRUE(eventually(
      [&] {
        httplib::Client client("127.0.0.1", port);
        const auto response = client.Get("/metrics");
        if (!response || response->status != 200) return false;
        page = parse_metrics(response->body);
        return page.at(done) == 3;
      },
      seconds(10)))
      << page.at(done);
  EXPECT_EQ(page.at(R"(quick_database_up{database="maindb"})"), 1);
  stop_worker(*worker);
}

TEST_F(WorkerCommandTest, ServesTheDashboardBesideTheMetricsWhenAsked) {
  enqueue_one("acme", "ok");
  auto worker = start_worker(config_yaml("  ok:\n    command: 'true'\n"), "dashboard", {},
                             {"--metrics-address", "127.0.0.1:0", "--dashboard"});
  ASSERT_NE(worker, nullptr);
  const int port = metrics_port(*worker);
  ASSERT_GT(port, 0) << worker->err();
  EXPECT_NE(worker->err().find("dashboard on http://127.0.0.1:" + std::to_string(port) + "/"), std::string::npos)
      << worker->err();
  httplib::Client client("127.0.0.1", port);
  const auto page = client.Get("/");
  ASSERT_TRUE(page) << "no answer";
  EXPECT_EQ(page->status, 200);
  EXPECT_NE(page->body.find("<html"), std::string::npos);
  std::string overview;
  EXPECT_TRUE(eventually(
      [&] {
        const auto response = client.Get("/api/overview");
        overview = response ? response->body : "";
        return response && response->status == 200 && overview.find("cli-worker-test") != std::string::npos;
      },
      seconds(10)))
      << "the worker itself is among the live consumers: " << overview;
  const auto action = client.Post("/api/tenants/pause", R"({"tenant": "acme"})", "application/json");
  ASSERT_TRUE(action);
  EXPECT_EQ(action->status, 403) << "read-only without an admin token: " << action->body;
  EXPECT_TRUE(client.Get("/metrics")) << "metrics still served";
  stop_worker(*worker);
  EXPECT_EQ(count("quick.paused_tenants"), 0);

  auto refused = start_worker(config_yaml("  ok:\n    command: 'true'\n"), "no-address", {},
                              {"--metrics-address", "off", "--dashboard"});
  ASSERT_NE(refused, nullptr);
  ASSERT_TRUE(refused->wait_for(seconds(30))) << refused->err();
  EXPECT_NE(refused->exit_code(), std::optional<int>(0));
  EXPECT_NE(refused->err().find("--dashboard is served on --metrics-address, which is off"), std::string::npos)
      << refused->err();
}

TEST_F(WorkerCommandTest, AnAdminTokenFileWithoutTheDashboardIsAUsageError) {
  const auto token_file = dir_ / "token";
  write_text_file(token_file, "s3cret-admin-token\n");
  auto refused = start_worker(config_yaml("  ok:\n    command: 'true'\n"), "token-alone", {},
                              {"--admin-token-file", token_file.string()});
  ASSERT_NE(refused, nullptr);
  ASSERT_TRUE(refused->wait_for(seconds(30))) << "the token was ignored and the worker ran:\n" << refused->err();
  EXPECT_EQ(refused->exit_code(), std::optional<int>(2)) << refused->describe() << "\n" << refused->err();
  EXPECT_NE(refused->err().find("--admin-token-file needs --dashboard"), std::string::npos) << refused->err();
}

TEST_F(WorkerCommandTest, MetricsOffServesNothingAndAMalformedAddressIsRefused) {
  auto worker = start_worker(config_yaml("  ok:\n    command: 'true'\n"), "off", {}, {"--metrics-address", "off"});
  ASSERT_NE(worker, nullptr);
  ASSERT_TRUE(eventually([&] { return worker->err().find("worker running") != std::string::npos; }, seconds(30)))
      << worker->err();
  EXPECT_EQ(worker->err().find("metrics on"), std::string::npos) << worker->err();
  stop_worker(*worker);

  auto refused = start_worker(config_yaml("  ok:\n    command: 'true'\n"), "bad", {}, {"--metrics-address", "9464"});
  ASSERT_NE(refused, nullptr);
  ASSERT_TRUE(refused->wait_for(seconds(30))) << refused->err();
  EXPECT_NE(refused->exit_code(), std::optional<int>(0));
  EXPECT_NE(refused->err().find("host:port"), std::string::npos) << refused->err();
}

// A worker whose process stalls (SIGSTOP: a frozen VM, a debugger, a swapped-out host) holds its
// zone's pointer and its items no longer than their bounds (docs/consumer.md#errors): none of its
// sessions is left inside a transaction (each visit is one autocommit statement, within its byte
// budget, so the server finishes it without the client), its zone can be locked by others at
// once, and once its item lease (1 s here) has run out without an extension another worker runs
// the item.
TEST_F(WorkerCommandTest, AFrozenWorkerHoldsNoLocksAndItsItemLeasesLapse) {
  enqueue_one("t1", "slow");
  const std::string job_types = R"(  slow:
    command: 'echo $$ >> "$OUT_DIR/runs"; exec sleep 30'
)";
  auto frozen = start_worker(config_yaml(job_types), "frozen");
  ASSERT_NE(frozen, nullptr);
  const auto runs = [&] {
    std::ifstream file(dir_ / "runs");
    std::vector<pid_t> pids;
    for (pid_t pid = 0; file >> pid;) pids.push_back(pid);
    return pids;
  };
  ASSERT_TRUE(eventually([&] { return runs().size() == 1 || frozen->exited(); }, seconds(30))) << frozen->err();
  frozen->signal(SIGSTOP);
  EXPECT_TRUE(eventually(
      [&] {
        return count("pg_stat_activity",
                     "application_name LIKE 'quick/cli-worker-test/%' "
                     "AND state <> 'idle'") == 0;
      },
      seconds(10)))
      << "a frozen worker's session stayed inside a statement or a transaction";
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM (SELECT 1 FROM quick.pointers WHERE tenant = 't1' "
                             "FOR UPDATE NOWAIT) locked"),
            1)
      << "the zone's pointer can be locked";

  std::string other = config_yaml(job_types);
  other.replace(other.find("cli-worker-test"), std::string("cli-worker-test").size(), "cli-worker-other");
  auto second = start_worker(other, "second");
  ASSERT_NE(second, nullptr);
  EXPECT_TRUE(eventually([&] { return runs().size() == 2; }, seconds(30)))
      << "the frozen worker's item did not run elsewhere:\n"
      << second->err();
  frozen->signal(SIGKILL);
  frozen->wait_for(seconds(10));
  stop_worker(*second, SIGTERM, seconds(10));
  for (const pid_t pid : runs()) ::kill(pid, SIGKILL);  // the commands' sleeps
}

}  // namespace
}  // namespace quick
