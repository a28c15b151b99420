// The library's HTTP server: cpp-httplib's server on its own thread, with a lifecycle the
// consumer's other parts follow (start binds or throws; stop is prompt and idempotent; nothing
// escapes the thread). The metrics (src/metrics/) mount their route on it; other modules may mount
// theirs on the same server through routes() before start().
//
// cpp-httplib, not hand-written HTTP: request parsing, keep-alive and timeouts are easy to get
// subtly wrong, and Debian packages it (libcpp-httplib-dev). httplib.h stays out of the public
// headers, so a library user never needs it to compile.
//
// Thread safety: routes() before start(); start() and stop() from any thread; handlers run on
// the server's worker threads.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace httplib {
class Server;
}

namespace quick::http {

struct Address {
  std::string host;  // "127.0.0.1", "0.0.0.0", "::1", "localhost"
  int port = 0;      // 0: any free port
};

// "host:port", or "[ipv6]:port". Throws InvalidArgument naming `text` when it is neither.
Address parse_address(const std::string& text);

class HttpServer {
 public:
  // The largest request body served; a larger one is answered 413.
  static constexpr size_t kMaxRequestBody = 1 << 20;


  explicit HttpServer(Address address);
  ~HttpServer();  // stop()
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Where to mount handlers (Get, Post, ...), before start(). A handler that throws answers 500.
  // Request bodies are limited to kMaxRequestBody.
  httplib::Server& routes();

  // Binds the address without serving yet, so that a command refuses an address it cannot listen
  // on before doing anything else; routes() may still be mounted. Throws as start() does. Calls
  // after the first do nothing.
  void bind();
  // Binds the address (unless bind() did) and serves on a thread. Throws Error when the address
  // cannot be bound (in use, not local, ...). Calls after the first do nothing.
  void start();
  // Stops serving (requests in progress finish) and joins the thread; after bind() alone, closes
  // the socket. Idempotent; does nothing before bind() or start(). start() after it does nothing.
  void stop();
  // The bound port (the chosen one when the address said 0); 0 before start().
  int port() const { return port_.load(); }
  const std::string& host() const { return address_.host; }

 private:
  Address address_;
  std::unique_ptr<httplib::Server> server_;
  std::mutex lifecycle_;
  void bind_locked();
  bool bound_ = false;     // guarded by lifecycle_
  int bound_socket_ = -1;  // the last socket httplib made, the bound one once bound_
  bool started_ = false;   // guarded by lifecycle_
  bool stopped_ = false;   // guarded by lifecycle_
  std::atomic<int> port_{0};
  std::atomic<bool> serving_ended_{false};
  std::thread thread_;
};

}  // namespace quick::http
