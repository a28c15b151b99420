// Filling queues for experiments (setup, not measured): the same jobs into quick-pg's zones and
// into the baseline's table.
#pragma once

#include <random>
#include <string>
#include <vector>

#include <pqxx/pqxx>

namespace quick::bench {

// Tenant names "t<N>".
std::string tenant_name(int index);

// Per tenant, how many items: uniform in [min_items, max_items], seeded.
std::vector<int> uniform_item_counts(int tenants, int min_items, int max_items, unsigned seed);

// Enqueues counts[t] items for each tenant t, in transactions of about `per_transaction` items.
// Returns the number of items.
long long fill_quick(pqxx::connection& conn, const std::vector<int>& counts, const std::string& job_type,
                     int per_transaction = 1000);
long long fill_baseline(pqxx::connection& conn, const std::vector<int>& counts, int per_transaction = 1000);

}  // namespace quick::bench
