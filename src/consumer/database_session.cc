#include "consumer/database_session.h"

namespace quick::consumer {

pqxx::connection& DatabaseSession::connection() {
  if (connection_ && !connection_->is_open()) connection_.reset();
  if (!connection_) {
    connection_ = std::make_unique<pqxx::connection>(url_);
    ++connects_;
  }
  return *connection_;
}

}  // namespace quick::consumer
