#include "cli/command_handler.h"

#include <signal.h>

#include <iterator>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "process/process.h"
#include "util/logging.h"
#include "util/printable.h"

namespace quick::cli {
namespace {

// Process groups of the commands running now.
std::mutex running_mutex;
std::set<int> running_groups;  // guarded by running_mutex

// What every job command inherits from the worker's environment, when set: enough to find
// programs, write under $HOME and format text as the operator expects. Nothing else, so that a
// command never sees the worker's database URLs or libpq's PG* settings unless the
// configuration names a variable (JobTypeConfig::environment, which refuses those).
constexpr const char* kInheritedByEveryCommand[] = {"PATH", "HOME", "LANG", "LC_*", "TZ"};

std::vector<std::string> inherited_variables(const JobTypeConfig& settings) {
  std::vector<std::string> names(std::begin(kInheritedByEveryCommand), std::end(kInheritedByEveryCommand));
  names.insert(names.end(), settings.environment.begin(), settings.environment.end());
  return names;
}

// The last line(s) of a command's output, short enough for an error message.
std::string output_tail(const std::string& output) {
  constexpr std::size_t kMax = 500;
  std::string tail = output.size() > kMax ? "..." + output.substr(output.size() - kMax) : output;
  while (!tail.empty() && (tail.back() == '\n' || tail.back() == ' ')) tail.pop_back();
  return tail;
}

}  // namespace

int kill_remaining_commands() {
  std::lock_guard<std::mutex> lock(running_mutex);
  for (int group : running_groups) ::kill(-group, SIGKILL);
  return static_cast<int>(running_groups.size());
}

Handler make_command_handler(const std::string& job_type, const JobTypeConfig& settings) {
  auto log = util::component_logger("quick.command");
  return [job_type, settings, log](JobContext& job) -> JobResult {
    const Item& item = job.item();
    process::ProcessOptions options;
    options.argv = settings.command;
    options.stdin_data = item.payload;
    options.should_stop = [&job] { return job.should_stop(); };
    // Well inside the consumer's own stop grace (2 s), so a command ignoring SIGTERM is killed
    // before the consumer gives up waiting for it.
    options.kill_grace = std::chrono::milliseconds(1000);
    // What the command started in the background dies with it: otherwise it would outlive the
    // item and the worker, which only kills the groups of commands still running.
    options.kill_group_after_exit = true;
    options.on_started = [](int pid) {
      std::lock_guard<std::mutex> lock(running_mutex);
      running_groups.insert(pid);
    };
    options.on_finished = [](int pid) {
      std::lock_guard<std::mutex> lock(running_mutex);
      running_groups.erase(pid);
    };
    options.inherit_only = inherited_variables(settings);
    options.extra_environment = {"QUICK_ITEM_ID=" + std::to_string(item.id), "QUICK_TENANT=" + item.tenant,
                                 "QUICK_JOB_TYPE=" + item.job_type, "QUICK_ATTEMPT=" + std::to_string(job.attempt()),
                                 "QUICK_DATABASE=" + job.database_name()};
    const auto result = process::run_process(options);
    const std::string tail = output_tail(result.output);
    // One log line per run, whatever the tenant, the job type or the output hold.
    if (!tail.empty()) {
      log->info("{} item {} (tenant {}): {}", util::escape_unprintable(job_type), item.id,
                util::escape_unprintable(item.tenant), util::escape_unprintable(tail));
    }
    if (!result.started) return JobResult::retry("command could not start: " + result.output);
    const std::string what = settings.command.front() + " " + result.describe() + (tail.empty() ? "" : ": " + tail);
    // Stopped by us (execution bound, lease lost, the worker stopping): the work was cut short,
    // whatever status the command chose to exit with on SIGTERM, 0 and the permanent code included.
    // The Worker reports it as "execution bound exceeded", a lost lease, or an interruption by stop.
    if (result.stopped || result.timed_out) return JobResult::retry("interrupted: " + what);
    if (result.succeeded()) return JobResult::done();
    if (result.exit_code && *result.exit_code == settings.permanent_failure_exit_code) {
      return JobResult::permanent_failure(what);
    }
    return JobResult::retry(what);
  };
}

}  // namespace quick::cli
