#include "http/http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <optional>

#include <httplib.h>

#include "quick/errors.h"
#include "util/logging.h"

namespace quick::http {

Address parse_address(const std::string& text) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) {
    throw InvalidArgument("address \"" + text + "\": expected host:port (e.g. 127.0.0.1:9464)");
  }
  Address address;
  address.host = text.substr(0, colon);
  if (address.host.size() > 2 && address.host.front() == '[' && address.host.back() == ']') {
    address.host = address.host.substr(1, address.host.size() - 2);
  }
  const std::string port = text.substr(colon + 1);
  if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos || std::stoi(port) > 65535) {
    throw InvalidArgument("address \"" + text + "\": the port must be a number from 0 to 65535");
  }
  address.port = std::stoi(port);
  return address;
}

namespace {

// "localhost", "::1", or a literal IPv4 address in 127.0.0.0/8. Parsed, not matched by prefix:
// "127.evil.example" is a name its owner can point anywhere.
bool is_loopback_name(const std::string& host) {
  if (host == "localhost" || host == "::1") return true;
  in_addr address{};
  return ::inet_pton(AF_INET, host.c_str(), &address) == 1 && (ntohl(address.s_addr) >> 24) == 127;
}

// The host part of a Host header, or nullopt when what follows it is not a port:
// "example.com:8080" -> "example.com", "[::1]:9464" -> "::1", "::1" -> "::1".
std::optional<std::string> host_of(const std::string& header) {
  std::string host;
  std::string rest;
  if (!header.empty() && header.front() == '[') {
    const auto end = header.find(']');
    if (end == std::string::npos) return std::nullopt;
    host = header.substr(1, end - 1);
    rest = header.substr(end + 1);
  } else if (std::count(header.begin(), header.end(), ':') > 1) {
    host = header;  // an IPv6 address without brackets
  } else {
    const auto colon = header.find(':');
    host = header.substr(0, colon);
    rest = colon == std::string::npos ? "" : header.substr(colon);
  }
  if (!rest.empty() && (rest.front() != ':' || rest.find_first_not_of("0123456789", 1) != std::string::npos)) {
    return std::nullopt;
  }
  return host;
}

}  // namespace

HttpServer::HttpServer(Address address) : address_(std::move(address)), server_(std::make_unique<httplib::Server>()) {
  // A handler's exception answers 500 and is logged, never reaching the server's threads.
  server_->set_exception_handler(
      [](const httplib::Request& request, httplib::Response& response, std::exception_ptr error) {
        std::string what = "unknown error";
        try {
          std::rethrow_exception(error);
        } catch (const std::exception& e) {
          what = e.what();
        } catch (...) {
        }
        util::component_logger("quick.http")->error("{} {}: {}", request.method, request.path, what);
        response.status = 500;
        response.set_content("internal error\n", "text/plain");
      });
  // SO_REUSEADDR only (a restart can bind at once), not httplib's default SO_REUSEPORT, with which
  // a second process binds the same port silently and the kernel splits the scrapes between them.
  // The socket is noted for stop(): httplib closes it only once it has served.
  server_->set_socket_options([this](socket_t socket) {
    int yes = 1;
    ::setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    bound_socket_ = socket;
  });
  // DNS rebinding: a web page the operator's browser opens elsewhere can make a name of its own
  // resolve to 127.0.0.1 and then read (or act on) a server bound to the loopback, which the
  // browser takes for that page's own origin. Such a request still carries the page's host name,
  // so a server on the loopback answers only requests addressed to a loopback name.
  if (is_loopback_name(address_.host)) {
    server_->set_pre_routing_handler([](const httplib::Request& request, httplib::Response& response) {
      // No Host at all (HTTP/1.0) is no browser's request.
      const std::string header = request.get_header_value("Host");
      if (header.empty()) return httplib::Server::HandlerResponse::Unhandled;
      const auto host = host_of(header);
      if (host && is_loopback_name(*host)) return httplib::Server::HandlerResponse::Unhandled;
      response.status = 403;
      response.set_content("this server answers requests for localhost only, not for host " + header + "\n",
                           "text/plain");
      return httplib::Server::HandlerResponse::Handled;
    });
  }
  // httplib's default takes a body of any size into memory. Every route here (metrics, the
  // dashboard's JSON actions) takes at most a small body. A larger one is answered 413 from its
  // Content-Length: httplib drops what arrives (until the read timeout below) and keeps none of it.
  server_->set_payload_max_length(kMaxRequestBody);
  // A client that stalls must not hold a server thread for long.
  server_->set_read_timeout(5, 0);
  server_->set_write_timeout(5, 0);
}

HttpServer::~HttpServer() { stop(); }

httplib::Server& HttpServer::routes() { return *server_; }

void HttpServer::bind() {
  std::lock_guard<std::mutex> lock(lifecycle_);
  bind_locked();
}

void HttpServer::bind_locked() {
  if (bound_) return;
  const int port = address_.port == 0 ? server_->bind_to_any_port(address_.host)
                                      : (server_->bind_to_port(address_.host, address_.port) ? address_.port : -1);
  if (port <= 0) {
    throw Error("cannot listen on " + address_.host + ":" + std::to_string(address_.port) +
                " (address in use, or not an address of this host?)");
  }
  bound_ = true;
  port_.store(port);
}

void HttpServer::start() {
  std::lock_guard<std::mutex> lock(lifecycle_);
  if (started_ || stopped_) return;
  bind_locked();
  started_ = true;
  thread_ = std::thread([this] {
    try {
      server_->listen_after_bind();
    } catch (const std::exception& error) {
      util::component_logger("quick.http")->error("HTTP server on port {} ended: {}", port_.load(), error.what());
    } catch (...) {
      util::component_logger("quick.http")->error("HTTP server on port {} ended by an unknown error", port_.load());
    }
    serving_ended_.store(true);
  });
  // httplib's stop() does nothing until the server runs: wait for it, so that a stop() right after
  // start() cannot be lost.
  while (!server_->is_running() && !serving_ended_.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

void HttpServer::stop() {
  std::lock_guard<std::mutex> lock(lifecycle_);
  if (stopped_ || !bound_) return;
  stopped_ = true;
  if (!started_) {
    ::close(bound_socket_);  // bound, never served
    return;
  }
  server_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace quick::http
