#include "dashboard/connection_pool.h"

#include <utility>

namespace quick::dashboard {
namespace {
// Idle connections kept; more concurrent requests connect and disconnect.
constexpr std::size_t kMaxIdle = 4;
}  // namespace

ConnectionPool::ConnectionPool(std::string url, std::chrono::milliseconds statement_timeout)
    : url_(std::move(url)), statement_timeout_(statement_timeout) {}

ConnectionPool::Borrowed ConnectionPool::borrow() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    while (!idle_.empty()) {
      auto conn = std::move(idle_.back());
      idle_.pop_back();
      if (conn->is_open()) return Borrowed(*this, std::move(conn));
    }
  }
  auto conn = std::make_unique<pqxx::connection>(url_);
  pqxx::nontransaction session(*conn);
  session.exec("SET application_name = 'quick dashboard'");
  session.exec("SET statement_timeout = " + std::to_string(statement_timeout_.count()));
  return Borrowed(*this, std::move(conn));
}

void ConnectionPool::give_back(std::unique_ptr<pqxx::connection> conn) {
  if (!conn || !conn->is_open()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (idle_.size() < kMaxIdle) idle_.push_back(std::move(conn));
}

}  // namespace quick::dashboard
