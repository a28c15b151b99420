// Helpers shared by the consumer fault-tolerance tests and the `quick worker` tests (header-only:
// only tests/support/*.cc is compiled into the shared support library).
//
//   eventually(condition, timeout)   poll with a bounded deadline (never a sleep as an assertion)
//   fast_config(url, id)             a ConsumerConfig with short intervals and leases
//   enqueue_items(url, ...)          enqueue N items across tenants, returning their ids
//   RunLog                           thread-safe record of handler runs (id -> runs, start times)
//   quick_binary()                   $QUICK_BUILD_DIR/quick, failing the test when missing
//   TempDir, ChildProcess            a scratch directory and a spawned process we can signal
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <pqxx/pqxx>

#include "quick/config.h"
#include "quick/producer.h"
#include "support/test_database.h"

extern char** environ;

namespace quick::consumer_testing {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

// Polls `condition` every `poll` until it holds or `timeout` passes; returns whether it held.
// Use as ASSERT_TRUE(eventually(...)) << "what we waited for".
template <typename Condition>
bool eventually(Condition condition, milliseconds timeout, milliseconds poll = milliseconds(20)) {
  const auto deadline = Clock::now() + timeout;
  while (true) {
    if (condition()) return true;
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(poll);
  }
}

inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// A consumer configuration for tests: idle pickup within milliseconds, short leases so that a
// lost consumer's items come back within ~2 s, empty zones' pointers collected at once.
inline ConsumerConfig fast_config(const std::string& url, const std::string& consumer_id) {
  ConsumerConfig config;
  config.consumer_id = consumer_id;
  config.databases.push_back(DatabaseConfig{"main", url});
  config.scanner.idle_poll_interval = milliseconds(5);
  config.scanner.in_order_lease_duration = seconds(1);
  config.manager.min_inactive = milliseconds(0);
  config.manager.p_duration = milliseconds(500);
  config.worker.threads = 4;
  config.worker.item_lease_duration = seconds(2);
  config.stop_deadline = seconds(2);
  config.reconnect_delay_max = milliseconds(200);
  config.default_job_type.retry.backoff_base = milliseconds(20);
  config.default_job_type.retry.backoff_max = milliseconds(200);
  config.default_job_type.retry.backoff_jitter = 0;
  return config;
}

// Enqueues `count` items of `job_type` spread round robin over `tenants` zones named
// "<tenant_prefix><i>", in batches, each batch in its own committed transaction. Returns the ids.
inline std::vector<std::int64_t> enqueue_items(const std::string& url, int count, int tenants,
                                               const std::string& job_type,
                                               const std::string& tenant_prefix = "t",
                                               int batch_size = 200) {
  pqxx::connection conn(url);
  std::vector<std::int64_t> ids;
  for (int start = 0; start < count; start += batch_size) {
    std::vector<NewItem> items;
    for (int i = start; i < std::min(count, start + batch_size); ++i) {
      NewItem item;
      item.tenant = tenant_prefix + std::to_string(i % tenants);
      item.job_type = job_type;
      item.payload = "{\"i\":" + std::to_string(i) + "}";
      items.push_back(std::move(item));
    }
    pqxx::work txn(conn);
    for (const auto& result : enqueue_batch_in(txn, items)) ids.push_back(result.item_id);
    txn.commit();
  }
  return ids;
}

// Which items a handler ran, how often, and when each run started (steady clock).
class RunLog {
 public:
  void record(std::int64_t id) {
    std::lock_guard<std::mutex> lock(mutex_);
    ++runs_[id];
    starts_[id].push_back(Clock::now());
    ++total_;
  }
  int runs(std::int64_t id) const {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto found = runs_.find(id);
    return found == runs_.end() ? 0 : found->second;
  }
  std::vector<Clock::time_point> starts(std::int64_t id) const {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto found = starts_.find(id);
    return found == starts_.end() ? std::vector<Clock::time_point>{} : found->second;
  }
  std::size_t distinct() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return runs_.size();
  }
  std::size_t total() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return total_;
  }
  std::set<std::int64_t> ids() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::set<std::int64_t> ids;
    for (const auto& [id, runs] : runs_) ids.insert(id);
    return ids;
  }
  std::size_t ran_more_than_once() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::size_t count = 0;
    for (const auto& [id, runs] : runs_) count += runs > 1 ? 1 : 0;
    return count;
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::int64_t, int> runs_;
  std::map<std::int64_t, std::vector<Clock::time_point>> starts_;
  std::size_t total_ = 0;
};

