// Unit tests (no database) for process::run_process / process::run_checked. They run small POSIX tools
// (sh, cat, wc, sleep, printenv, head).
#include "process/process.h"
#include "support/processes.h"

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace quick::process {
namespace {

using quick::testing::process_alive;

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

ProcessOptions command(std::vector<std::string> argv) {
  ProcessOptions options;
  options.argv = std::move(argv);
  return options;
}

ProcessOptions shell(const std::string& script) { return command({"sh", "-c", script}); }

std::string trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  while (!text.empty() && text.front() == ' ') text.erase(0, 1);
  return text;
}

bool wait_until_dead(pid_t pid, milliseconds within) {
  const auto deadline = Clock::now() + within;
  while (Clock::now() < deadline) {
    if (!process_alive(pid)) return true;
    std::this_thread::sleep_for(milliseconds(10));
  }
  return !process_alive(pid);
}

// The processes of process group `group` still alive (zombies do not count: a container's PID 1
// may never reap them).
std::vector<pid_t> group_members(pid_t group) {
  std::vector<pid_t> members;
  std::error_code ignored;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ignored)) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    std::getline(stat, line);
    const auto close_paren = line.rfind(')');
    if (close_paren == std::string::npos) continue;
    std::istringstream fields(line.substr(close_paren + 1));
    char state = 0;
    pid_t parent = 0, process_group = 0;
    if (fields >> state >> parent >> process_group && process_group == group && state != 'Z') {
      members.push_back(static_cast<pid_t>(std::stol(name)));
    }
  }
  return members;
}

std::string binary_data(std::size_t size) {
  std::mt19937 random(11);
  std::string data(size, '\0');
  for (auto& c : data) c = static_cast<char>(random() & 0xff);
  return data;
}

TEST(RunProcess, LargeStdinIsDeliveredIntact) {
  auto options = command({"wc", "-c"});
  options.stdin_data = binary_data(1 << 20);
  const auto result = run_process(options);
  ASSERT_TRUE(result.succeeded()) << result.describe() << ": " << result.output;
  EXPECT_EQ(trimmed(result.output), "1048576");
}

TEST(RunProcess, CatEchoesLargeStdinByteForByte) {
  auto options = command({"cat"});
  options.stdin_data = binary_data(1 << 20);
  options.max_output_bytes = 2 << 20;
  const auto result = run_process(options);
  ASSERT_TRUE(result.succeeded()) << result.describe();
  EXPECT_EQ(result.output.size(), options.stdin_data->size());
  EXPECT_TRUE(result.output == *options.stdin_data);
}

TEST(RunProcess, ChildThatWritesALotBeforeReadingStdinDoesNotDeadlock) {
  auto options = shell("head -c 300000 /dev/zero; wc -c");
  options.stdin_data = std::string(500000, 'x');
  options.max_output_bytes = 1 << 20;
  options.timeout = milliseconds(5000);
  const auto result = run_process(options);
  ASSERT_TRUE(result.succeeded()) << result.describe();
  EXPECT_FALSE(result.timed_out);
  EXPECT_EQ(result.output.size(), 300000u + 7u);  // zeros, then "500000\n"
  EXPECT_EQ(result.output.substr(300000), "500000\n");
}

TEST(RunProcess, NoStdinMeansEmptyStdin) {
  const auto result = run_process(command({"wc", "-c"}));
  ASSERT_TRUE(result.succeeded());
  EXPECT_EQ(trimmed(result.output), "0");
}

TEST(RunProcess, StdoutAndStderrAreMerged) {
  const auto result = run_process(shell("echo out; echo err >&2"));
  ASSERT_TRUE(result.succeeded());
  EXPECT_NE(result.output.find("out\n"), std::string::npos);
  EXPECT_NE(result.output.find("err\n"), std::string::npos);
}

// The last bytes are kept, not the first: a command's error usually ends its output.
TEST(RunProcess, OutputIsTruncatedToItsLastMaxOutputBytes) {
  auto options = shell("head -c 1000000 /dev/zero | tr '\\0' 'a'; printf END");
  options.max_output_bytes = 1000;
  const auto result = run_process(options);
  ASSERT_TRUE(result.succeeded()) << result.describe();  // the child was not blocked by a full pipe
  EXPECT_EQ(result.output, std::string(997, 'a') + "END") << result.output.substr(0, 20);
}

TEST(RunProcess, ZeroMaxOutputKeepsNothing) {
  auto options = shell("echo hello");
  options.max_output_bytes = 0;
  const auto result = run_process(options);
  ASSERT_TRUE(result.succeeded());
  EXPECT_EQ(result.output, "");
}

