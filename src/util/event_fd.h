// A file descriptor that becomes readable, for good, once signal() is called: lets a thread that
// waits in poll() on sockets be stopped at once (the wake-up listener).
//
// Thread safety: signal() may be called from any thread, fd() read by any.
#pragma once

namespace quick::util {

class EventFd {
 public:
  EventFd();  // throws std::system_error if the kernel refuses one
  ~EventFd();
  EventFd(const EventFd&) = delete;
  EventFd& operator=(const EventFd&) = delete;

  int fd() const { return fd_; }
  void signal();

 private:
  int fd_;
};

}  // namespace quick::util
