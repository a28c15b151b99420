#include "support/interleaving.h"

#include <algorithm>
#include <condition_variable>
#include <list>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace quick::testing {
namespace {

using Clock = std::chrono::steady_clock;

void append_interleavings(const std::vector<int>& total, std::vector<int>& used, std::vector<int>& prefix,
                          std::vector<std::vector<int>>& out) {
  bool complete = true;
  for (std::size_t s = 0; s < total.size(); ++s) {
    if (used[s] == total[s]) continue;
    complete = false;
    ++used[s];
    prefix.push_back(static_cast<int>(s));
    append_interleavings(total, used, prefix, out);
    prefix.pop_back();
    --used[s];
  }
  if (complete) out.push_back(prefix);
}

}  // namespace

// --- Outcomes ----------------------------------------------------------------------------------

std::optional<std::string> StepOutcome::value(std::size_t row, std::size_t column) const {
  if (row >= rows.size() || column >= rows[row].size()) return std::nullopt;
  return rows[row][column];
}

std::string StepOutcome::text() const {
  const std::string prefix = blocked ? "blocked-then-" : "";
  switch (status) {
    case Status::kPending: return "pending";
    case Status::kOk: return prefix + "ok(" + std::to_string(rows.size()) + ")";
    case Status::kFailed: return prefix + sqlstate;
    case Status::kNoOp: return "no-op";
    case Status::kSkipped: return "skipped";
  }
  return "?";
}

std::string sqlstate_of(const std::exception& error) {
  if (const auto* sql = dynamic_cast<const pqxx::sql_error*>(&error)) {
    return sql->sqlstate().empty() ? "?????" : sql->sqlstate();
  }
  if (dynamic_cast<const pqxx::serialization_failure*>(&error) != nullptr) return "40001";
  if (dynamic_cast<const pqxx::deadlock_detected*>(&error) != nullptr) return "40P01";
  if (dynamic_cast<const pqxx::statement_completion_unknown*>(&error) != nullptr) return "40003";
  if (dynamic_cast<const pqxx::transaction_rollback*>(&error) != nullptr) return "40000";
  if (dynamic_cast<const pqxx::broken_connection*>(&error) != nullptr) return "08006";
  if (dynamic_cast<const pqxx::in_doubt_error*>(&error) != nullptr) return "08007";
  return "client";  // not from the server: a libpqxx usage error or similar
}

StepOutcome execute_step(pqxx::transaction_base& txn, const std::string& sql) {
  StepOutcome outcome;
  outcome.sql = sql;
  try {
    const pqxx::result result = txn.exec(sql);
    outcome.rows.reserve(result.size());
    for (const auto& row : result) {
      Row values;
      values.reserve(row.size());
      for (const auto& field : row) {
        values.push_back(field.is_null() ? std::nullopt : std::optional<std::string>(field.c_str()));
      }
      outcome.rows.push_back(std::move(values));
    }
    outcome.status = StepOutcome::Status::kOk;
  } catch (const std::exception& error) {
    outcome.status = StepOutcome::Status::kFailed;
    outcome.sqlstate = sqlstate_of(error);
    outcome.error = error.what();
  } catch (...) {
    outcome.status = StepOutcome::Status::kFailed;
    outcome.sqlstate = "client";
    outcome.error = "unknown exception";
  }
  return outcome;
}

Step fixed_step(std::string label, std::string sql) {
  return Step{std::move(label), [sql = std::move(sql)](const RunView&) { return std::optional<std::string>(sql); }};
}

Step dynamic_step(std::string label, std::function<std::optional<std::string>(const RunView&)> sql) {
  return Step{std::move(label), std::move(sql)};
}

const StepOutcome* RunResult::failure(int session) const {
  for (const auto& outcome : outcomes[session]) {
    if (outcome.failed()) return &outcome;
  }
  return nullptr;
}

bool RunResult::committed_all(int session) const { return !hung && failure(session) == nullptr; }

int RunResult::blocked_steps() const {
  int blocked = 0;
  for (const auto& session : outcomes) {
    for (const auto& outcome : session) blocked += outcome.blocked ? 1 : 0;
  }
  return blocked;
}

