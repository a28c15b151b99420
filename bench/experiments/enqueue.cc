// Experiment 1: enqueue throughput, quick-pg against plain INSERTs into a bare table, on the same
// server in the same run.
//
// Phases (each run by 4 client threads with one connection apiece; 1 = one job per transaction,
// 100 = 100 jobs per transaction):
//   plain-1     one-row INSERT per transaction into a bare jobs table (the baseline)
//   quick-1     quick::enqueue_in, one item per transaction
//   plain-100   100-row INSERT ... SELECT unnest(...) per transaction into the bare table
//   queue-100   the same into the plain SKIP LOCKED queue's jobs table, which has the index its
//               consumers claim by (the baseline queue of the other experiments)
//   quick-100   quick::enqueue_batch_in, 100 items per transaction
// The phases of a comparison alternate in short rounds (A B A B ... or A B C A B C ...) after a
// warm-up, because the machine is shared and noisy: a quick phase is only ever compared with
// baselines that ran next to it. Baselines use prepared statements, as an application would.
// Before the phases every tenant gets one queued item, so that measured enqueues find their
// zone's pointer (the steady state of a busy queue); otherwise the first enqueue per tenant also
// creates the pointer, and how many of those a phase sees would depend on its speed.
// Targets: quick-1 >= 0.8x plain-1, quick-100 >= 0.5x plain-100 (jobs/s over all rounds), judged
// against the bare table, the stricter of the two batch baselines; the ratio to queue-100 is
// reported beside it.
#include <atomic>
#include <memory>
#include <mutex>
#include <random>
#include <thread>

#include "quick/database.h"
#include "quick/producer.h"
#include "support/bench_database.h"
#include "support/experiment.h"
#include "support/load.h"
#include "support/machine_cpu.h"

namespace quick::bench {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kClients = 4;
constexpr int kBatchSize = 100;

// The baseline: what an application would write without a queue library.
constexpr const char* kBareTableDdl =
    "CREATE TABLE bench_jobs ("
    " id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
    " tenant text NOT NULL,"
    " job_type text NOT NULL,"
    " payload jsonb NOT NULL,"
    " created timestamptz NOT NULL DEFAULT now())";
constexpr const char* kBareTableDescription =
    "`bench_jobs(id bigint identity PK, tenant text, job_type text, payload jsonb, created timestamptz default now())`";
constexpr const char* kPlainInsertOne = "INSERT INTO bench_jobs (tenant, job_type, payload) VALUES ($1, $2, $3::jsonb)";
constexpr const char* kPlainInsertMany =
    "INSERT INTO bench_jobs (tenant, job_type, payload) SELECT * FROM unnest($1::text[], $2::text[], $3::jsonb[])";
// The plain SKIP LOCKED queue's table, as bench/support/baseline_queue.cc creates it: a queue's
// consumers need its (priority, run_at) index, so its enqueues pay for one index more.
constexpr const char* kQueueTableDdl =
    "CREATE TABLE queue_jobs ("
    " id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
    " tenant text NOT NULL,"
    " priority integer NOT NULL DEFAULT 0,"
    " run_at timestamptz NOT NULL DEFAULT statement_timestamp(),"
    " payload jsonb NOT NULL DEFAULT '{}');"
    "CREATE INDEX queue_jobs_claim_order ON queue_jobs (priority, run_at)";
constexpr const char* kQueueInsertMany =
    "INSERT INTO queue_jobs (tenant, payload) SELECT * FROM unnest($1::text[], $2::jsonb[])";

// Random jobs spread over the tenants, with a small JSON payload. One per client thread.
class JobSource {
 public:
  JobSource(int tenants, unsigned seed) : random_(seed), tenant_(0, tenants - 1) {}

  NewItem next() {
    NewItem item;
    item.tenant = tenant_name(tenant_(random_));
    item.job_type = "send_receipt";
    item.payload = R"({"order_id": )" + std::to_string(order_id_(random_)) + R"(, "channel": "email", "attempt": 1})";
    return item;
  }

  std::vector<NewItem> next_batch(int size) {
    std::vector<NewItem> items;
    items.reserve(static_cast<std::size_t>(size));
    for (int i = 0; i < size; ++i) items.push_back(next());
    return items;
  }

