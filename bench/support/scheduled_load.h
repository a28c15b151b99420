// Open-loop producers on a fixed schedule, and end-to-end latency measured from each job's due
// time rather than from when its enqueue happened to start.
//
// A producer that sends one job at a time falls behind its schedule whenever an enqueue takes
// longer than the interval (a commit waiting for the WAL flush, a descheduled thread): the jobs
// due meanwhile go out late, at once. Latency counted from the enqueue statement (the item's
// vesting time, JobContext::waited(), ClaimedJob::waited) leaves that delay out: only the one
// slow enqueue's job shows the stall, and the jobs queued behind it in the producer look fast
// (coordinated omission). Counted from the due time, every job due during the stall carries it,
// as it would for the clients of a real open system. Each job carries its due time in its payload
// (due_payload); the handler reads it back (since_due).
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "support/latency_recorder.h"

namespace quick::bench {

// A job payload naming its due time (this process's steady clock, so the handler must run in the
// same process): {"due_ns": N}.
std::string due_payload(std::chrono::steady_clock::time_point due);

// The time from the due time `payload` names to `now`; nullopt when it names none.
std::optional<std::chrono::microseconds> since_due(const std::string& payload,
                                                   std::chrono::steady_clock::time_point now);

struct ScheduleResult {
  long scheduled = 0;  // jobs due during the run
  long sent = 0;       // enqueues that returned
  long unsent = 0;     // scheduled - sent: enqueues that threw, or never started (a producer that failed)
  std::string first_error;
  Percentiles lag;  // how late each enqueue started after its due time
};

// Sends `rate` jobs/s in all for `seconds` from `producers` threads: job i of the schedule is due
// at start + i / rate and is sent by producer i mod producers, which sleeps until it is due, or,
// when behind, sends it at once. `make_sender(p)`, called on producer p's thread, returns what
// sends one job due at a given time (it owns whatever connection it needs). An enqueue that throws
// is counted (unsent, first_error) and the producer goes on; one whose make_sender throws sends
// nothing. Never throws.
ScheduleResult run_schedule(
    int producers, double rate, double seconds,
    const std::function<std::function<void(std::chrono::steady_clock::time_point)>(int)>& make_sender);

// Producers that batch: every `tick` they commit, in one transaction, the jobs that have come due
// since their last commit (one commit per job would cap the load at the machine's commit rate).
// A job's due time is the tick it belongs to, the commit it was scheduled for: the batching
// within a tick is the load's shape and not counted, but a producer behind its ticks (a slow
// commit, after which the next one takes every tick missed) is.

// How many jobs of a producer's share (`per_second` jobs/s, job k = 1, 2, ... due at k / per_second) go out
// in the ticks from the start up to `since_start`: those due by the last tick at or before it.
long due_by_tick(double per_second, std::chrono::steady_clock::duration tick,
                 std::chrono::steady_clock::duration since_start);

// One producer's loop over the ticks start + tick, start + 2 tick, ... up to `end`: it sleeps
// until the next tick, then calls `send` with every tick that has come (oldest first; more than
// one when it fell behind), recording in `lag` how late each tick went out (producers may share
// one recorder).
void run_ticks(std::chrono::steady_clock::time_point start, std::chrono::steady_clock::time_point end,
               std::chrono::steady_clock::duration tick,
               const std::function<void(const std::vector<std::chrono::steady_clock::time_point>&)>& send,
               LatencyRecorder& lag);

}  // namespace quick::bench
