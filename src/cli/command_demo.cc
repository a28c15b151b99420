// quick demo: the main job, end to end, on the local cluster (or $QUICK_DATABASE_URL).
// Enqueues a skewed multi-tenant workload, a few noisy tenants with backlogs and many quiet ones,
// each tenant's batch in its own transaction, then shows the zones and pointers it made.
#include <iostream>
#include <random>

#include "cli/commands.h"
#include "cli/database_target.h"
#include "cli/table_printer.h"
#include "quick/database.h"
#include "quick/producer.h"

namespace quick::cli {
namespace {

struct DemoOptions {
  DatabaseOptions database;
  int noisy_tenants = 3;
  int noisy_items = 2000;
  int quiet_tenants = 200;
  int quiet_items = 2;
};

void enqueue_workload(pqxx::connection& conn, const DemoOptions& options) {
  std::mt19937 random(42);
  auto enqueue_tenant = [&](const std::string& tenant, int items) {
    pqxx::work txn(conn);
    std::vector<NewItem> batch;
    for (int i = 0; i < items; ++i) {
      NewItem item;
      item.tenant = tenant;
      item.job_type = i % 5 == 0 ? "thumbnail" : "email";
      item.payload = R"({"n":)" + std::to_string(i) + "}";
      item.priority = i % 10 == 0 ? 0 : 1;
      batch.push_back(std::move(item));
      if (batch.size() == 500) {
        enqueue_batch_in(txn, batch);
        batch.clear();
      }
    }
    if (!batch.empty()) enqueue_batch_in(txn, batch);
    txn.commit();
  };
  for (int t = 0; t < options.noisy_tenants; ++t) enqueue_tenant("noisy-" + std::to_string(t), options.noisy_items);
  for (int t = 0; t < options.quiet_tenants; ++t) enqueue_tenant("quiet-" + std::to_string(t), options.quiet_items);
}

}  // namespace

void add_demo_command(CLI::App& app) {
  auto options = std::make_shared<DemoOptions>();
  auto* command = app.add_subcommand("demo", "Run the demo: a skewed multi-tenant workload");
  add_database_options(*command, options->database);
  command->add_option("--noisy-tenants", options->noisy_tenants)->capture_default_str();
  command->add_option("--noisy-items", options->noisy_items, "items per noisy tenant")->capture_default_str();
  command->add_option("--quiet-tenants", options->quiet_tenants)->capture_default_str();
  command->add_option("--quiet-items", options->quiet_items, "items per quiet tenant")->capture_default_str();
  on_selected(*command, [options] {
    const auto target = resolve_database(options->database);
    auto conn = connect(target.url);
    std::cout << "database: " << target.url << (target.local ? " (local cluster)" : "") << "\n\n";
    enqueue_workload(*conn, *options);
    pqxx::nontransaction session(*conn);
    print_query(session, "queue", "SELECT * FROM quick.queue_summary");
    print_query(session, "deepest zones",
                "SELECT tenant, items, vested, leased, delayed FROM quick.zone_depth "
                "ORDER BY items DESC, tenant LIMIT 5");
    print_query(session, "pointers (first 5 by vesting time)",
                "SELECT tenant, state, lag FROM quick.pointer_lag ORDER BY vesting_time, tenant LIMIT 5");
    print_query(session, "job types", "SELECT job_type, items, tenants FROM quick.job_type_counts ORDER BY job_type");
    return 0;
  });
}

}  // namespace quick::cli
