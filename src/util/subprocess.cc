#include "util/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

extern char** environ;

namespace quick::util {
namespace {

class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(Fd&& other) noexcept : fd_(other.release()) {}
  Fd& operator=(Fd&& other) noexcept {
    reset(other.release());
    return *this;
  }
  int get() const { return fd_; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

struct Pipe {
  Fd read_end, write_end;
};

Pipe make_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  return Pipe{Fd(fds[0]), Fd(fds[1])};
}

void set_nonblocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }

// write() to a pipe whose reader is gone raises SIGPIPE, which would kill the whole process (a
// job command that exits without reading its payload must not take `quick worker` down). Block
// it in this thread around the write and consume the one the write raised, as libpq does,
// instead of changing the process-wide disposition.
ssize_t write_without_sigpipe(int fd, const char* data, std::size_t size) {
  sigset_t sigpipe, old_mask, pending;
  sigemptyset(&sigpipe);
  sigaddset(&sigpipe, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &sigpipe, &old_mask);
  sigpending(&pending);
  const bool was_pending = sigismember(&pending, SIGPIPE);
  const ssize_t written = ::write(fd, data, size);
  const int saved_errno = errno;
  if (written < 0 && saved_errno == EPIPE && !was_pending) {
    const timespec no_wait{0, 0};
    sigtimedwait(&sigpipe, nullptr, &no_wait);
  }
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  errno = saved_errno;
  return written;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (auto& s : strings) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  return pointers;
}

}  // namespace

std::string ProcessResult::describe() const {
  if (!started) return "could not start: " + output;
  std::string text;
  if (exit_code) text = "exit code " + std::to_string(*exit_code);
  else if (term_signal) text = "killed by signal " + std::to_string(*term_signal);
  else text = "unknown status";
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
  Pipe input = make_pipe();
  Pipe output = make_pipe();

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, input.read_end.get(), STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, output.write_end.get(), STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, output.write_end.get(), STDERR_FILENO);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                            POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&attributes, 0);
  sigset_t signals;
  sigemptyset(&signals);
  posix_spawnattr_setsigmask(&attributes, &signals);
  sigaddset(&signals, SIGPIPE);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  posix_spawnattr_setsigdefault(&attributes, &signals);

  std::vector<std::string> argv = options.argv;
  std::vector<std::string> environment;
  // Extra entries replace inherited ones of the same name (getenv returns the first match).
  auto name_of = [](const std::string& entry) { return entry.substr(0, entry.find('=')); };
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    bool overridden = false;
    for (const auto& extra : options.extra_environment) overridden = overridden || name_of(extra) == name_of(entry);
    if (!overridden) environment.push_back(entry);
  }
  for (const auto& extra : options.extra_environment) environment.push_back(extra);
  auto argv_pointers = c_strings(argv);
  auto env_pointers = c_strings(environment);

  pid_t pid = -1;
  const int spawn_error = ::posix_spawnp(&pid, argv[0].c_str(), &actions, &attributes,
                                         argv_pointers.data(), env_pointers.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  input.read_end.reset();
  output.write_end.reset();
  if (spawn_error != 0) {
    result.output = argv[0] + ": " + std::strerror(spawn_error);
    return result;
  }
  result.started = true;
  if (options.on_started) options.on_started(pid);

  // Feed stdin and drain output without blocking on either, so a child that writes a lot before
  // reading its input cannot deadlock us.
  const std::string stdin_data = options.stdin_data.value_or("");
  std::size_t written = 0;
  if (stdin_data.empty()) input.write_end.reset();
  else set_nonblocking(input.write_end.get());
  set_nonblocking(output.read_end.get());

  const auto start = std::chrono::steady_clock::now();
  std::optional<std::chrono::steady_clock::time_point> term_sent;
  std::optional<std::chrono::steady_clock::time_point> reaped_at;
  bool killed = false;
  int status = 0;
  bool reaped = false;
  char buffer[8192];

  while (true) {
    pollfd fds[2];
    int count = 0;
    if (output.read_end.get() >= 0) fds[count++] = {output.read_end.get(), POLLIN, 0};
    if (input.write_end.get() >= 0) fds[count++] = {input.write_end.get(), POLLOUT, 0};
    if (count > 0) ::poll(fds, count, 20);
    else if (!reaped) ::usleep(5000);

    for (int i = 0; i < count; ++i) {
      if (fds[i].fd == output.read_end.get() && (fds[i].revents & (POLLIN | POLLHUP | POLLERR))) {
        const ssize_t n = ::read(output.read_end.get(), buffer, sizeof buffer);
        if (n > 0) {
          const std::size_t room = options.max_output_bytes - std::min(options.max_output_bytes, result.output.size());
          result.output.append(buffer, std::min<std::size_t>(room, static_cast<std::size_t>(n)));
        } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
          output.read_end.reset();
        }
      } else if (fds[i].fd == input.write_end.get() && (fds[i].revents & (POLLOUT | POLLHUP | POLLERR))) {
        const ssize_t n = write_without_sigpipe(input.write_end.get(), stdin_data.data() + written,
                                                stdin_data.size() - written);
        if (n > 0) written += static_cast<std::size_t>(n);
        if ((n < 0 && errno != EAGAIN && errno != EINTR) || written == stdin_data.size()) {
          input.write_end.reset();  // done, or the child closed its stdin (EPIPE)
        }
      }
    }

    if (!reaped) {
      const pid_t done = ::waitpid(pid, &status, WNOHANG);
      if (done == pid) reaped = true;
    }
    if (reaped) {
      const auto now = std::chrono::steady_clock::now();
      if (!reaped_at) reaped_at = now;
      if (term_sent && !killed) {
        // We asked the group to stop and its leader is gone. Whatever of it still runs (a
        // grandchild ignoring SIGTERM) is killed: at once if it no longer holds the output pipe,
        // else after kill_grace, giving it the same grace as the leader had.
        if (output.read_end.get() < 0 || now - *term_sent >= options.kill_grace) {
          ::kill(-pid, SIGKILL);
          killed = true;
        } else {
          continue;
        }
      }
      if (output.read_end.get() < 0) break;
      // The child is gone but a grandchild may hold the pipe open: drain briefly, then stop.
      if (now - *reaped_at > std::chrono::milliseconds(200)) break;
      continue;
    }

    const auto now = std::chrono::steady_clock::now();
    const bool over_time = options.timeout && now - start >= *options.timeout;
    const bool asked_to_stop = options.should_stop && options.should_stop();
    if ((over_time || asked_to_stop) && !term_sent) {
      result.timed_out = over_time;
      result.stopped = asked_to_stop && !over_time;
      ::kill(-pid, SIGTERM);
      term_sent = now;
    } else if (term_sent && !killed && now - *term_sent >= options.kill_grace) {
      ::kill(-pid, SIGKILL);
      killed = true;
    }
  }
  if (!reaped) ::waitpid(pid, &status, 0);
  if (options.on_finished) options.on_finished(pid);
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status)) result.term_signal = WTERMSIG(status);
  return result;
}

ProcessResult run_checked(const std::vector<std::string>& argv,
                          std::optional<std::chrono::milliseconds> timeout) {
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

}  // namespace quick::util