TEST(RunProcess, ExitCodes) {
  auto ok = run_process(command({"true"}));
  EXPECT_TRUE(ok.started);
  EXPECT_TRUE(ok.succeeded());
  EXPECT_EQ(ok.exit_code, 0);
  EXPECT_FALSE(ok.term_signal);

  auto three = run_process(shell("exit 3"));
  EXPECT_FALSE(three.succeeded());
  EXPECT_EQ(three.exit_code, 3);
  EXPECT_EQ(three.describe(), "exit code 3");

  EXPECT_EQ(run_process(shell("exit 255")).exit_code, 255);
}

TEST(RunProcess, KilledBySignal) {
  const auto result = run_process(shell("kill -KILL $$"));
  EXPECT_FALSE(result.succeeded());
  EXPECT_FALSE(result.exit_code);
  EXPECT_EQ(result.term_signal, SIGKILL);
  EXPECT_FALSE(result.timed_out);
  EXPECT_NE(result.describe().find("signal 9"), std::string::npos) << result.describe();
}

TEST(RunProcess, TimeoutStopsTheChild) {
  auto options = command({"sleep", "30"});
  options.timeout = milliseconds(100);
  const auto start = Clock::now();
  const auto result = run_process(options);
  const auto elapsed = Clock::now() - start;
  EXPECT_TRUE(result.timed_out);
  EXPECT_FALSE(result.stopped);
  EXPECT_EQ(result.term_signal, SIGTERM);
  EXPECT_GE(elapsed, milliseconds(90));
  EXPECT_LT(elapsed, milliseconds(2000));
  EXPECT_NE(result.describe().find("timed out"), std::string::npos) << result.describe();
}

TEST(RunProcess, TimeoutKillsAChildThatIgnoresSigterm) {
  auto options = shell("trap '' TERM; sleep 30");
  options.timeout = milliseconds(100);
  options.kill_grace = milliseconds(300);
  const auto start = Clock::now();
  const auto result = run_process(options);
  const auto elapsed = Clock::now() - start;
  EXPECT_TRUE(result.timed_out);
  EXPECT_EQ(result.term_signal, SIGKILL);
  EXPECT_GE(elapsed, milliseconds(380));
  EXPECT_LT(elapsed, milliseconds(3000));
}

TEST(RunProcess, TimeoutStopsTheWholeProcessGroup) {
  // The grandchild (background sleep) inherits the pipe; stopping the group ends both.
  auto options = shell("sleep 30 & echo $!; wait");
  options.timeout = milliseconds(150);
  const auto start = Clock::now();
  const auto result = run_process(options);
  EXPECT_LT(Clock::now() - start, milliseconds(2000));
  EXPECT_TRUE(result.timed_out);
  const pid_t grandchild = static_cast<pid_t>(std::atoi(result.output.c_str()));
  ASSERT_GT(grandchild, 1) << result.output;
  EXPECT_TRUE(wait_until_dead(grandchild, milliseconds(1000)));
  ::kill(grandchild, SIGKILL);
}

// The shell dies of SIGTERM but its grandchild ignores SIGTERM and keeps the output pipe open.
// The header promises SIGTERM to the group, then SIGKILL after kill_grace: the grandchild must
// not outlive the stop.
TEST(RunProcess, TimeoutKillsAGrandchildThatIgnoresSigtermAfterTheShellExits) {
  auto options = shell("(trap '' TERM; exec sleep 30) & echo $!; wait");
  options.timeout = milliseconds(150);
  options.kill_grace = milliseconds(300);
  const auto start = Clock::now();
  const auto result = run_process(options);
  EXPECT_LT(Clock::now() - start, milliseconds(3000));
  EXPECT_TRUE(result.timed_out);
  const pid_t grandchild = static_cast<pid_t>(std::atoi(result.output.c_str()));
  ASSERT_GT(grandchild, 1) << result.output;
  EXPECT_TRUE(wait_until_dead(grandchild, milliseconds(1000))) << "grandchild " << grandchild << " survived";
  ::kill(grandchild, SIGKILL);
}

TEST(RunProcess, ReturnsPromptlyWhenAGrandchildKeepsThePipeOpenAfterTheChildExits) {
  auto options = shell("sleep 30 & echo $!; exit 0");
  const auto start = Clock::now();
  const auto result = run_process(options);
  EXPECT_LT(Clock::now() - start, milliseconds(2000));
  EXPECT_TRUE(result.succeeded()) << result.describe();
  const pid_t grandchild = static_cast<pid_t>(std::atoi(result.output.c_str()));
  ASSERT_GT(grandchild, 1) << result.output;
  ::kill(grandchild, SIGKILL);
}

