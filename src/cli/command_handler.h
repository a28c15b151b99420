// The handler `quick worker` uses for a job type configured with a `command`: runs it once per
// item with the payload (JSON) on its standard input and these environment variables:
//   QUICK_ITEM_ID, QUICK_TENANT, QUICK_JOB_TYPE, QUICK_ATTEMPT, QUICK_DATABASE,
// plus, of the worker's own environment, only PATH, HOME, LANG, LC_*, TZ and the names the job
// type's `environment` lists.
// Exit status 0: done. permanent_failure_exit_code (default 65, EX_DATAERR): permanent failure.
// Anything else (75, EX_TEMPFAIL, among them), or a signal: transient failure (retried per
// policy). The command is stopped (SIGTERM to its process
// group, then SIGKILL) when the item's execution bound passes, its lease is lost, or the worker
// stops; a command so stopped has failed (not done, never a permanent failure), whatever its exit
// status. Once it has exited, whatever it left running in its process group is killed (SIGKILL).
// Its output goes to the log (logger quick.command).
#pragma once

#include "quick/config.h"
#include "quick/handler.h"

namespace quick::cli {

Handler make_command_handler(const std::string& job_type, const JobTypeConfig& settings);

// SIGKILLs the process group of every command still running (called once the consumer has
// stopped, so that no command outlives `quick worker`). Returns how many there were.
int kill_remaining_commands();

}  // namespace quick::cli
