// The pieces run_process is made of: spawning a child in its own process group with pipes for
// its standard streams, moving bytes through those pipes without blocking, and stopping the group
// (SIGTERM, then SIGKILL after a grace period).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace quick::process {

// An owned file descriptor, closed on destruction.
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
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  bool open() const { return fd_ >= 0; }
  int release();
  void reset(int fd = -1);

 private:
  int fd_ = -1;
};

struct Child {
  pid_t pid = -1;  // also its process group id
  Fd stdin_write;  // our end of its stdin
  Fd output_read;  // our end of its merged stdout and stderr
};

// Spawns argv[0] (looked up in the caller's PATH) with the caller's environment, or only its
// variables that `inherit_only` names (ProcessOptions::inherit_only), plus `extra_environment`
// ("NAME=value", replacing inherited entries of the same name), default signal handling, an
// empty signal mask, and no open file descriptor but its standard streams. Returns the child, or
// the reason it could not start.
struct SpawnOutcome {
  std::optional<Child> child;
  std::string error;
};
SpawnOutcome spawn_child(const std::vector<std::string>& argv, const std::vector<std::string>& extra_environment,
                         const std::optional<std::vector<std::string>>& inherit_only);

// Feeds the child's stdin and drains its output without blocking on either, so a child that
// writes a lot before it reads its input cannot deadlock the caller. A write to a child that
// closed its stdin neither fails the caller nor raises SIGPIPE.
class ChildPipes {
 public:
  ChildPipes(Child& child, std::string stdin_data, std::size_t max_output_bytes);
  // Waits up to `wait` for either pipe and moves what it can; sleeps briefly instead when both
  // pipes are closed and `sleep_when_closed`.
  void pump(std::chrono::milliseconds wait, bool sleep_when_closed);
  bool output_open() const { return child_.output_read.open(); }
  // The output read so far: its last max_output_bytes (an error is reported at the end).
  std::string take_output();

 private:
  void keep(const char* data, std::size_t size);

  Child& child_;
  std::string stdin_data_;
  std::size_t written_ = 0;
  std::size_t max_output_bytes_;
  std::string output_;  // the last bytes read, up to twice max_output_bytes_ between trims
};

// Stops a process group: SIGTERM first, SIGKILL once `grace` has passed.
class GroupStopper {
 public:
  GroupStopper(pid_t group, std::chrono::milliseconds grace) : group_(group), grace_(grace) {}
  bool terminating() const { return term_sent_.has_value(); }
  bool killed() const { return killed_; }
  void terminate(std::chrono::steady_clock::time_point now);
  // Kills the group if SIGTERM was sent at least `grace` ago; returns whether it is killed now.
  bool kill_if_grace_over(std::chrono::steady_clock::time_point now);
  void kill_now();

 private:
  pid_t group_;
  std::chrono::milliseconds grace_;
  std::optional<std::chrono::steady_clock::time_point> term_sent_;
  bool killed_ = false;
};

}  // namespace quick::process
