#include "util/event_fd.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <system_error>

namespace quick::util {

EventFd::EventFd() : fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "eventfd");
}

EventFd::~EventFd() { ::close(fd_); }

void EventFd::signal() {
  const std::uint64_t one = 1;
  // Never read, so the counter stays non-zero and the descriptor readable; a full counter
  // (EAGAIN) is readable too.
  [[maybe_unused]] const auto written = ::write(fd_, &one, sizeof one);
}

}  // namespace quick::util
