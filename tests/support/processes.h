// The `quick` tool of this build, scratch directories, text files, and child processes a test
// can signal.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "support/eventually.h"

extern char** environ;

namespace quick::testing {

// Alive and not a zombie (a container's PID 1 may not reap orphans, such as a daemonized
// postmaster).
inline bool process_alive(pid_t pid) {
  if (::kill(pid, 0) != 0) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const auto close_paren = line.rfind(')');
  return close_paren == std::string::npos || line.size() < close_paren + 3 || line[close_paren + 2] != 'Z';
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
  // Opened to the postgres OS user: the owner keeps every right, others may only read and
  // traverse. Under root that user must reach a cluster's directory made in here.
  void open_to_server_user() const { open_dir_to_server_user(path_); }

  // A state directory named `name` in here, for a PostgreSQL cluster of a test's own (LocalCluster,
  // OwnCluster), both opened to the postgres OS user as scripts/test opens its own: otherwise,
  // under root, LocalCluster keeps the cluster in /var/tmp, where it outlives this directory.
  std::filesystem::path cluster_state_dir(const std::string& name) const {
    open_to_server_user();
    const std::filesystem::path state_dir = path_ / name;
    std::filesystem::create_directory(state_dir);
    open_dir_to_server_user(state_dir);
    return state_dir;
  }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  static void open_dir_to_server_user(const std::filesystem::path& dir) {
    namespace fs = std::filesystem;
    fs::permissions(dir, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec | fs::perms::others_read |
                             fs::perms::others_exec);
  }

  std::filesystem::path path_;
};

// A pipe whose reading end is closed from the start: whoever writes to the other end gets EPIPE,
// and SIGPIPE unless it ignores it, as `quick stats | head -1` does once head has exited.
class ClosedPipe {
 public:
  ClosedPipe() {
    int fds[2];
    if (::pipe(fds) != 0) throw std::runtime_error("pipe failed");
    ::close(fds[0]);
    write_end_ = fds[1];
  }
  ~ClosedPipe() { ::close(write_end_); }
  ClosedPipe(const ClosedPipe&) = delete;
  ClosedPipe& operator=(const ClosedPipe&) = delete;
  int write_end() const { return write_end_; }

 private:
  int write_end_ = -1;
};

// A spawned child process (its stdout and stderr go to files, or its stdout to a given file
// descriptor) that the test can signal and wait for. The destructor SIGKILLs and reaps a child
// still running.
class ChildProcess {
 public:
  ChildProcess(const std::vector<std::string>& argv, const std::vector<std::string>& extra_environment,
               const std::filesystem::path& stdout_file, const std::filesystem::path& stderr_file)
      : stdout_file_(stdout_file), stderr_file_(stderr_file) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, stdout_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    spawn(argv, extra_environment, actions);
  }
  // Its stdout is `stdout_fd` (out() then reads nothing).
  ChildProcess(const std::vector<std::string>& argv, const std::vector<std::string>& extra_environment, int stdout_fd,
               const std::filesystem::path& stderr_file)
      : stderr_file_(stderr_file) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, stdout_fd, STDOUT_FILENO);
    spawn(argv, extra_environment, actions);
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
  bool wait_for(std::chrono::milliseconds timeout) {
    return eventually([this] { return exited(); }, timeout, std::chrono::milliseconds(5));
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
  std::string out() const { return stdout_file_.empty() ? "" : read_text_file(stdout_file_); }
  std::string err() const { return read_text_file(stderr_file_); }

 private:
  // Spawns argv with stdin from /dev/null, stderr to stderr_file_ and `actions` (which it
  // destroys) for stdout. SIGPIPE has its default disposition in the child whatever the test's
  // is, so that a test of how the child handles a closed pipe tests the child.
  void spawn(const std::vector<std::string>& argv, const std::vector<std::string>& extra_environment,
             posix_spawn_file_actions_t& actions) {
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, stderr_file_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::vector<std::string> args = argv;
    std::vector<std::string> environment;
    for (char** e = environ; *e != nullptr; ++e) environment.emplace_back(*e);
    for (const auto& extra : extra_environment) environment.push_back(extra);
    std::vector<char*> arg_pointers, env_pointers;
    for (auto& arg : args) arg_pointers.push_back(arg.data());
    arg_pointers.push_back(nullptr);
    for (auto& entry : environment) env_pointers.push_back(entry.data());
    env_pointers.push_back(nullptr);
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    sigset_t default_signals;
    sigemptyset(&default_signals);
    sigaddset(&default_signals, SIGPIPE);
    posix_spawnattr_setsigdefault(&attributes, &default_signals);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF);
    const int error = ::posix_spawn(&pid_, args[0].c_str(), &actions, &attributes, arg_pointers.data(),
                                    env_pointers.data());
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
    if (error != 0) {
      pid_ = -1;
      throw std::runtime_error("posix_spawn " + args[0] + " failed: " + std::to_string(error));
    }
  }

  pid_t pid_ = -1;
  std::optional<int> status_;
  std::filesystem::path stdout_file_, stderr_file_;
};

}  // namespace quick::testing
