// quick::MetricsServer (include/quick/metrics.h): quick::Metrics served over HTTP by the
// library's HTTP server (src/http/).
#include "quick/metrics.h"

#include <httplib.h>

#include "http/http_server.h"

namespace quick {

class MetricsServer::Impl {
 public:
  Impl(const Consumer& consumer, MetricsOptions options)
      : metrics_(consumer, std::move(options)), server_(http::parse_address(metrics_.options().address)) {
    server_.routes().Get(metrics_.options().path, [this](const httplib::Request&, httplib::Response& response) {
      response.set_content(metrics_.render(), kMetricsContentType);
    });
  }

  Metrics metrics_;
  http::HttpServer server_;
};

MetricsServer::MetricsServer(const Consumer& consumer, MetricsOptions options)
    : impl_(std::make_unique<Impl>(consumer, std::move(options))) {}
MetricsServer::~MetricsServer() { stop(); }
void MetricsServer::start() { impl_->server_.start(); }
void MetricsServer::stop() { impl_->server_.stop(); }
int MetricsServer::port() const { return impl_->server_.port(); }
Metrics& MetricsServer::metrics() { return impl_->metrics_; }

}  // namespace quick