std::string RunResult::trace() const {
  std::ostringstream out;
  out << "[";
  for (int s : schedule) out << names[s];
  out << "]";
  for (const auto& [session, step] : order) {
    out << " " << labels[session][step] << "=" << outcomes[session][step].text();
  }
  for (std::size_t s = 0; s < outcomes.size(); ++s) {
    if (const auto* failed = failure(static_cast<int>(s))) {
      out << " | " << names[s] << " failed: " << failed->error.substr(0, failed->error.find('\n'));
    }
  }
  if (hung) out << " | HUNG";
  return out.str();
}

// --- Sessions ----------------------------------------------------------------------------------

// One connection and the thread that owns it. The thread executes one command at a time and
// never lets an exception escape.
class InterleavingHarness::Session {
 public:
  Session(const std::string& url, const std::vector<std::string>& setup) {
    thread_ = std::thread([this, url, setup] { loop(url, setup); });
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [this] { return started_; });
    if (!startup_error_.empty()) {
      lock.unlock();
      thread_.join();
      throw std::runtime_error("interleaving session could not connect: " + startup_error_);
    }
  }

  ~Session() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      quit_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

  int pid() const { return pid_; }

  void send(std::string sql, bool rollback_on_error) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      command_ = std::move(sql);
      rollback_on_error_ = rollback_on_error;
      has_command_ = true;
      has_result_ = false;
    }
    cv_.notify_all();
  }

  // True when the command sent last has finished.
  bool wait_done(std::chrono::microseconds timeout) {
    std::unique_lock<std::mutex> lock(mutex_);
    return cv_.wait_for(lock, timeout, [this] { return has_result_; });
  }

  StepOutcome take() {
    std::lock_guard<std::mutex> lock(mutex_);
    has_result_ = false;
    return std::move(result_);
  }

 private:
  void loop(const std::string& url, const std::vector<std::string>& setup) {
    std::unique_ptr<pqxx::connection> conn;
    std::unique_ptr<pqxx::nontransaction> txn;
    try {
      conn = std::make_unique<pqxx::connection>(url);
      txn = std::make_unique<pqxx::nontransaction>(*conn);
      for (const auto& statement : setup) txn->exec(statement);
      pid_ = conn->backendpid();
    } catch (const std::exception& error) {
      startup_error_ = error.what();
    } catch (...) {
      startup_error_ = "unknown exception";
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      started_ = true;
    }
    cv_.notify_all();
    if (!startup_error_.empty()) return;

    for (;;) {
      std::string sql;
      bool rollback_on_error = false;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [this] { return has_command_ || quit_; });
        if (quit_) break;
        sql = std::move(command_);
        rollback_on_error = rollback_on_error_;
        has_command_ = false;
      }
      StepOutcome outcome = execute_step(*txn, sql);
      if (outcome.failed() && rollback_on_error) {
        // Ends the failed transaction (a no-op if the error already ended it, e.g. at COMMIT).
        try {
          txn->exec("ROLLBACK");
        } catch (...) {
        }
      }
      {
        std::lock_guard<std::mutex> lock(mutex_);
        result_ = std::move(outcome);
        has_result_ = true;
      }
      cv_.notify_all();
    }
    try {
      txn.reset();
      conn.reset();
    } catch (...) {
    }
  }

  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool started_ = false;
  std::string startup_error_;
  int pid_ = 0;
  bool quit_ = false;
  bool has_command_ = false;
  bool rollback_on_error_ = false;
  std::string command_;
  bool has_result_ = false;
  StepOutcome result_;
};

// --- Harness -----------------------------------------------------------------------------------

InterleavingHarness::InterleavingHarness(const std::string& url, int sessions, HarnessOptions options)
    : options_(std::move(options)) {
  monitor_ = std::make_unique<pqxx::connection>(url);
  monitor_->prepare("quick_harness_blocked", "SELECT pg_blocking_pids($1) && $2::int[]");
  for (int i = 0; i < sessions; ++i) {
    sessions_.push_back(std::make_unique<Session>(url, options_.session_setup));
  }
}

