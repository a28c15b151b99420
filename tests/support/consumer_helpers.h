// Helpers for tests that run consumers: a fast configuration, bulk enqueue, a record of handler
// runs, and the items still queued.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <pqxx/pqxx>

#include "quick/config.h"
#include "quick/producer.h"
#include "support/eventually.h"

namespace quick::testing {

// A consumer configuration for tests: idle pickup within milliseconds, short leases so that a
// lost consumer's items come back within ~2 s, empty zones' pointers collected at once.
inline ConsumerConfig fast_config(const std::string& url, const std::string& consumer_id) {
  ConsumerConfig config;
  config.consumer_id = consumer_id;
  config.databases.push_back(DatabaseConfig{"main", url});
  config.scanner.idle_poll_interval = std::chrono::milliseconds(5);
  config.scanner.in_order_lease_duration = std::chrono::seconds(1);
  config.manager.min_inactive = std::chrono::milliseconds(0);
  config.manager.p_duration = std::chrono::milliseconds(500);
  config.worker.threads = 4;
  config.worker.item_lease_duration = std::chrono::seconds(2);
  config.stop_deadline = std::chrono::seconds(2);
  config.reconnect_delay_max = std::chrono::milliseconds(200);
  config.default_job_type.retry.backoff_base = std::chrono::milliseconds(20);
  config.default_job_type.retry.backoff_max = std::chrono::milliseconds(200);
  config.default_job_type.retry.backoff_jitter = 0;
  return config;
}

// fast_config, but polling alone would look for new work only every 10 s (and renew the Scanner's
// roles every 20 s): work found sooner was found through a notification or the Scanner's own
// earlier look (docs/consumer.md#waking-up).
inline ConsumerConfig slow_polling_config(const std::string& url, const std::string& consumer_id) {
  ConsumerConfig config = fast_config(url, consumer_id);
  config.scanner.idle_poll_interval = std::chrono::seconds(10);
  config.scanner.listening_poll_interval = std::chrono::minutes(10);
  config.scanner.in_order_lease_duration = std::chrono::seconds(60);
  return config;
}

// Enqueues one item with enqueue_in, in a committed transaction of its own. Returns its id.
inline std::int64_t enqueue_one(const std::string& url, const std::string& tenant, const std::string& job_type,
                                std::chrono::milliseconds delay = std::chrono::milliseconds(0)) {
  pqxx::connection conn(url);
  pqxx::work txn(conn);
  NewItem item;
  item.tenant = tenant;
  item.job_type = job_type;
  item.vesting_delay = delay;
  const auto result = enqueue_in(txn, item);
  txn.commit();
  return result.item_id;
}

// Enqueues `count` items of `job_type` spread round robin over `tenants` zones named
// "<tenant_prefix><i>", in batches, each batch in its own committed transaction. Returns the ids.
inline std::vector<std::int64_t> enqueue_items(const std::string& url, int count, int tenants,
                                               const std::string& job_type, const std::string& tenant_prefix = "t",
                                               int batch_size = 200) {
  pqxx::connection conn(url);
  std::vector<std::int64_t> ids;
  for (int start = 0; start < count; start += batch_size) {
    std::vector<NewItem> items;
    for (int i = start; i < std::min(count, start + batch_size); ++i) {
      NewItem item;
      item.tenant = tenant_prefix + std::to_string(i % tenants);
      item.job_type = job_type;
      item.payload = "{\"i\":" + std::to_string(i) + "}";
      items.push_back(std::move(item));
    }
    pqxx::work txn(conn);
    for (const auto& result : enqueue_batch_in(txn, items)) ids.push_back(result.item_id);
    txn.commit();
  }
  return ids;
}

// Which items a handler ran, how often, and when each run started (steady clock).
class RunLog {
 public:
  void record(std::int64_t id) {
    std::lock_guard<std::mutex> lock(mutex_);
    ++runs_[id];
    starts_[id].push_back(Clock::now());
    ++total_;
  }
  int runs(std::int64_t id) const {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto found = runs_.find(id);
    return found == runs_.end() ? 0 : found->second;
  }
  std::vector<Clock::time_point> starts(std::int64_t id) const {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto found = starts_.find(id);
    return found == starts_.end() ? std::vector<Clock::time_point>{} : found->second;
  }
  std::size_t distinct() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return runs_.size();
  }
  std::size_t total() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return total_;
  }
  std::set<std::int64_t> ids() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::set<std::int64_t> ids;
    for (const auto& [id, runs] : runs_) ids.insert(id);
    return ids;
  }
  std::size_t ran_more_than_once() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::size_t count = 0;
    for (const auto& [id, runs] : runs_) count += runs > 1 ? 1 : 0;
    return count;
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::int64_t, int> runs_;
  std::map<std::int64_t, std::vector<Clock::time_point>> starts_;
  std::size_t total_ = 0;
};

// Ids of the rows of quick.items (optionally filtered by a WHERE clause).
inline std::set<std::int64_t> queued_ids(const std::string& url, const std::string& where = "true") {
  pqxx::connection conn(url);
  pqxx::nontransaction session(conn);
  std::set<std::int64_t> ids;
  for (const auto& row : session.exec("SELECT id FROM quick.items WHERE " + where))
    ids.insert(row[0].as<std::int64_t>());
  return ids;
}

}  // namespace quick::testing
