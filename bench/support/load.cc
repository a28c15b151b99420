#include "support/load.h"

#include "quick/producer.h"
#include "support/baseline_queue.h"

namespace quick::bench {

std::string tenant_name(int index) { return "t" + std::to_string(index); }

std::vector<int> uniform_item_counts(int tenants, int min_items, int max_items, unsigned seed) {
  std::mt19937 random(seed);
  std::uniform_int_distribution<int> count(min_items, max_items);
  std::vector<int> counts(static_cast<std::size_t>(tenants));
  for (auto& c : counts) c = count(random);
  return counts;
}

long long fill_quick(pqxx::connection& conn, const std::vector<int>& counts, const std::string& job_type,
                     int per_transaction) {
  long long total = 0;
  std::vector<NewItem> batch;
  auto flush = [&] {
    if (batch.empty()) return;
    pqxx::work txn(conn);
    enqueue_batch_in(txn, batch);
    txn.commit();
    batch.clear();
  };
  for (std::size_t t = 0; t < counts.size(); ++t) {
    for (int i = 0; i < counts[t]; ++i) {
      NewItem item;
      item.tenant = tenant_name(static_cast<int>(t));
      item.job_type = job_type;
      item.payload = R"({"n":)" + std::to_string(i) + "}";
      batch.push_back(std::move(item));
      ++total;
    }
    if (static_cast<int>(batch.size()) >= per_transaction) flush();
  }
  flush();
  return total;
}

long long fill_baseline(pqxx::connection& conn, const std::vector<int>& counts, int per_transaction) {
  long long total = 0;
  std::vector<BaselineJob> batch;
  auto flush = [&] {
    if (batch.empty()) return;
    pqxx::work txn(conn);
    enqueue_baseline(txn, batch);
    txn.commit();
    batch.clear();
  };
  for (std::size_t t = 0; t < counts.size(); ++t) {
    for (int i = 0; i < counts[t]; ++i) {
      batch.push_back(BaselineJob{tenant_name(static_cast<int>(t)), R"({"n":)" + std::to_string(i) + "}", 0});
      ++total;
    }
    if (static_cast<int>(batch.size()) >= per_transaction) flush();
  }
  flush();
  return total;
}

}  // namespace quick::bench