 private:
  std::mt19937_64 random_;
  std::uniform_int_distribution<int> tenant_;
  std::uniform_int_distribution<long> order_id_{1, 1'000'000'000};
};

// {a,b,c} literal of one field of every item, for the unnest() baseline: elements double-quoted,
// with " and \ escaped.
std::string array_literal(const std::vector<NewItem>& items, const std::string NewItem::*field) {
  std::string out = "{";
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ',';
    out += '"';
    for (char c : items[i].*field) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  return out + "}";
}

void seed_tenants(pqxx::connection& conn, int tenants) {
  for (int first = 0; first < tenants; first += 1000) {
    std::vector<NewItem> items;
    for (int t = first; t < std::min(tenants, first + 1000); ++t)
      items.push_back(NewItem{tenant_name(t), "seed", "{}", {}, 0, std::nullopt});
    pqxx::work txn(conn);
    enqueue_batch_in(txn, items);
    txn.commit();
  }
}

// One transaction of a phase, on the client's own connection.
using Transaction = std::function<void(pqxx::connection&, JobSource&)>;

struct Phase {
  std::string name;
  int jobs_per_txn;
  Transaction run;
};

Phase plain_single() {
  return {"plain-1", 1, [](pqxx::connection& conn, JobSource& jobs) {
            conn.prepare("plain_one", kPlainInsertOne);  // no-op after the first call
            const auto item = jobs.next();
            pqxx::work txn(conn);
            txn.exec_prepared("plain_one", item.tenant, item.job_type, item.payload);
            txn.commit();
          }};
}

Phase quick_single() {
  return {"quick-1", 1, [](pqxx::connection& conn, JobSource& jobs) {
            const auto item = jobs.next();
            pqxx::work txn(conn);
            enqueue_in(txn, item);
            txn.commit();
          }};
}

// Autocommit: one statement, no BEGIN/COMMIT, for a producer with nothing else to commit.
Phase plain_single_autocommit() {
  return {"plain-1-autocommit", 1, [](pqxx::connection& conn, JobSource& jobs) {
            conn.prepare("plain_one", kPlainInsertOne);
            const auto item = jobs.next();
            pqxx::nontransaction autocommit(conn);
            autocommit.exec_prepared("plain_one", item.tenant, item.job_type, item.payload);
          }};
}

Phase quick_single_autocommit() {
  return {"quick-1-autocommit", 1, [](pqxx::connection& conn, JobSource& jobs) { enqueue(conn, jobs.next()); }};
}

Phase plain_batch() {
  return {"plain-100", kBatchSize, [](pqxx::connection& conn, JobSource& jobs) {
            conn.prepare("plain_many", kPlainInsertMany);
            const auto items = jobs.next_batch(kBatchSize);
            pqxx::work txn(conn);
            txn.exec_prepared("plain_many", array_literal(items, &NewItem::tenant),
                              array_literal(items, &NewItem::job_type), array_literal(items, &NewItem::payload));
            txn.commit();
          }};
}

Phase queue_batch() {
  return {"queue-100", kBatchSize, [](pqxx::connection& conn, JobSource& jobs) {
            conn.prepare("queue_many", kQueueInsertMany);
            const auto items = jobs.next_batch(kBatchSize);
            pqxx::work txn(conn);
            txn.exec_prepared("queue_many", array_literal(items, &NewItem::tenant),
                              array_literal(items, &NewItem::payload));
            txn.commit();
          }};
}

Phase quick_batch() {
  return {"quick-100", kBatchSize, [](pqxx::connection& conn, JobSource& jobs) {
            const auto items = jobs.next_batch(kBatchSize);
            pqxx::work txn(conn);
            enqueue_batch_in(txn, items);
            txn.commit();
          }};
}

struct PhaseResult {
  long transactions = 0;
  long retries = 0;  // deadlocks / serialization failures (expected: none)
  double seconds = 0;
  int jobs_per_txn = 1;
  double cpu_core_seconds = 0;  // the whole machine's processor time over the phase (clients and server)
  double txn_rate() const { return seconds > 0 ? static_cast<double>(transactions) / seconds : 0; }
  double job_rate() const { return txn_rate() * jobs_per_txn; }
  double cpu_us_per_job() const {
    return transactions > 0 ? cpu_core_seconds * 1e6 / static_cast<double>(transactions * jobs_per_txn) : 0;
  }
  void add(const PhaseResult& other) {
    transactions += other.transactions;
    retries += other.retries;
    seconds += other.seconds;
    cpu_core_seconds += other.cpu_core_seconds;
  }
};

// The client side of one phase: one connection and one job source per client thread (libpqxx
// objects are not thread-safe), kept open across the phase's rounds so that prepared statements
// and caches stay warm between them.
class Clients {
 public:
  Clients(Phase phase, const std::string& url, int tenants, unsigned seed) : phase_(std::move(phase)) {
    for (int c = 0; c < kClients; ++c) {
      connections_.push_back(quick::connect(url));
      jobs_.emplace_back(tenants, seed * 1000 + static_cast<unsigned>(c));
    }
  }

