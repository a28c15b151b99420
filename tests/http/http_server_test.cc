// The library's HTTP server (src/http/): on a loopback address it answers only requests addressed
// to a loopback name, so that a web page elsewhere cannot reach it through DNS rebinding; on
// other addresses the Host header is not checked.
#include <gtest/gtest.h>

#include <httplib.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <iterator>
#include <string>

#include "http/http_server.h"
#include "quick/errors.h"

namespace quick::http {
namespace {

// The status of GET /ping on `port` with the given Host header ("" for httplib's own).
int status_for_host(int port, const std::string& host) {
  httplib::Client client("127.0.0.1", port);
  httplib::Headers headers;
  if (!host.empty()) headers.emplace("Host", host);
  const auto response = client.Get("/ping", headers);
  return response ? response->status : -1;
}

class HttpServerTest : public ::testing::Test {
 protected:
  void serve(const std::string& host) {
    server_ = std::make_unique<HttpServer>(Address{host, 0});
    server_->routes().Get("/ping", [](const httplib::Request&, httplib::Response& response) {
      response.set_content("pong", "text/plain");
    });
    server_->start();
  }
  std::unique_ptr<HttpServer> server_;
};

TEST_F(HttpServerTest, OnTheLoopbackOnlyRequestsForALoopbackNameAreAnswered) {
  serve("127.0.0.1");
  const int port = server_->port();
  EXPECT_EQ(status_for_host(port, ""), 200);
  EXPECT_EQ(status_for_host(port, "127.0.0.1:" + std::to_string(port)), 200);
  EXPECT_EQ(status_for_host(port, "localhost:" + std::to_string(port)), 200);
  EXPECT_EQ(status_for_host(port, "[::1]:" + std::to_string(port)), 200);
  EXPECT_EQ(status_for_host(port, "rebound.attacker.example:" + std::to_string(port)), 403);
  EXPECT_EQ(status_for_host(port, "localhost.attacker.example"), 403);
  // A name that merely starts like a loopback address is a name the attacker may own.
  EXPECT_EQ(status_for_host(port, "127.example.com"), 403);
  EXPECT_EQ(status_for_host(port, "127.evil.example.com:" + std::to_string(port)), 403);
  EXPECT_EQ(status_for_host(port, "127.0.0.1.evil.example"), 403);
  EXPECT_EQ(status_for_host(port, "127.0.0.2:" + std::to_string(port)), 200);
  EXPECT_EQ(status_for_host(port, "127.0.0.1"), 200);
  server_->stop();
  server_->stop();  // idempotent
}

TEST_F(HttpServerTest, OnOtherAddressesTheHostHeaderIsNotChecked) {
  serve("0.0.0.0");
  EXPECT_EQ(status_for_host(server_->port(), "queue.example.com"), 200);
}

TEST(HttpServerBindTest, BindRefusesAnAddressOfAnotherHostBeforeServingAndStopReleasesThePort) {
  HttpServer elsewhere(Address{"192.0.2.1", 5});  // TEST-NET-1: no address of this host
  EXPECT_THROW(elsewhere.bind(), Error);

  const auto open_files = [] {
    return std::distance(std::filesystem::directory_iterator("/proc/self/fd"), std::filesystem::directory_iterator{});
  };
  const auto before = open_files();
  auto bound = std::make_unique<HttpServer>(Address{"127.0.0.1", 0});
  bound->bind();
  const int port = bound->port();
  ASSERT_GT(port, 0);
  bound->routes().Get("/ping", [](const httplib::Request&, httplib::Response& response) {
    response.set_content("pong", "text/plain");
  });
  bound->stop();  // never served: its socket is closed, not kept until the process ends
  bound.reset();
  EXPECT_EQ(open_files(), before);
  HttpServer again(Address{"127.0.0.1", port});
  again.routes().Get("/ping", [](const httplib::Request&, httplib::Response& response) {
    response.set_content("pong", "text/plain");
  });
  again.bind();  // routes may be mounted after bind()
  again.start();
  EXPECT_EQ(status_for_host(port, ""), 200);
}

// The status line's code of a POST whose headers announce `content_length` bytes and whose body
// is 5 bytes, sent on a raw socket (httplib's client sends the body it is given); -1 when none.
int status_of_announced_body(int port, const std::string& content_length) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  ::inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    return -1;
  }
  const std::string request = "POST /ping HTTP/1.1\r\nHost: localhost\r\nContent-Length: " + content_length +
                              "\r\nConnection: close\r\n\r\nhello";
  (void)!::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string answer;
  char buffer[4096];
  for (ssize_t n; (n = ::recv(fd, buffer, sizeof buffer, 0)) > 0;) answer.append(buffer, static_cast<size_t>(n));
  ::close(fd);
  if (answer.rfind("HTTP/1.1 ", 0) != 0 || answer.size() < 12) return -1;
  return std::stoi(answer.substr(9, 3));
}

TEST_F(HttpServerTest, ABodyOverOneMebibyteIsRefusedWithoutBeingRead) {
  serve("127.0.0.1");
  server_->routes().Post("/ping", [](const httplib::Request&, httplib::Response& response) {
    response.set_content("pong", "text/plain");
  });
  const auto began = std::chrono::steady_clock::now();
  // 400 MB announced, 5 bytes sent: the server answers from the header, within its read timeout
  // (5 s), and without the limit it waited for the rest and answered 400.
  EXPECT_EQ(status_of_announced_body(server_->port(), "400000000"), 413);
  EXPECT_LT(std::chrono::steady_clock::now() - began, std::chrono::seconds(10));
}

}  // namespace
}  // namespace quick::http
