#include "core/work_queue.h"

namespace quick::core {

void WorkQueue::add_locked(core::HeldItemPtr item) {
  ZoneKey key{item->database, item->item.tenant};
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

core::HeldItemPtr WorkQueue::pop(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!item_available_.wait_for(lock, timeout, [this] { return buffered_ > 0 || closed_; })) return nullptr;
  if (buffered_ == 0) return nullptr;
  const ZoneKey key = turn_order_.front();
  turn_order_.pop_front();
  auto zone = by_zone_.find(key);
  core::HeldItemPtr item = std::move(zone->second.front());
  zone->second.pop_front();
  if (zone->second.empty()) by_zone_.erase(zone);
  else turn_order_.push_back(key);  // its next item waits for the other zones' turns
  --buffered_;
  lock.unlock();
  room_available_.notify_all();
  return item;
}

void WorkQueue::finished(const core::HeldItemPtr& item) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto type = held_by_type_.find(item->item.job_type);
  if (type != held_by_type_.end() && --type->second <= 0) held_by_type_.erase(type);
  if (held_ > 0) --held_;
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

bool WorkQueue::wait_for_room(std::size_t limit, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  return room_available_.wait_for(lock, timeout, [&] { return buffered_ < limit || closed_; }) && !closed_;
}

}  // namespace quick::core