  // Runs the phase on every client for `seconds`. Every committed transaction counts, and the
  // time runs until the last client has finished its last transaction.
  PhaseResult run_for(double seconds) {
    std::atomic<long> transactions{0}, retries{0};
    std::mutex error_mutex;
    std::string first_error;
    const CpuMeter cpu;
    const auto start = Clock::now();
    const auto until = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    std::vector<std::thread> threads;
    for (std::size_t c = 0; c < connections_.size(); ++c) {
      threads.emplace_back([&, c] {
        try {
          while (Clock::now() < until) {
            try {
              phase_.run(*connections_[c], jobs_[c]);
              ++transactions;
            } catch (const pqxx::transaction_rollback&) {
              ++retries;  // tried again with new jobs
            }
          }
        } catch (const std::exception& e) {
          // No exception may escape a thread; the first one fails the run after the join.
          std::lock_guard<std::mutex> lock(error_mutex);
          if (first_error.empty()) first_error = phase_.name + ": " + e.what();
        }
      });
    }
    for (auto& t : threads) t.join();
    if (!first_error.empty()) throw std::runtime_error(first_error);
    return PhaseResult{transactions, retries, std::chrono::duration<double>(Clock::now() - start).count(),
                       phase_.jobs_per_txn, cpu.finish().busy_core_seconds};
  }

  const Phase& phase() const { return phase_; }