InterleavingHarness::~InterleavingHarness() = default;

bool InterleavingHarness::is_waiting_on_lock(int pid) {
  // Only waits on the harness's own sessions count: a lock briefly held by autovacuum is not
  // part of the interleaving, so such a step is treated as still running.
  std::string pids = "{";
  for (std::size_t i = 0; i < sessions_.size(); ++i) {
    if (i > 0) pids += ",";
    pids += std::to_string(sessions_[i]->pid());
  }
  pids += "}";
  pqxx::nontransaction txn(*monitor_);
  return txn.exec_prepared("quick_harness_blocked", pid, pids).at(0).at(0).as<bool>();
}

void InterleavingHarness::cancel(int pid) {
  pqxx::nontransaction txn(*monitor_);
  txn.exec_params("SELECT pg_cancel_backend($1)", pid);
}

InterleavingHarness::Settled InterleavingHarness::wait_settled(int session) {
  auto& target = *sessions_[session];
  const auto start = Clock::now();
  bool cancelled = false;
  std::chrono::microseconds wait{200};
  for (;;) {
    if (target.wait_done(wait)) return Settled::kDone;
    if (!cancelled && is_waiting_on_lock(target.pid())) return Settled::kBlocked;
    wait = std::min(wait * 2, std::chrono::microseconds{5000});
    if (!cancelled && Clock::now() - start > options_.hard_step_limit) {
      cancel(target.pid());
      cancelled = true;
      hung_in_run_ = true;
    }
  }
}