// Ids of the rows of quick.items (optionally filtered by a WHERE clause).
inline std::set<std::int64_t> queued_ids(const std::string& url, const std::string& where = "true") {
  pqxx::connection conn(url);
  pqxx::nontransaction session(conn);
  std::set<std::int64_t> ids;
  for (const auto& row : session.exec("SELECT id FROM quick.items WHERE " + where)) ids.insert(row[0].as<std::int64_t>());
  return ids;
}

// The `quick` tool of this build. Fails the current test (returns "") when it cannot be found.
inline std::string quick_binary() {
  const char* dir = std::getenv("QUICK_BUILD_DIR");
  if (dir == nullptr || *dir == '\0') {
    ADD_FAILURE() << "QUICK_BUILD_DIR is not set: run through ctest, or export QUICK_BUILD_DIR=<build dir> "
                     "(the directory holding the built `quick` tool)";
    return "";
  }
  const std::string path = std::string(dir) + "/quick";
  if (::access(path.c_str(), X_OK) != 0) {
    ADD_FAILURE() << path << " does not exist or is not executable: build the quick_cli target first "
                  << "(make -C " << dir << " quick_cli)";
    return "";
  }
  return path;
}

inline std::string read_text_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

inline void write_text_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

// Non-empty lines of a file.
inline std::vector<std::string> read_lines(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "quick-consumer-test-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

// A spawned child process (its stdout and stderr go to files) that the test can signal and
// wait for. The destructor SIGKILLs and reaps a child still running.
class ChildProcess {
 public:
  ChildProcess(const std::vector<std::string>& argv, const std::vector<std::string>& extra_environment,
               const std::filesystem::path& stdout_file, const std::filesystem::path& stderr_file)
      : stdout_file_(stdout_file), stderr_file_(stderr_file) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, stdout_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, stderr_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::vector<std::string> args = argv;
    std::vector<std::string> environment;
    for (char** e = environ; *e != nullptr; ++e) environment.emplace_back(*e);
    for (const auto& extra : extra_environment) environment.push_back(extra);
    std::vector<char*> arg_pointers, env_pointers;
    for (auto& arg : args) arg_pointers.push_back(arg.data());
    arg_pointers.push_back(nullptr);
    for (auto& entry : environment) env_pointers.push_back(entry.data());
    env_pointers.push_back(nullptr);
    const int error = ::posix_spawn(&pid_, args[0].c_str(), &actions, nullptr, arg_pointers.data(), env_pointers.data());
    posix_spawn_file_actions_destroy(&actions);
    if (error != 0) {
      pid_ = -1;
      throw std::runtime_error("posix_spawn " + args[0] + " failed: " + std::to_string(error));
    }
  }
  ~ChildProcess() {
    if (pid_ > 0 && !status_) {
      ::kill(pid_, SIGKILL);
      int status = 0;
      ::waitpid(pid_, &status, 0);
    }
  }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  void signal(int signal_number) const { ::kill(pid_, signal_number); }

  // Reaps the child if it has ended; returns whether it has.
  bool exited() {
    if (status_) return true;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) status_ = status;
    return status_.has_value();
  }
  // Waits up to `timeout` for the child to end; returns whether it did.
  bool wait_for(milliseconds timeout) {
    return eventually([this] { return exited(); }, timeout, milliseconds(5));
  }
  // The exit code, when the child exited normally.
  std::optional<int> exit_code() const {
    if (status_ && WIFEXITED(*status_)) return WEXITSTATUS(*status_);
    return std::nullopt;
  }
  std::optional<int> term_signal() const {
    if (status_ && WIFSIGNALED(*status_)) return WTERMSIG(*status_);
    return std::nullopt;
  }
  std::string describe() const {
    if (!status_) return "still running";
    if (exit_code()) return "exit code " + std::to_string(*exit_code());
    if (term_signal()) return "killed by signal " + std::to_string(*term_signal());
    return "unknown status";
  }
  std::string out() const { return read_text_file(stdout_file_); }
  std::string err() const { return read_text_file(stderr_file_); }

 private:
  pid_t pid_ = -1;
  std::optional<int> status_;
  std::filesystem::path stdout_file_, stderr_file_;
};

}  // namespace quick::consumer_testing