 private:
  Phase phase_;
  std::vector<std::unique_ptr<pqxx::connection>> connections_;
  std::vector<JobSource> jobs_;
};

// One candidate against one or more baselines, measured in the same alternating rounds.
struct Comparison {
  std::string name;  // "single", "batch"
  std::vector<PhaseResult> baselines;
  PhaseResult candidate;
  std::vector<std::vector<double>> round_ratios;  // per baseline, per round
  double ratio(std::size_t baseline = 0) const { return candidate.job_rate() / baselines.at(baseline).job_rate(); }
};

std::vector<std::string> csv_row(const std::string& comparison, const std::string& round, const std::string& phase,
                                 const PhaseResult& r, const std::string& ratio, const std::string& ratio_queue) {
  return {comparison,
          round,
          phase,
          std::to_string(r.jobs_per_txn),
          std::to_string(r.transactions),
          std::to_string(r.retries),
          fixed(r.seconds, 3),
          fixed(r.job_rate(), 1),
          fixed(r.txn_rate(), 1),
          ratio,
          ratio_queue,
          fixed(r.cpu_us_per_job(), 2)};
}

// Alternates the baselines and the candidate in `rounds` slices (A B A B ..., or A B C A B C ...),
// so that the load of a shared machine, which drifts over seconds, weighs on all alike.
Comparison compare(ExperimentContext& ctx, const std::string& name, std::vector<Phase> baselines, Phase candidate,
                   const std::string& url, int tenants, double seconds, int rounds, double warmup,
                   std::vector<std::vector<std::string>>& csv) {
  std::vector<std::unique_ptr<Clients>> base_clients;
  for (std::size_t b = 0; b < baselines.size(); ++b) {
    base_clients.push_back(
        std::make_unique<Clients>(std::move(baselines[b]), url, tenants, static_cast<unsigned>(b + 1)));
  }
  Clients cand_clients(std::move(candidate), url, tenants, 100);
  for (auto& clients : base_clients) clients->run_for(warmup);  // prepares statements, warms caches
  cand_clients.run_for(warmup);
  Comparison result{name, {}, {0, 0, 0, cand_clients.phase().jobs_per_txn, 0}, {}};
  for (const auto& clients : base_clients) {
    result.baselines.push_back({0, 0, 0, clients->phase().jobs_per_txn, 0});
    result.round_ratios.emplace_back();
  }
  // The ratio columns of a candidate row: to the first baseline, and to the queue table's if any.
  const auto ratio_columns = [&](const PhaseResult& cand, const std::vector<PhaseResult>& bases) {
    std::vector<std::string> out{fixed(cand.job_rate() / bases[0].job_rate(), 3), ""};
    if (bases.size() > 1) out[1] = fixed(cand.job_rate() / bases[1].job_rate(), 3);
    return out;
  };
  for (int round = 1; round <= rounds; ++round) {
    std::vector<PhaseResult> bases;
    for (std::size_t b = 0; b < base_clients.size(); ++b) {
      bases.push_back(base_clients[b]->run_for(seconds / rounds));
      result.baselines[b].add(bases.back());
      csv.push_back(csv_row(name, std::to_string(round), base_clients[b]->phase().name, bases.back(), "", ""));
    }
    const auto cand = cand_clients.run_for(seconds / rounds);
    result.candidate.add(cand);
    for (std::size_t b = 0; b < bases.size(); ++b)
      result.round_ratios[b].push_back(cand.job_rate() / bases[b].job_rate());
    const auto ratios = ratio_columns(cand, bases);
    csv.push_back(csv_row(name, std::to_string(round), cand_clients.phase().name, cand, ratios[0], ratios[1]));
  }
  std::string line;
  for (std::size_t b = 0; b < base_clients.size(); ++b) {
    csv.push_back(csv_row(name, "all", base_clients[b]->phase().name, result.baselines[b], "", ""));
    line += base_clients[b]->phase().name + " " + fixed(result.baselines[b].job_rate(), 0) + " jobs/s (CPU " +
            fixed(result.baselines[b].cpu_us_per_job(), 1) + " us/job), ";
  }
  const auto ratios = ratio_columns(result.candidate, result.baselines);
  csv.push_back(csv_row(name, "all", cand_clients.phase().name, result.candidate, ratios[0], ratios[1]));
  line += cand_clients.phase().name + " " + fixed(result.candidate.job_rate(), 0) + " jobs/s (CPU " +
          fixed(result.candidate.cpu_us_per_job(), 1) + " us/job):";
  for (std::size_t b = 0; b < base_clients.size(); ++b) {
    line += " " + fixed(result.ratio(b), 2) + "x " + base_clients[b]->phase().name;
  }
  ctx.progress(line);
  return result;
}

void run_enqueue(ExperimentContext& ctx) {
  const int tenants = ctx.size(10000, 1000);
  const double seconds = ctx.quick ? 1.0 : 5.0;  // measured, per phase, all rounds together
  const int rounds = ctx.quick ? 2 : 5;
  const double warmup = ctx.quick ? 0.3 : 1.0;

  ScratchDatabase db(ctx.server_url, "quick_bench_enqueue");
  db.exec(kBareTableDdl);
  db.exec(kQueueTableDdl);
  {
    auto conn = db.connect();
    seed_tenants(*conn, tenants);
  }
  db.vacuum();
  ctx.progress(std::to_string(tenants) + " tenants seeded; " + std::to_string(kClients) + " clients, " +
               fixed(seconds, 0) + " s per phase in " + std::to_string(rounds) + " rounds");

  std::vector<std::vector<std::string>> csv;
  const auto single = compare(ctx, "single", {plain_single()}, quick_single(), db.url(), tenants, seconds, rounds,
                              warmup, csv);
  const auto batch = compare(ctx, "batch", {plain_batch(), queue_batch()}, quick_batch(), db.url(), tenants, seconds,
                             rounds, warmup, csv);
  const auto autocommit = compare(ctx, "autocommit", {plain_single_autocommit()}, quick_single_autocommit(), db.url(),
                                  tenants, seconds, rounds, warmup, csv);
  ctx.results->write_csv("enqueue.csv",
                         {"comparison", "round", "phase", "jobs_per_txn", "transactions", "retries", "seconds",
                          "jobs_per_s", "txn_per_s", "ratio_vs_plain", "ratio_vs_queue", "cpu_us_per_job"},
                         csv);

  std::vector<std::vector<std::string>> table;
  const auto per_round = [](const std::vector<double>& ratios) {
    std::string out;
    for (double r : ratios) out += (out.empty() ? "" : " ") + fixed(r, 2);
    return out;
  };
  const auto baseline_row = [](const std::string& name, const PhaseResult& r) {
    return std::vector<std::string>{name, fixed(r.job_rate(), 0),       fixed(r.txn_rate(), 0),   "", "", "",
                                    "",   fixed(r.cpu_us_per_job(), 1), std::to_string(r.retries)};
  };
  table.push_back(baseline_row("plain-1", single.baselines[0]));
  table.push_back({"quick-1", fixed(single.candidate.job_rate(), 0), fixed(single.candidate.txn_rate(), 0),
                   fixed(single.ratio(), 2) + "x", per_round(single.round_ratios[0]), "", "",
                   fixed(single.candidate.cpu_us_per_job(), 1), std::to_string(single.candidate.retries)});
  table.push_back(baseline_row("plain-100", batch.baselines[0]));
  table.push_back(baseline_row("queue-100", batch.baselines[1]));
  table.push_back({"quick-100", fixed(batch.candidate.job_rate(), 0), fixed(batch.candidate.txn_rate(), 0),
                   fixed(batch.ratio(0), 2) + "x", per_round(batch.round_ratios[0]), fixed(batch.ratio(1), 2) + "x",
                   per_round(batch.round_ratios[1]), fixed(batch.candidate.cpu_us_per_job(), 1),
                   std::to_string(batch.candidate.retries)});
  table.push_back(baseline_row("plain-1-autocommit", autocommit.baselines[0]));
  table.push_back({"quick-1-autocommit", fixed(autocommit.candidate.job_rate(), 0),
                   fixed(autocommit.candidate.txn_rate(), 0), fixed(autocommit.ratio(), 2) + "x",
                   per_round(autocommit.round_ratios[0]), "", "", fixed(autocommit.candidate.cpu_us_per_job(), 1),
                   std::to_string(autocommit.candidate.retries)});
  ctx.results->add_section(
      "## Enqueue throughput\n\n" + std::to_string(kClients) + " clients (one connection each), " +
      std::to_string(tenants) +
      " tenants chosen at random, each seeded with one queued item first (so enqueues "
      "find their zone's pointer). Baseline and quick-pg alternate in " +
      std::to_string(rounds) + " rounds of " + fixed(seconds / rounds, 1) + " s after a " + fixed(warmup, 1) +
      " s warm-up each. Baseline: the bare table " + kBareTableDescription + " with prepared statements: plain-1 `" +
      kPlainInsertOne + "`, plain-100 `" + kPlainInsertMany +
      "`. queue-100: the same 100 rows into the plain SKIP LOCKED queue's jobs table (the "
      "baseline queue of the other experiments: the bare table's columns plus the `(priority, run_at)` index its "
      "consumers claim by), `" +
      kQueueInsertMany +
      "`. quick-1: `quick::enqueue_in`; quick-100: "
      "`quick::enqueue_batch_in` (100 items). plain-1-autocommit: plain-1's INSERT as a single autocommit statement "
      "(no BEGIN/COMMIT); quick-1-autocommit: `quick::enqueue(conn, item)`, the one-call enqueue (one autocommit "
      "statement). The batch target is judged against plain-100, the stricter baseline. "
      "CPU us/job: processor time of the whole machine (clients and, when local, the server) per job enqueued.\n\n" +
      markdown_table(
          {"phase", "jobs/s", "txn/s", "vs plain", "per round", "vs queue table", "per round", "CPU us/job", "retries"},
          table) +
      "\n![enqueue](enqueue.png)\n");
  ctx.results->add_target({"enqueue", "quick-1 / plain-1 jobs/s (1 item per transaction)", single.ratio(), ">= 0.8",
                           single.ratio() >= 0.8});
  ctx.results->add_target({"enqueue", "quick-1-autocommit / plain-1-autocommit jobs/s (one-call enqueue)",
                           autocommit.ratio(), ">= 0.9", autocommit.ratio() >= 0.9});
  ctx.results->add_target({"enqueue", "quick-100 / plain-100 jobs/s (100 items per transaction)", batch.ratio(0),
                           ">= 0.5", batch.ratio(0) >= 0.5});
}

}  // namespace

QUICK_BENCH_EXPERIMENT(5, "enqueue", "enqueue_in / enqueue_batch_in(100) vs plain one-row / 100-row INSERT, 4 clients",
                       run_enqueue);

}  // namespace quick::bench
