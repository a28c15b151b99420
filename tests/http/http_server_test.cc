// The library's HTTP server (src/http/): on a loopback address it answers only requests addressed
// to a loopback name, so that a web page elsewhere cannot reach it through DNS rebinding; on
// other addresses the Host header is not checked.
#include <gtest/gtest.h>

#include <httplib.h>

#include <string>

#include "http/http_server.h"

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

}  // namespace
}  // namespace quick::http
