// quick dead list|retry|purge and quick item cancel: dead items by filter, and cancelling queued
// items (quick.find_dead_items, quick.retry_dead_items, quick.purge_dead_items, quick.cancel_item;
// docs/operations.md#dead-items-and-retention).
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/database_target.h"
#include "cli/table_printer.h"
#include "quick/errors.h"
#include "store/pg_values.h"
#include "util/duration.h"

namespace quick::cli {
namespace {

// The filter every dead-item command takes; an empty field matches everything.
struct DeadItemFilter {
  DatabaseOptions database;
  std::string tenant, job_type, error_contains, older_than;
  std::vector<std::int64_t> ids;
  bool all = false;
  int limit = 50;

  bool empty() const {
    return tenant.empty() && job_type.empty() && error_contains.empty() && older_than.empty() && ids.empty();
  }
  // NULL for an empty field.
  static const char* or_null(const std::string& value) { return value.empty() ? nullptr : value.c_str(); }
  std::string ids_array() const {
    std::string text = "{";
    for (std::size_t i = 0; i < ids.size(); ++i) text += (i ? "," : "") + std::to_string(ids[i]);
    return text + "}";
  }
};

// --older-than as an interval parameter (NULL when not given). Parsed here as every duration of
// the tool and the dashboard is, not by Postgres, which reads a bare "30" as 30 seconds: a purge
// meant as 30 days would delete everything older than half a minute.
std::optional<std::string> older_than_interval(const DeadItemFilter& filter) {
  if (filter.older_than.empty()) return std::nullopt;
  try {
    return store::interval_text(util::parse_duration(filter.older_than));
  } catch (const std::invalid_argument& error) {
    throw InvalidArgument("--older-than: " + std::string(error.what()));
  }
}

void add_filter_options(CLI::App& command, DeadItemFilter& filter, bool with_ids) {
  add_database_options(command, filter.database);
  command.add_option("--tenant", filter.tenant, "only this tenant's dead items");
  command.add_option("--job-type", filter.job_type, "only this job type");
  command.add_option("--error", filter.error_contains,
                     "only items whose last error or reason contains this text (case-insensitive)");
  command.add_option("--older-than", filter.older_than,
                     "only items that died at least this long ago: a number and a unit (us, ms, s, m, h, d), "
                     "e.g. 2h, 7d");
  if (with_ids) command.add_option("--id", filter.ids, "only these ids (repeatable)");
}

// Retry or purge: every matching item in one transaction, with the count printed.
void add_bulk_command(CLI::App& dead, const std::string& name, const std::string& description,
                      const std::string& function, const std::string& done) {
  auto filter = std::make_shared<DeadItemFilter>();
  auto* command = dead.add_subcommand(name, description);
  add_filter_options(*command, *filter, true);
  command->add_flag("--all", filter->all, "act on every dead item when no filter is given");
  on_selected(*command, [filter, name, function, done] {
    if (filter->empty() && !filter->all) {
      throw InvalidArgument("quick dead " + name +
                            ": give a filter (--tenant, --job-type, --error, --older-than, --id) or --all");
    }
    const auto older_than = older_than_interval(*filter);
    auto conn = connect_at_current_schema(filter->database);
    pqxx::work txn(*conn);
    const auto count = txn.exec_params("SELECT " + function + "($1, $2, $3, $4::interval, $5::bigint[])",
                                       DeadItemFilter::or_null(filter->tenant),
                                       DeadItemFilter::or_null(filter->job_type),
                                       DeadItemFilter::or_null(filter->error_contains), store::nullable(older_than),
                                       filter->ids.empty() ? nullptr : filter->ids_array().c_str())
                           .at(0)[0]
                           .as<std::int64_t>();
    txn.commit();
    std::cout << count << " dead items " << done << std::endl;
    return 0;
  });
}

}  // namespace

void add_dead_commands(CLI::App& app) {
  auto* dead = app.add_subcommand("dead", "Find, retry and purge dead items");
  dead->require_subcommand(1);

  auto list = std::make_shared<DeadItemFilter>();
  auto* list_command = dead->add_subcommand("list", "List dead items, newest first");
  add_filter_options(*list_command, *list, false);
  list_command->add_option("--limit", list->limit, "at most this many")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  on_selected(*list_command, [list] {
    const auto older_than = older_than_interval(*list);
    auto conn = connect_at_current_schema(list->database);
    pqxx::nontransaction session(*conn);
    print_result(
        "dead items",
        session.exec_params("SELECT id, tenant, job_type, error_count, reason, last_error, "
                            "date_trunc('second', died_at) AS died_at "
                            "FROM quick.find_dead_items($1, $2, $3, $4::interval, $5)",
                            DeadItemFilter::or_null(list->tenant), DeadItemFilter::or_null(list->job_type),
                            DeadItemFilter::or_null(list->error_contains), store::nullable(older_than), list->limit));
    return 0;
  });
  add_bulk_command(*dead, "retry", "Put matching dead items back in their zones, all or none", "quick.retry_dead_items",
                   "retried");
  add_bulk_command(*dead, "purge", "Delete matching dead items, all or none", "quick.purge_dead_items", "purged");

  auto* item = app.add_subcommand("item", "Act on queued items");
  item->require_subcommand(1);
  auto cancel = std::make_shared<DeadItemFilter>();
  auto* cancel_command = item->add_subcommand("cancel", "Cancel queued items: they become dead items ('cancelled')");
  add_database_options(*cancel_command, cancel->database);
  cancel_command->add_option("id", cancel->ids, "item ids")->required();
  on_selected(*cancel_command, [cancel] {
    auto conn = connect_at_current_schema(cancel->database);
    pqxx::nontransaction session(*conn);
    int missing = 0;
    for (const auto id : cancel->ids) {
      const bool cancelled = session.exec_params("SELECT quick.cancel_item($1)", id).at(0)[0].as<bool>();
      std::cout << "item " << id << (cancelled ? " cancelled" : ": no such queued item") << std::endl;
      missing += cancelled ? 0 : 1;
    }
    return missing == 0 ? 0 : 1;
  });
}

}  // namespace quick::cli