// A child that exits leaving work running in the background, holding the output pipe or not:
// with kill_group_after_exit nothing of its process group survives it.
TEST(RunProcess, KillGroupAfterExitKillsWhatTheChildLeftRunning) {
  for (const std::string script : {"sleep 301 & echo started", "(sleep 302 >/dev/null 2>&1 &); exit 0"}) {
    SCOPED_TRACE(script);
    auto options = shell(script);
    options.kill_group_after_exit = true;
    pid_t group = -1;
    options.on_started = [&group](int pid) { group = pid; };
    const auto start = Clock::now();
    const auto result = run_process(options);
    EXPECT_LT(Clock::now() - start, milliseconds(2000));
    EXPECT_TRUE(result.succeeded()) << result.describe();
    ASSERT_GT(group, 1);
    const bool gone = quick::testing::eventually([&] { return group_members(group).empty(); }, milliseconds(2000));
    const auto left = group_members(group);
    if (!gone) ::kill(-group, SIGKILL);  // do not leave them behind ourselves
    EXPECT_TRUE(gone) << left.size() << " process(es) of the child's group " << group << " outlived it, the first "
                      << (left.empty() ? 0 : left[0]);
  }
}

TEST(RunProcess, ShouldStopStopsTheChild) {
  auto options = command({"sleep", "30"});
  const auto start = Clock::now();
  options.should_stop = [start] { return Clock::now() - start > milliseconds(100); };
  const auto result = run_process(options);
  const auto elapsed = Clock::now() - start;
  EXPECT_TRUE(result.stopped);
  EXPECT_FALSE(result.timed_out);
  EXPECT_EQ(result.term_signal, SIGTERM);
  EXPECT_GE(elapsed, milliseconds(90));
  EXPECT_LT(elapsed, milliseconds(2000));
  EXPECT_NE(result.describe().find("stopped"), std::string::npos) << result.describe();
}

TEST(RunProcess, ShouldStopNotAskedDoesNothing) {
  auto options = shell("echo hi");
  options.should_stop = [] { return false; };
  const auto result = run_process(options);
  EXPECT_TRUE(result.succeeded());
  EXPECT_FALSE(result.stopped);
  EXPECT_EQ(result.output, "hi\n");
}

// Descriptors of the caller's that are not close-on-exec (such as an HTTP server's accepted
// connections) do not reach the child: it has its standard streams only.
TEST(RunProcess, TheChildInheritsNoDescriptorButItsStandardStreams) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);  // deliberately without O_CLOEXEC
  const int high = ::dup2(fds[0], 200);
  ASSERT_EQ(high, 200);
  const auto result = run_process(shell("ls /proc/$$/fd"));
  ::close(fds[0]);
  ::close(fds[1]);
  ::close(high);
  ASSERT_TRUE(result.succeeded()) << result.describe() << ": " << result.output;
  std::istringstream listing(result.output);
  std::vector<std::string> open_fds;
  for (std::string fd; listing >> fd;) open_fds.push_back(fd);
  EXPECT_EQ(open_fds, (std::vector<std::string>{"0", "1", "2"})) << result.output;
}

TEST(RunProcess, MissingBinaryIsNotStarted) {
  for (const std::string name : {"quick-h7-no-such-binary", "/nonexistent/quick-h7-no-such-binary"}) {
    const auto result = run_process(command({name, "arg"}));
    EXPECT_FALSE(result.started) << name;
    EXPECT_FALSE(result.succeeded());
    EXPECT_NE(result.output.find(name), std::string::npos) << result.output;
    EXPECT_EQ(result.describe().rfind("could not start", 0), 0u) << result.describe();
  }
}

TEST(RunProcess, EmptyArgvIsNotStarted) {
  const auto result = run_process(ProcessOptions{});
  EXPECT_FALSE(result.started);
}

TEST(RunProcess, ExtraEnvironmentReachesTheChild) {
  auto options = command({"printenv", "QUICK_H7_EXTRA"});
  options.extra_environment = {"QUICK_H7_EXTRA=hello world"};
  const auto result = run_process(options);
  ASSERT_TRUE(result.succeeded()) << result.describe();
  EXPECT_EQ(result.output, "hello world\n");
}

TEST(RunProcess, InheritedEnvironmentReachesTheChild) {
  ::setenv("QUICK_H7_INHERITED", "from parent", 1);
  const auto result = run_process(command({"printenv", "QUICK_H7_INHERITED"}));
  ::unsetenv("QUICK_H7_INHERITED");
  EXPECT_EQ(result.output, "from parent\n");
}

// An extra entry for a variable the parent already has must win (e.g. QUICK_TENANT when
// `quick worker` itself runs under a job): the child must not see the parent's value.
TEST(RunProcess, ExtraEnvironmentOverridesInheritedVariables) {
  ::setenv("QUICK_H7_OVERRIDE", "parent", 1);
  auto options = command({"printenv", "QUICK_H7_OVERRIDE"});
  options.extra_environment = {"QUICK_H7_OVERRIDE=child"};
  const auto result = run_process(options);
  ::unsetenv("QUICK_H7_OVERRIDE");
  EXPECT_EQ(result.output, "child\n");
}

