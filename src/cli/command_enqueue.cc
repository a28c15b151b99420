// quick enqueue: enqueue one item from the command line, committed on its own (quick::enqueue:
// one autocommit statement). The payload comes from --payload, or from a file or standard input
// (--payload-file): a command line cannot carry a large one ("Argument list too long").
#include <fstream>
#include <iostream>
#include <iterator>

#include "cli/commands.h"
#include "cli/database_target.h"
#include "cli/duration_flags.h"
#include "quick/errors.h"
#include "quick/producer.h"

namespace quick::cli {
namespace {

struct EnqueueCommandOptions {
  DatabaseOptions database;
  NewItem item;
  std::string delay = "0s";
  std::string client_item_id;
  std::string payload_file;
};

// The whole of `path` ("-": standard input). Throws InvalidArgument naming the file (exit 2).
std::string read_payload(const std::string& path) {
  if (path == "-") return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InvalidArgument("--payload-file: cannot read " + path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw InvalidArgument("--payload-file: error reading " + path);
  return text;
}

}  // namespace

void add_enqueue_command(CLI::App& app) {
  auto options = std::make_shared<EnqueueCommandOptions>();
  auto* command = app.add_subcommand("enqueue", "Enqueue one item");
  add_database_options(*command, options->database);
  command->add_option("--tenant", options->item.tenant, "queue zone (tenant key)")->required();
  command->add_option("--job-type", options->item.job_type, "job type")->required();
  auto* payload = command->add_option("--payload", options->item.payload, "JSON payload")->capture_default_str();
  command
      ->add_option("--payload-file", options->payload_file,
                   "read the JSON payload from this file ('-': standard input), for payloads too large for a "
                   "command line")
      ->excludes(payload);
  command->add_option("--delay", options->delay, "vesting delay, e.g. 500ms, 10s")
      ->capture_default_str()
      ->check(non_negative_delay());
  command->add_option("--priority", options->item.priority, "lower = more urgent")->capture_default_str();
  command->add_option("--client-item-id", options->client_item_id, "idempotency key within the tenant");
  on_selected(*command, [options] {
    NewItem item = options->item;
    if (!options->payload_file.empty()) item.payload = read_payload(options->payload_file);
    item.vesting_delay = flag_duration(options->delay);
    if (!options->client_item_id.empty()) item.client_item_id = options->client_item_id;
    auto conn = connect_at_current_schema(options->database);
    // One statement, committed at once: a parked zone's pointer is moved in it rather than
    // through a pull request (docs/protocol.md).
    const auto result = enqueue(*conn, item);
    std::cout << "item " << result.item_id << (result.duplicate ? " (already queued)" : "") << std::endl;
    return 0;
  });
}

}  // namespace quick::cli
