#include "core/work_queue.h"

#include <algorithm>

namespace quick::core {

void WorkQueue::set_workers(int workers) {
  std::lock_guard<std::mutex> lock(mutex_);
  workers_ = workers;
  classify_due_ = true;
}

void WorkQueue::add_locked(core::HeldItemPtr item) {
  ZoneKey key{item->database, item->item.tenant};
  shares_[key].last_active = std::chrono::steady_clock::now();
  auto& zone = by_zone_[key];
  if (zone.empty()) turn_order_.push_back(key);
  ++held_by_type_[item->item.job_type];
  zone.push_back(std::move(item));
  ++buffered_;
  ++held_;
}

void WorkQueue::push(std::vector<core::HeldItemPtr> items) {
  if (items.empty()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& item : items) add_locked(std::move(item));
  }
  item_available_.notify_all();
}

std::vector<core::HeldItemPtr> WorkQueue::push_within_limits(std::vector<core::HeldItemPtr> items,
                                                             const std::function<int(const std::string&)>& limit_of) {
  std::vector<core::HeldItemPtr> refused;
  bool added = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& item : items) {
      const int limit = limit_of(item->item.job_type);
      const auto held = held_by_type_.find(item->item.job_type);
      if (limit > 0 && held != held_by_type_.end() && held->second >= limit) {
        refused.push_back(std::move(item));
      } else {
        add_locked(std::move(item));
        added = true;
      }
    }
  }
  if (added) item_available_.notify_all();
  return refused;
}

void WorkQueue::classify_locked(SteadyTime now) {
  // Every kClassifyEvery, and no more often than every 10 us per zone known: the walk over the
  // zones then stays a small share of a core however many zones there are.
  const auto every = std::max<std::chrono::steady_clock::duration>(
      kClassifyEvery, std::chrono::microseconds(10) * static_cast<long>(shares_.size()));
  if (!classify_due_ && now - last_classified_ < every) return;
  classify_due_ = false;
  last_classified_ = now;
  forget_idle_zones_locked(now);
  long_zones_.clear();
  if (workers_ < 2) return;
  // The shortest mean among the zones active now (an item buffered or running, or one pushed,
  // popped or finished within the window); a zone not measured yet (its first item) counts as 0.
  auto active = [&](const ZoneKey& key, const ZoneShare& share) {
    return share.running > 0 || now - share.last_active <= kShareWindow || by_zone_.count(key) > 0;
  };
  double shortest = -1;
  for (const auto& [key, share] : shares_) {
    if (!active(key, share)) continue;
    const double mean = share.measured ? share.mean_micros : 0;
    if (shortest < 0 || mean < shortest) shortest = mean;
  }
  if (shortest < 0) return;
  const double long_from = std::max(kLongerBy * shortest, kLongAtLeastMicros);
  for (const auto& [key, share] : shares_) {
    if (share.measured && share.mean_micros >= long_from && active(key, share)) long_zones_.push_back(key);
  }
}

bool WorkQueue::held_back_locked(const ZoneKey& key) const {
  if (closed_ || long_zones_.empty()) return false;
  if (std::find(long_zones_.begin(), long_zones_.end(), key) == long_zones_.end()) return false;
  // Long zones together keep at least one Worker free for the others.
  int running = 0;
  for (const auto& long_zone : long_zones_) {
    const auto share = shares_.find(long_zone);
    if (share != shares_.end()) running += share->second.running;
  }
  return running >= workers_ - 1;
}

core::HeldItemPtr WorkQueue::pop(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    const auto now = std::chrono::steady_clock::now();
    classify_locked(now);
    // The first zone in turn order that may take a Worker; a zone held back keeps its place.
    auto turn = turn_order_.begin();
    while (turn != turn_order_.end() && held_back_locked(*turn)) ++turn;
    if (turn != turn_order_.end()) {
      const ZoneKey key = *turn;
      turn_order_.erase(turn);
      auto zone = by_zone_.find(key);
      core::HeldItemPtr item = std::move(zone->second.front());
      zone->second.pop_front();
      if (zone->second.empty()) by_zone_.erase(zone);
      else turn_order_.push_back(key);  // its next item waits for the other zones' turns
      --buffered_;
      auto& share = shares_[key];
      ++share.running;
      share.last_active = now;
      item->popped_at = now;
      lock.unlock();
      room_available_.notify_all();
      return item;
    }
    if (buffered_ == 0 && closed_) return nullptr;
    if (now >= deadline) return nullptr;
    const bool held = buffered_ > 0;  // every buffered zone is held back: finished() wakes it
    if (held) ++waiting_on_hold_;
    item_available_.wait_until(lock, deadline);
    if (held) --waiting_on_hold_;
  }
}

void WorkQueue::finished(const core::HeldItemPtr& item) {
  bool wake_held = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto type = held_by_type_.find(item->item.job_type);
    if (type != held_by_type_.end() && --type->second <= 0) held_by_type_.erase(type);
    if (held_ > 0) --held_;
    if (item->popped_at == SteadyTime{}) return;  // drained, never run
    const auto now = std::chrono::steady_clock::now();
    auto& share = shares_[ZoneKey{item->database, item->item.tenant}];
    if (share.running > 0) --share.running;
    const double took = static_cast<double>(
        std::chrono::duration_cast<std::chrono::microseconds>(now - item->popped_at).count());
    share.mean_micros = share.measured ? 0.8 * share.mean_micros + 0.2 * took : took;
    share.measured = true;
    share.last_active = now;
    wake_held = waiting_on_hold_ > 0;
  }
  if (wake_held) item_available_.notify_all();  // a zone held back may take this Worker now
}

void WorkQueue::forget_idle_zones_locked(SteadyTime now) {
  if (now - last_forget_ < kShareWindow) return;
  last_forget_ = now;
  for (auto share = shares_.begin(); share != shares_.end();) {
    const bool idle = share->second.running == 0 && now - share->second.last_active > 10 * kShareWindow &&
                      by_zone_.count(share->first) == 0;
    share = idle ? shares_.erase(share) : std::next(share);
  }
}

std::vector<core::HeldItemPtr> WorkQueue::drain() {
  std::vector<core::HeldItemPtr> items;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& [key, zone] : by_zone_) {
      for (auto& item : zone) items.push_back(std::move(item));
    }
    by_zone_.clear();
    turn_order_.clear();
    buffered_ = 0;
  }
  room_available_.notify_all();
  return items;
}

void WorkQueue::close() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
  }
  item_available_.notify_all();
  room_available_.notify_all();
}

bool WorkQueue::closed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return closed_;
}

std::size_t WorkQueue::buffered() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return buffered_;
}

std::size_t WorkQueue::buffered_zones() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return by_zone_.size();
}

std::vector<std::string> WorkQueue::zones_with_at_least(int database, std::size_t items) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> zones;
  for (const auto& [key, zone] : by_zone_) {
    if (key.first == database && zone.size() >= items) zones.push_back(key.second);
  }
  return zones;
}

std::size_t WorkQueue::held() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return held_;
}

int WorkQueue::held_of_type(const std::string& job_type) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto found = held_by_type_.find(job_type);
  return found == held_by_type_.end() ? 0 : found->second;
}

std::map<std::string, int> WorkQueue::held_by_type() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return held_by_type_;
}

bool WorkQueue::wait_for_room(std::size_t limit, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  return room_available_.wait_for(lock, timeout, [&] { return buffered_ < limit || closed_; }) && !closed_;
}

}  // namespace quick::core
