#include "process/child.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace quick::process {
namespace {

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

// Whether `name` is listed in `patterns`: equal to a name, or starting with the prefix of an
// entry that ends in '*'.
bool matches_any(const std::string& name, const std::vector<std::string>& patterns) {
  for (const auto& pattern : patterns) {
    const bool prefix = !pattern.empty() && pattern.back() == '*';
    if (prefix ? name.compare(0, pattern.size() - 1, pattern, 0, pattern.size() - 1) == 0 : name == pattern) {
      return true;
    }
  }
  return false;
}

// The caller's environment (all of it, or the variables `inherit_only` names) with `extra`
// added; an extra entry replaces an inherited one of the same name (getenv returns the first
// match).
std::vector<std::string> child_environment(const std::vector<std::string>& extra,
                                           const std::optional<std::vector<std::string>>& inherit_only) {
  auto name_of = [](const std::string& entry) { return entry.substr(0, entry.find('=')); };
  std::vector<std::string> environment;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string name = name_of(entry);
    if (inherit_only && !matches_any(name, *inherit_only)) continue;
    bool overridden = false;
    for (const auto& added : extra) overridden = overridden || name_of(added) == name;
    if (!overridden) environment.push_back(entry);
  }
  for (const auto& added : extra) environment.push_back(added);
  return environment;
}

// Its own process group (so a stop reaches what it starts), default dispositions for the
// signals a stop or a closed pipe sends, and no signal blocked.
void configure_attributes(posix_spawnattr_t& attributes) {
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&attributes, 0);
  sigset_t signals;
  sigemptyset(&signals);
  posix_spawnattr_setsigmask(&attributes, &signals);
  sigaddset(&signals, SIGPIPE);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  posix_spawnattr_setsigdefault(&attributes, &signals);
}

}  // namespace

int Fd::release() {
  const int fd = fd_;
  fd_ = -1;
  return fd;
}

void Fd::reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

SpawnOutcome spawn_child(const std::vector<std::string>& argv, const std::vector<std::string>& extra_environment,
                         const std::optional<std::vector<std::string>>& inherit_only) {
  Pipe input = make_pipe();
  Pipe output = make_pipe();
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, input.read_end.get(), STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, output.write_end.get(), STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, output.write_end.get(), STDERR_FILENO);
  // Nothing else of ours: a descriptor opened without O_CLOEXEC (by a library, such as an HTTP
  // server's accepted connection) would otherwise reach the command and stay open as long as it
  // runs, the connection's requests readable.
  posix_spawn_file_actions_addclosefrom_np(&actions, STDERR_FILENO + 1);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  configure_attributes(attributes);

  std::vector<std::string> arguments = argv;
  std::vector<std::string> environment = child_environment(extra_environment, inherit_only);
  auto argv_pointers = c_strings(arguments);
  auto env_pointers = c_strings(environment);
  pid_t pid = -1;
  const int spawn_error = ::posix_spawnp(&pid, arguments[0].c_str(), &actions, &attributes, argv_pointers.data(),
                                         env_pointers.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (spawn_error != 0) return {std::nullopt, arguments[0] + ": " + std::strerror(spawn_error)};
  Child child;
  child.pid = pid;
  child.stdin_write = std::move(input.write_end);
  child.output_read = std::move(output.read_end);
  return {std::move(child), ""};
}

ChildPipes::ChildPipes(Child& child, std::string stdin_data, std::size_t max_output_bytes)
    : child_(child), stdin_data_(std::move(stdin_data)), max_output_bytes_(max_output_bytes) {
  if (stdin_data_.empty()) {
    child_.stdin_write.reset();
  } else {
    set_nonblocking(child_.stdin_write.get());
  }
  set_nonblocking(child_.output_read.get());
}

void ChildPipes::keep(const char* data, std::size_t size) {
  output_.append(data, size);
  // Trimmed to the last max_output_bytes_ only once it holds twice as many, so that each byte is
  // moved a bounded number of times however long the output.
  if (output_.size() > max_output_bytes_ && output_.size() - max_output_bytes_ >= max_output_bytes_) {
    output_.erase(0, output_.size() - max_output_bytes_);
  }
}

std::string ChildPipes::take_output() {
  if (output_.size() > max_output_bytes_) output_.erase(0, output_.size() - max_output_bytes_);
  return std::move(output_);
}

void ChildPipes::pump(std::chrono::milliseconds wait, bool sleep_when_closed) {
  pollfd fds[2];
  int count = 0;
  if (child_.output_read.open()) fds[count++] = {child_.output_read.get(), POLLIN, 0};
  if (child_.stdin_write.open()) fds[count++] = {child_.stdin_write.get(), POLLOUT, 0};
  if (count == 0) {
    if (sleep_when_closed) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return;
  }
  ::poll(fds, count, static_cast<int>(wait.count()));
  char buffer[8192];
  for (int i = 0; i < count; ++i) {
    if (fds[i].fd == child_.output_read.get() && (fds[i].revents & (POLLIN | POLLHUP | POLLERR))) {
      const ssize_t n = ::read(child_.output_read.get(), buffer, sizeof buffer);
      if (n > 0) {
        keep(buffer, static_cast<std::size_t>(n));
      } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
        child_.output_read.reset();
      }
    } else if (fds[i].fd == child_.stdin_write.get() && (fds[i].revents & (POLLOUT | POLLHUP | POLLERR))) {
      const ssize_t n = write_without_sigpipe(child_.stdin_write.get(), stdin_data_.data() + written_,
                                              stdin_data_.size() - written_);
      if (n > 0) written_ += static_cast<std::size_t>(n);
      if ((n < 0 && errno != EAGAIN && errno != EINTR) || written_ == stdin_data_.size()) {
        child_.stdin_write.reset();  // done, or the child closed its stdin (EPIPE)
      }
    }
  }
}

void GroupStopper::terminate(std::chrono::steady_clock::time_point now) {
  ::kill(-group_, SIGTERM);
  term_sent_ = now;
}

bool GroupStopper::kill_if_grace_over(std::chrono::steady_clock::time_point now) {
  if (term_sent_ && !killed_ && now - *term_sent_ >= grace_) kill_now();
  return killed_;
}

void GroupStopper::kill_now() {
  ::kill(-group_, SIGKILL);
  killed_ = true;
}

}  // namespace quick::process
