// The JobContext a Worker gives each handler invocation (include/quick/handler.h).
//
// Thread safety: belongs to the Worker thread running the item.
#pragma once

#include <optional>

#include "core/consumer_core.h"
#include "core/database_session.h"
#include "quick/handler.h"

namespace quick::worker {

class WorkerJobContext : public JobContext {
 public:
  WorkerJobContext(const core::ConsumerCore& core, const core::HeldItemPtr& held, core::DatabaseSession& session,
                   int attempt, std::chrono::steady_clock::time_point deadline, std::chrono::microseconds waited)
      : core_(core), held_(held), session_(session), attempt_(attempt), deadline_(deadline), waited_(waited) {}

  const Item& item() const override { return held_->item; }
  const std::string& database_name() const override {
    return core_.databases[static_cast<std::size_t>(held_->database)]->config.name;
  }
  int attempt() const override { return attempt_; }
  std::chrono::microseconds waited() const override { return waited_; }
  pqxx::work& transaction() override;
  bool should_stop() const override;
  std::chrono::steady_clock::time_point deadline() const override { return deadline_; }

  // The handler's transaction, if it opened one.
  std::optional<pqxx::work>& open_transaction() { return transaction_; }
  bool past_deadline() const { return std::chrono::steady_clock::now() >= deadline_; }

 private:
  const core::ConsumerCore& core_;
  const core::HeldItemPtr& held_;
  core::DatabaseSession& session_;
  int attempt_;
  std::chrono::steady_clock::time_point deadline_;
  std::chrono::microseconds waited_;
  std::optional<pqxx::work> transaction_;
};

}  // namespace quick::worker
