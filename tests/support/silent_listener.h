// A TCP port on 127.0.0.1 that takes connections and never answers, like a database server that
// hangs or a proxy in front of one that vanished: the kernel completes the handshake of every
// connection in the listen backlog, so a client connects, sends its first message and waits.
// Nothing is ever accepted or written. Closed by the destructor.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>
#include <string>

namespace quick::testing {

class SilentListener {
 public:
  SilentListener() : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 || ::listen(fd_, 64) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      if (fd_ >= 0) ::close(fd_);
      throw std::runtime_error("SilentListener: cannot listen on 127.0.0.1");
    }
    port_ = ntohs(address.sin_port);
  }
  ~SilentListener() { ::close(fd_); }
  SilentListener(const SilentListener&) = delete;
  SilentListener& operator=(const SilentListener&) = delete;

  int port() const { return port_; }
  // Waits up to `timeout` for a client to have connected (its connection waits in the backlog):
  // from then on, the client is waiting for an answer.
  bool client_waiting(std::chrono::milliseconds timeout) const {
    pollfd waiting{fd_, POLLIN, 0};
    return ::poll(&waiting, 1, static_cast<int>(timeout.count())) == 1;
  }
  // A libpq connection string for it (keyword form, so that a caller may append keywords).
  std::string url() const { return "host=127.0.0.1 port=" + std::to_string(port_) + " dbname=quick user=quick"; }

 private:
  int fd_;
  int port_ = 0;
};

}  // namespace quick::testing
