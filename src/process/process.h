// Runs a child process: feeds it standard input, collects its output, and stops it on a deadline
// or on request. Used to drive initdb/pg_ctl for the local cluster and to run job commands for
// `quick worker`.
//
// The child gets its own process group, so stopping it also stops whatever it started (a shell's
// children, for instance): SIGTERM to the group, then SIGKILL after `kill_grace`. It inherits no
// file descriptor of the caller's but its standard streams (stdin, and stdout and stderr merged).
//
// Part of the `quick` tool, not of the library: the tool's own target builds src/process/.
//
// Thread safety: run_process may be called from several threads at once (posix_spawn is safe in
// multithreaded programs); each call owns its child.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace quick::process {

struct ProcessOptions {
  std::vector<std::string> argv;                     // argv[0] is looked up in PATH
  std::optional<std::string> stdin_data;             // written to the child's stdin, then closed; else /dev/null
  std::size_t max_output_bytes = 64 * 1024;          // stdout+stderr kept (the last bytes); earlier dropped
  std::optional<std::chrono::milliseconds> timeout;  // stop the child after this long
  std::chrono::milliseconds kill_grace{2000};        // SIGTERM -> SIGKILL delay
  // Polled every few milliseconds while the child runs; returning true stops the child.
  std::function<bool()> should_stop;
  // Extra environment entries ("NAME=value") added to the inherited environment; an entry
  // replaces an inherited variable of the same name.
  std::vector<std::string> extra_environment;
  // Which of the caller's variables the child inherits: all of them when unset; when set, only
  // those named here (exact names, or a prefix followed by '*', such as "LC_*"), so an empty list
  // starts the child from extra_environment alone. A job command must not see the caller's
  // secrets (database URLs, PG* variables) just because the caller has them.
  std::optional<std::vector<std::string>> inherit_only;
  // Called with the child's pid (also its process group id) once it runs, and with the same pid
  // once it has been reaped; lets a caller kill what is left at exit.
  std::function<void(int pid)> on_started;
  std::function<void(int pid)> on_finished;
  // Once the child has exited, SIGKILL whatever is left in its process group (what it started in
  // the background) before returning, so that nothing it started outlives it. Off, such processes
  // run on (a daemon that did not leave the group, for instance).
  bool kill_group_after_exit = false;
};

// Neither exit_code nor term_signal is set when the child's status was lost: with SIGCHLD
// ignored the kernel reaps children itself (the `quick` tool restores its default at start-up).
struct ProcessResult {
  bool started = false;            // false: could not spawn (see output for the reason)
  std::optional<int> exit_code;    // set when the child exited normally
  std::optional<int> term_signal;  // set when a signal ended it
  bool timed_out = false;          // stopped because of `timeout`
  bool stopped = false;            // stopped because should_stop returned true
  std::string output;              // merged stdout and stderr (their last max_output_bytes)
  bool succeeded() const { return exit_code && *exit_code == 0; }
  std::string describe() const;  // "exit code 3", "killed by signal 9 (timeout)", ...
};

ProcessResult run_process(const ProcessOptions& options);

// Convenience: runs argv, returns the result; throws std::runtime_error with the command's
// output when it does not exit with 0.
ProcessResult run_checked(const std::vector<std::string>& argv,
                          std::optional<std::chrono::milliseconds> timeout = std::nullopt);

}  // namespace quick::process
