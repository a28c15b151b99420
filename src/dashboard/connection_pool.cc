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
  std::unique_ptr<core::DatabaseSession> session;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!idle_.empty()) {
      session = std::move(idle_.back());
      idle_.pop_back();
    }
  }
  if (!session) session = std::make_unique<core::DatabaseSession>(url_, "quick dashboard", statement_timeout_);
  // Borrowed connects (or reconnects a session whose connection closed while idle) outside the
  // lock: a slow database delays only this request.
  return Borrowed(*this, std::move(session));
}

void ConnectionPool::give_back(std::unique_ptr<core::DatabaseSession> session, const pqxx::connection& conn) {
  if (!session || !conn.is_open()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (idle_.size() < kMaxIdle) idle_.push_back(std::move(session));
}

}  // namespace quick::dashboard
