#include "core/visit_size_limit.h"

#include <algorithm>

namespace quick::core {

int VisitSizeLimit::apply(int configured) {
  std::lock_guard<std::mutex> lock(mutex_);
  configured_ = configured;
  return limit_ > 0 ? std::min(limit_, configured) : configured;
}

std::optional<int> VisitSizeLimit::cancelled(int zones) {
  std::lock_guard<std::mutex> lock(mutex_);
  fast_visits_ = 0;
  // Halve what was tried, not the limit: a visit split off before the last cut counts as it was.
  const int next = std::max(1, zones / 2);
  if (limit_ > 0 && limit_ <= next) return std::nullopt;
  // A size that grew back and was cut again is tried again less often: each such cut doubles the
  // fast visits growth needs, so a database that stays slow costs fewer cancelled visits.
  if (grown_since_cut_) fast_visits_needed_ = std::min(2 * fast_visits_needed_, kMostFastVisitsToGrow);
  grown_since_cut_ = false;
  limit_ = next;
  return limit_;
}

std::optional<int> VisitSizeLimit::finished(int zones, std::chrono::milliseconds took,
                                            std::chrono::milliseconds p_duration) {
  std::lock_guard<std::mutex> lock(mutex_);
  // A visit of half the limit or less says nothing about the limit. The Scanner splits a bigger
  // selection evenly, so visits the limit cut are each more than half of it.
  if (limit_ == 0 || zones * 2 <= limit_) return std::nullopt;
  if (took * 4 >= p_duration) {
    fast_visits_ = 0;
    return std::nullopt;
  }
  if (++fast_visits_ < fast_visits_needed_) return std::nullopt;
  fast_visits_ = 0;
  grown_since_cut_ = true;
  limit_ = limit_ * 2 >= configured_ ? 0 : limit_ * 2;
  return limit_;
}

int VisitSizeLimit::fast_visits_to_grow() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return fast_visits_needed_;
}

int VisitSizeLimit::limit() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return limit_;
}

}  // namespace quick::core