// inherit_only: the child sees only the caller's variables it names (exact names, or prefixes
// ending in '*'), plus extra_environment; nothing else of the caller's environment.
TEST(RunProcess, InheritOnlyPassesTheNamedVariablesAndExtrasOnly) {
  ::setenv("QUICK_H7_LISTED", "listed", 1);
  ::setenv("QUICK_H7_SECRET", "secret", 1);
  ::setenv("QUICK_H7_PREFIX_A", "a", 1);
  ::setenv("QUICK_H7_PREFIXED", "not under the prefix", 1);
  auto options = command({"env"});
  options.inherit_only = std::vector<std::string>{"QUICK_H7_LISTED", "QUICK_H7_PREFIX_*", "QUICK_H7_UNSET"};
  options.extra_environment = {"QUICK_H7_EXTRA=extra"};
  const auto result = run_process(options);
  for (const char* name : {"QUICK_H7_LISTED", "QUICK_H7_SECRET", "QUICK_H7_PREFIX_A", "QUICK_H7_PREFIXED"}) {
    ::unsetenv(name);
  }
  ASSERT_TRUE(result.succeeded()) << result.describe() << ": " << result.output;
  EXPECT_EQ(result.output, "QUICK_H7_LISTED=listed\nQUICK_H7_PREFIX_A=a\nQUICK_H7_EXTRA=extra\n");
}

// An empty list starts the child from extra_environment alone; the program is still found on
// the caller's PATH.
TEST(RunProcess, EmptyInheritOnlyStartsFromAnEmptyEnvironment) {
  ::setenv("QUICK_H7_SECRET", "secret", 1);
  auto options = command({"env"});
  options.inherit_only = std::vector<std::string>{};
  const auto empty = run_process(options);
  options.extra_environment = {"ONLY=this"};
  const auto with_extra = run_process(options);
  ::unsetenv("QUICK_H7_SECRET");
  ASSERT_TRUE(empty.succeeded()) << empty.describe() << ": " << empty.output;
  EXPECT_EQ(empty.output, "");
  EXPECT_EQ(with_extra.output, "ONLY=this\n");
}

// A child that exits without reading a large stdin closes the pipe: the parent's write fails
// with EPIPE. That must be reported as the child's exit, not kill the calling process with
// SIGPIPE (src/process may not rely on the `quick` tool's main ignoring SIGPIPE).
TEST(RunProcessDeathTest, ChildIgnoringLargeStdinDoesNotKillTheCallerWithSigpipe) {
  ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  EXPECT_EXIT(
      {
        auto options = command({"true"});
        options.stdin_data = std::string(1 << 20, 'x');
        const auto result = run_process(options);
        std::_Exit(result.succeeded() ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

// With SIGCHLD ignored the kernel reaps the child itself and its status is lost: run_process
// still returns once the child has exited, with an unknown status (not a success), instead of
// waiting forever for a status that never comes.
TEST(RunProcessDeathTest, ReturnsWithAnUnknownStatusWhenSigchldIsIgnored) {
  ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  EXPECT_EXIT(
      {
        ::alarm(10);  // a hang ends the test with SIGALRM instead of stalling it
        std::signal(SIGCHLD, SIG_IGN);
        const auto result = run_process(shell("echo hi"));
        const bool as_expected = result.started && !result.exit_code && !result.term_signal && !result.succeeded() &&
                                 result.describe() == "unknown status" && result.output == "hi\n";
        std::_Exit(as_expected ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(RunChecked, ReturnsOnSuccessThrowsWithOutputOnFailure) {
  EXPECT_EQ(run_checked({"sh", "-c", "echo fine"}).output, "fine\n");
  try {
    run_checked({"sh", "-c", "echo broken-thing >&2; exit 4"});
    FAIL() << "no exception";
  } catch (const std::runtime_error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("exit code 4"), std::string::npos) << message;
    EXPECT_NE(message.find("broken-thing"), std::string::npos) << message;
  }
  EXPECT_THROW(run_checked({"sleep", "30"}, milliseconds(50)), std::runtime_error);
  EXPECT_THROW(run_checked({"quick-h7-no-such-binary"}), std::runtime_error);
}

TEST(RunProcess, ConcurrentCallsFromSeveralThreads) {
  std::vector<std::thread> threads;
  std::vector<std::string> outputs(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      auto options = command({"cat"});
      options.stdin_data = std::string(100000 + t, static_cast<char>('a' + t));
      options.max_output_bytes = 1 << 20;
      outputs[t] = run_process(options).output;
    });
  }
  for (auto& t : threads) t.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(outputs[t], std::string(100000 + t, static_cast<char>('a' + t)));
}

}  // namespace
}  // namespace quick::process