RunResult InterleavingHarness::run(const std::vector<SessionScript>& scripts, const std::vector<int>& schedule) {
  const int count = static_cast<int>(scripts.size());
  if (count > static_cast<int>(sessions_.size())) {
    throw std::invalid_argument("more scripts than harness sessions");
  }
  RunResult result;
  result.schedule = schedule;
  std::vector<int> scheduled(count, 0);
  for (int s : schedule) {
    if (s < 0 || s >= count) throw std::invalid_argument("schedule names an unknown session");
    ++scheduled[s];
  }
  for (int s = 0; s < count; ++s) {
    if (scheduled[s] != static_cast<int>(scripts[s].steps.size())) {
      throw std::invalid_argument("schedule does not match the steps of session " + scripts[s].name);
    }
    result.names.push_back(scripts[s].name);
    std::vector<std::string> labels;
    for (const auto& step : scripts[s].steps) labels.push_back(step.label);
    result.labels.push_back(std::move(labels));
    result.outcomes.emplace_back(scripts[s].steps.size());
  }
  hung_in_run_ = false;

  std::vector<int> next(count, 0);
  std::vector<int> running(count, -1);  // the step a session is executing, or -1
  std::vector<bool> failed(count, false);

  auto finish = [&](int s) {
    StepOutcome outcome = sessions_[s]->take();
    StepOutcome& slot = result.outcomes[s][running[s]];
    outcome.blocked = slot.blocked;
    slot = std::move(outcome);
    if (slot.failed()) failed[s] = true;
    running[s] = -1;
  };
  // Until every running step has finished or waits on a lock: a finished step (a COMMIT, or a
  // failure's ROLLBACK) may have released locks another session was waiting for.
  auto settle_all = [&] {
    bool progress = true;
    while (progress) {
      progress = false;
      for (int s = 0; s < count; ++s) {
        if (running[s] < 0) continue;
        if (wait_settled(s) == Settled::kDone) {
          finish(s);
          progress = true;
        } else {
          result.outcomes[s][running[s]].blocked = true;
        }
      }
    }
  };
  // Every remaining step belongs to a blocked session: only a timeout, a deadlock report or the
  // hard limit can end this, and any of them is a finding the test reports.
  auto wait_any = [&] {
    const auto start = Clock::now();
    bool cancelled = false;
    for (;;) {
      for (int s = 0; s < count; ++s) {
        if (running[s] >= 0 && sessions_[s]->wait_done(std::chrono::microseconds{0})) {
          finish(s);
          return;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds{1});
      if (!cancelled && Clock::now() - start > options_.hard_step_limit) {
        for (int s = 0; s < count; ++s) {
          if (running[s] >= 0) cancel(sessions_[s]->pid());
        }
        cancelled = true;
        hung_in_run_ = true;
      }
    }
  };

  std::list<int> pending(schedule.begin(), schedule.end());
  while (!pending.empty()) {
    const auto it = std::find_if(pending.begin(), pending.end(), [&](int s) { return running[s] < 0; });
    if (it == pending.end()) {
      wait_any();
      settle_all();
      continue;
    }
    const int s = *it;
    pending.erase(it);
    const int k = next[s]++;
    StepOutcome& slot = result.outcomes[s][k];
    if (failed[s]) {
      slot.status = StepOutcome::Status::kSkipped;
      continue;
    }
    std::optional<std::string> sql;
    try {
      sql = scripts[s].steps[k].sql(RunView(result.outcomes, s, k));
    } catch (const std::exception& error) {
      slot.status = StepOutcome::Status::kFailed;
      slot.sqlstate = "client";
      slot.error = std::string("step SQL could not be built: ") + error.what();
      failed[s] = true;
      continue;
    }
    if (!sql) {
      slot.status = StepOutcome::Status::kNoOp;
      continue;
    }
    slot.sql = *sql;
    result.order.emplace_back(s, k);
    running[s] = k;
    sessions_[s]->send(*sql, true);
    if (wait_settled(s) == Settled::kDone) {
      finish(s);
    } else {
      slot.blocked = true;
    }
    settle_all();
  }
  while (std::any_of(running.begin(), running.end(), [](int k) { return k >= 0; })) {
    wait_any();
    settle_all();
  }
  // Leave every session outside a transaction for the next run.
  for (int s = 0; s < count; ++s) {
    sessions_[s]->send("ROLLBACK", false);
    while (!sessions_[s]->wait_done(std::chrono::milliseconds{100})) {
    }
    sessions_[s]->take();
  }
  result.hung = hung_in_run_;
  return result;
}

RunResult InterleavingHarness::run_serially(const std::vector<SessionScript>& scripts) {
  std::vector<int> schedule;
  for (std::size_t s = 0; s < scripts.size(); ++s) {
    schedule.insert(schedule.end(), scripts[s].steps.size(), static_cast<int>(s));
  }
  return run(scripts, schedule);
}

std::vector<std::vector<int>> all_interleavings(const std::vector<int>& steps_per_session) {
  std::vector<std::vector<int>> out;
  std::vector<int> used(steps_per_session.size(), 0);
  std::vector<int> prefix;
  append_interleavings(steps_per_session, used, prefix, out);
  return out;
}

// --- Statistics --------------------------------------------------------------------------------

void EnumerationStats::add(const RunResult& run) {
  ++interleavings;
  blocked_steps += run.blocked_steps();
  hung += run.hung ? 1 : 0;
  for (std::size_t s = 0; s < run.names.size(); ++s) {
    if (const auto* failed = run.failure(static_cast<int>(s))) {
      ++aborts[run.names[s] + " " + failed->sqlstate];
    }
  }
}

int EnumerationStats::aborts_total() const {
  int total = 0;
  for (const auto& [what, n] : aborts) total += n;
  return total;
}

std::string EnumerationStats::summary(const std::string& title) const {
  std::ostringstream out;
  out << "[protocol] " << title << ": interleavings=" << interleavings << " orphans=" << orphans
      << " aborts=" << aborts_total() << " {";
  bool first = true;
  for (const auto& [what, n] : aborts) {
    out << (first ? "" : ", ") << what << ": " << n;
    first = false;
  }
  out << "} blocked_steps=" << blocked_steps << " hung=" << hung;
  if (!notes.empty()) {
    out << " {";
    first = true;
    for (const auto& [what, n] : notes) {
      out << (first ? "" : ", ") << what << ": " << n;
      first = false;
    }
    out << "}";
  }
  return out.str();
}

std::string sql_literal(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') out += '\'';
    out += c;
  }
  out += "'";
  return out;
}

}  // namespace quick::testing
