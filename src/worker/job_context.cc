#include "worker/job_context.h"

namespace quick::worker {

pqxx::work& WorkerJobContext::transaction() {
  if (!transaction_) transaction_.emplace(session_.connection());
  return *transaction_;
}

bool WorkerJobContext::should_stop() const {
  return held_->lease_lost.load() || past_deadline() || core_.stop_handlers.requested();
}

}  // namespace quick::worker
