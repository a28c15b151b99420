#include <sys/wait.h>

#include <cerrno>
#include <stdexcept>

#include "process/child.h"
#include "process/process.h"

namespace quick::process {
namespace {

using Clock = std::chrono::steady_clock;

// How long output is still drained after the child exited while a grandchild holds the pipe.
constexpr std::chrono::milliseconds kDrainAfterExit{200};
constexpr std::chrono::milliseconds kPollInterval{20};

// Before the child exits: stop its group once the timeout passes or the caller asks, and kill
// it when it outlives the grace period.
void enforce_limits(const ProcessOptions& options, Clock::time_point start, GroupStopper& stopper,
                    ProcessResult& result) {
  const auto now = Clock::now();
  const bool over_time = options.timeout && now - start >= *options.timeout;
  const bool asked_to_stop = options.should_stop && options.should_stop();
  if ((over_time || asked_to_stop) && !stopper.terminating()) {
    result.timed_out = over_time;
    result.stopped = asked_to_stop && !over_time;
    stopper.terminate(now);
  } else {
    stopper.kill_if_grace_over(now);
  }
}

// After the child exited: whether run_process may return. If we asked the group to stop,
// whatever of it still runs (a grandchild ignoring SIGTERM) is killed: at once if it no longer
// holds the output pipe, else after the same grace the child had. Otherwise, with
// `kill_group_after_exit`, what the child left running in its group is killed at once. A
// grandchild that holds the pipe open (one we do not kill, or one outside the group): drain
// briefly, then return.
bool may_return_after_exit(const ProcessOptions& options, const ChildPipes& pipes, GroupStopper& stopper,
                           Clock::time_point exited_at) {
  const auto now = Clock::now();
  if (stopper.terminating() && !stopper.killed()) {
    if (!pipes.output_open()) {
      stopper.kill_now();
    } else if (!stopper.kill_if_grace_over(now)) {
      return false;
    }
  } else if (options.kill_group_after_exit && !stopper.killed()) {
    stopper.kill_now();
  }
  return !pipes.output_open() || now - exited_at > kDrainAfterExit;
}

// Whether the child has exited, without reaping it: while it is a zombie its pid, which is also
// its process group's id, cannot be reused, so signalling the group cannot reach another one.
// With SIGCHLD ignored (inherited so, say) the kernel reaps it itself and waitid fails with ECHILD:
// it has exited, with a status nobody can know.
bool child_exited(pid_t pid) {
  siginfo_t info{};
  if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0) return errno == ECHILD;
  return info.si_pid == pid;
}

}  // namespace

std::string ProcessResult::describe() const {
  if (!started) return "could not start: " + output;
  std::string text;
  if (exit_code) {
    text = "exit code " + std::to_string(*exit_code);
  } else if (term_signal) {
    text = "killed by signal " + std::to_string(*term_signal);
  } else {
    text = "unknown status";
  }
  if (timed_out) text += " (timed out)";
  if (stopped) text += " (stopped)";
  return text;
}

ProcessResult run_process(const ProcessOptions& options) {
  ProcessResult result;
  if (options.argv.empty()) {
    result.output = "empty command line";
    return result;
  }
  auto spawned = spawn_child(options.argv, options.extra_environment, options.inherit_only);
  if (!spawned.child) {
    result.output = spawned.error;
    return result;
  }
  Child& child = *spawned.child;
  result.started = true;
  if (options.on_started) options.on_started(child.pid);

  ChildPipes pipes(child, options.stdin_data.value_or(""), options.max_output_bytes);
  GroupStopper stopper(child.pid, options.kill_grace);
  const auto start = Clock::now();
  std::optional<Clock::time_point> exited_at;
  int status = 0;
  while (true) {
    pipes.pump(kPollInterval, /*sleep_when_closed=*/!exited_at);
    if (!exited_at && child_exited(child.pid)) exited_at = Clock::now();
    if (exited_at) {
      if (may_return_after_exit(options, pipes, stopper, *exited_at)) break;
      continue;
    }
    enforce_limits(options, start, stopper, result);
  }
  pid_t waited = -1;
  do {
    waited = ::waitpid(child.pid, &status, 0);
  } while (waited < 0 && errno == EINTR);
  const bool reaped = waited == child.pid;
  if (options.on_finished) options.on_finished(child.pid);
  result.output = pipes.take_output();
  if (reaped && WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (reaped && WIFSIGNALED(status)) {
    result.term_signal = WTERMSIG(status);
  }
  return result;
}

ProcessResult run_checked(const std::vector<std::string>& argv, std::optional<std::chrono::milliseconds> timeout) {
  ProcessOptions options;
  options.argv = argv;
  options.timeout = timeout;
  ProcessResult result = run_process(options);
  if (!result.succeeded()) {
    std::string command;
    for (const auto& arg : argv) command += (command.empty() ? "" : " ") + arg;
    throw std::runtime_error(command + " failed (" + result.describe() + "): " + result.output);
  }
  return result;
}

}  // namespace quick::process
