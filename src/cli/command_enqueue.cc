// quick enqueue: enqueue one item from the command line (in its own transaction).
#include <iostream>

#include "cli/commands.h"
#include "cli/database_target.h"
#include "cli/duration_flags.h"
#include "quick/producer.h"

namespace quick::cli {
namespace {

struct EnqueueCommandOptions {
  DatabaseOptions database;
  NewItem item;
  std::string delay = "0s";
  std::string client_item_id;
};

}  // namespace

void add_enqueue_command(CLI::App& app) {
  auto options = std::make_shared<EnqueueCommandOptions>();
  auto* command = app.add_subcommand("enqueue", "Enqueue one item");
  add_database_options(*command, options->database);
  command->add_option("--tenant", options->item.tenant, "queue zone (tenant key)")->required();
  command->add_option("--job-type", options->item.job_type, "job type")->required();
  command->add_option("--payload", options->item.payload, "JSON payload")->capture_default_str();
  command->add_option("--delay", options->delay, "vesting delay, e.g. 500ms, 10s")
      ->capture_default_str()
      ->check(non_negative_delay());
  command->add_option("--priority", options->item.priority, "lower = more urgent")->capture_default_str();
  command->add_option("--client-item-id", options->client_item_id, "idempotency key within the tenant");
  on_selected(*command, [options] {
    NewItem item = options->item;
    item.vesting_delay = flag_duration(options->delay);
    if (!options->client_item_id.empty()) item.client_item_id = options->client_item_id;
    auto conn = connect_at_current_schema(options->database);
    pqxx::work txn(*conn);
    // This transaction holds nothing else and commits at once: a parked zone's pointer can be
    // moved in it rather than through a pull request (docs/protocol.md).
    quick::EnqueueOptions pull;
    pull.pull_in_transaction = true;
    const auto result = enqueue_in(txn, item, pull);
    txn.commit();
    std::cout << "item " << result.item_id << (result.duplicate ? " (already queued)" : "") << std::endl;
    return 0;
  });
}

}  // namespace quick::cli
