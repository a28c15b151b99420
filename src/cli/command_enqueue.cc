// quick enqueue: enqueue one item from the command line, committed on its own (quick::enqueue:
// one autocommit statement). The payload comes from --payload, or from a file or standard input
// (--payload-file): a command line cannot carry a large one ("Argument list too long").
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

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

// All of `fd` up to its end; throws InvalidArgument naming `what` on a read error.
std::string read_all(int fd, const std::string& what) {
  std::string text;
  char buffer[65536];
  while (true) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n > 0) {
      text.append(buffer, static_cast<std::size_t>(n));
    } else if (n == 0) {
      return text;
    } else if (errno != EINTR) {
      throw InvalidArgument("--payload-file: error reading " + what + ": " + std::strerror(errno));
    }
  }
}

// The whole of `path` ("-": standard input), which must hold something. Throws InvalidArgument
// naming the file (exit 2).
std::string read_payload(const std::string& path) {
  if (path.empty()) throw InvalidArgument("--payload-file needs a file name, or - for standard input");
  if (path == "-") {
    std::string text = read_all(STDIN_FILENO, "standard input");
    if (text.empty()) throw InvalidArgument("--payload-file: standard input was empty: the payload must be JSON");
    return text;
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw InvalidArgument("--payload-file: cannot read " + path + ": " + std::strerror(errno));
  struct stat info {};
  std::string text;
  try {
    if (::fstat(fd, &info) == 0 && S_ISDIR(info.st_mode)) {
      throw InvalidArgument("--payload-file: cannot read " + path + ": it is a directory");
    }
    text = read_all(fd, path);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  if (text.empty()) throw InvalidArgument("--payload-file: " + path + " is empty: the payload must be JSON");
  return text;
}

// validate_new_item's JSON parser skips a UTF-8 byte order mark, which Postgres refuses: say so
// before connecting. `source` names where the payload came from.
void refuse_byte_order_mark(const std::string& payload, const std::string& source) {
  if (payload.rfind("\xEF\xBB\xBF", 0) == 0) {
    throw InvalidArgument(source +
                          " starts with a UTF-8 byte order mark (EF BB BF), which a JSON payload must not "
                          "have: save it without one");
  }
}

}  // namespace

void add_enqueue_command(CLI::App& app) {
  auto options = std::make_shared<EnqueueCommandOptions>();
  auto* command = app.add_subcommand("enqueue", "Enqueue one item");
  add_database_options(*command, options->database);
  command->add_option("--tenant", options->item.tenant, "queue zone (tenant key)")->required();
  command->add_option("--job-type", options->item.job_type, "job type")->required();
  auto* payload = command->add_option("--payload", options->item.payload, "JSON payload")->capture_default_str();
  auto* payload_file = command->add_option("--payload-file", options->payload_file,
                                           "read the JSON payload from this file ('-': standard input), for payloads "
                                           "too large for a command line");
  payload_file->excludes(payload);
  command->add_option("--delay", options->delay, "vesting delay, e.g. 500ms, 10s")
      ->capture_default_str()
      ->check(non_negative_delay());
  command->add_option("--priority", options->item.priority, "lower = more urgent")->capture_default_str();
  command->add_option("--client-item-id", options->client_item_id, "idempotency key within the tenant");
  on_selected(*command, [options, payload_file] {
    NewItem item = options->item;
    if (payload_file->count() > 0) {
      item.payload = read_payload(options->payload_file);
      const std::string& file = options->payload_file;
      refuse_byte_order_mark(item.payload, "--payload-file: " + (file == "-" ? std::string("standard input") : file));
    } else {
      refuse_byte_order_mark(item.payload, "--payload");
    }
    item.vesting_delay = flag_duration(options->delay);
    if (!options->client_item_id.empty()) item.client_item_id = options->client_item_id;
    // Bad input is reported as such before connecting, also when the database is unreachable.
    validate_new_item(item);
    auto conn = connect_at_current_schema(options->database);
    // One statement, committed at once: a parked zone's pointer is moved in it rather than
    // through a pull request (docs/protocol.md).
    const auto result = enqueue(*conn, item);
    std::cout << "item " << result.item_id << (result.duplicate ? " (already queued)" : "") << std::endl;
    return 0;
  });
}

}  // namespace quick::cli
