// Enqueue throughput: quick-pg against plain INSERTs, on the same server, in the same run.
//
// Phases (each run by N client threads with one connection apiece, for a fixed time after a
// warm-up; 1 = one job per transaction, 100 = 100 jobs per transaction):
//   plain-1     one-row INSERT per transaction into a bare jobs table (the baseline)
//   quick-1     quick::enqueue_in, one item per transaction
//   plain-100   100-row INSERT ... SELECT unnest(...) per transaction (the batch baseline)
//   quick-100   quick::enqueue_batch_in, 100 items per transaction
// Each baseline/quick pair alternates in short rounds (A B A B ...) because the machine is shared
// and noisy: a quick phase is only ever compared with baselines that ran next to it.
// Targets (the issue): quick-1 >= 0.8x plain-1, quick-100 >= 0.5x plain-100.
//
// The benchmark creates its own database (dropping any leftover first), migrates it with
// quick::migrate, gives every tenant one queued item (so measured enqueues find their zone's
// pointer, the steady state of a busy queue), and drops the database at the end.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <iostream>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <libpq-fe.h>
#include <pqxx/pqxx>

#include "quick/database.h"
#include "quick/migrate.h"
#include "quick/producer.h"

namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kBenchDatabase = "quick_bench_enqueue";
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
    "bench_jobs(id bigint identity PK, tenant text, job_type text, payload jsonb, "
    "created timestamptz default now())";
constexpr const char* kPlainInsertOne =
    "INSERT INTO bench_jobs (tenant, job_type, payload) VALUES ($1, $2, $3::jsonb)";
constexpr const char* kPlainInsertMany =
    "INSERT INTO bench_jobs (tenant, job_type, payload) "
    "SELECT * FROM unnest($1::text[], $2::text[], $3::jsonb[])";

struct Options {
  std::string database_url;
  double seconds = 5.0;  // per phase, split over the rounds
  double warmup_seconds = 1.0;
  int clients = 4;
  int tenants = 10000;
  int rounds = 5;
  bool quick = false;
};

// ---- Connection strings ----------------------------------------------------------------------

// Single-quoted libpq keyword value.
std::string quote_conninfo_value(const std::string& value) {
  std::string out = "'";
  for (char c : value) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  return out + "'";
}

// `url` (URI or keyword/value form) pointed at another database. Parsing with libpq instead of
// editing the text keeps every other setting (host, sslmode, password...) exactly as given.
std::string conninfo_for_database(const std::string& url, const std::string& dbname) {
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(url.c_str(), &error);
  if (options == nullptr) {
    std::string reason = error != nullptr ? error : "out of memory";
    PQfreemem(error);
    throw std::runtime_error("malformed --database: " + reason);
  }
  std::string out;
  for (PQconninfoOption* o = options; o->keyword != nullptr; ++o) {
    if (o->val == nullptr || std::string(o->keyword) == "dbname") continue;
    out += std::string(o->keyword) + "=" + quote_conninfo_value(o->val) + " ";
  }
  PQconninfoFree(options);
  return out + "dbname=" + quote_conninfo_value(dbname);
}

// ---- The scratch database --------------------------------------------------------------------

// Owns the benchmark database for the lifetime of the run.
class BenchDatabase {
 public:
  explicit BenchDatabase(std::string admin_url) : admin_url_(std::move(admin_url)) {
    run_admin("DROP DATABASE IF EXISTS " + std::string(kBenchDatabase) + " WITH (FORCE)");
    // template0: never blocked by other sessions connected to template1.
    run_admin("CREATE DATABASE " + std::string(kBenchDatabase) + " TEMPLATE template0");
    url_ = conninfo_for_database(admin_url_, kBenchDatabase);
    pqxx::connection conn(url_);
    quick::migrate(conn);
    pqxx::nontransaction(conn).exec(kBareTableDdl);
  }
  ~BenchDatabase() {
    try {
      run_admin("DROP DATABASE IF EXISTS " + std::string(kBenchDatabase) + " WITH (FORCE)");
    } catch (const std::exception& e) {
      std::cerr << "warning: could not drop " << kBenchDatabase << ": " << e.what() << "\n";
    }
  }
  BenchDatabase(const BenchDatabase&) = delete;
  BenchDatabase& operator=(const BenchDatabase&) = delete;

  const std::string& url() const { return url_; }

 private:
  void run_admin(const std::string& sql) {
    pqxx::connection conn(admin_url_);
    pqxx::nontransaction(conn).exec(sql);
  }

  std::string admin_url_;
  std::string url_;
};

// ---- Workload --------------------------------------------------------------------------------

std::string tenant_name(int index) { return fmt::format("tenant-{:05d}", index); }

// Random jobs spread over many tenants, with a small JSON payload. One per client thread.
class JobSource {
 public:
  JobSource(int tenants, unsigned seed) : rng_(seed), tenant_(0, tenants - 1) {}

  quick::NewItem next() {
    quick::NewItem item;
    item.tenant = tenant_name(tenant_(rng_));
    item.job_type = "send_receipt";
    item.payload = fmt::format(R"({{"order_id": {}, "channel": "email", "attempt": 1}})",
                               order_id_(rng_));
    return item;
  }

  std::vector<quick::NewItem> next_batch(int size) {
    std::vector<quick::NewItem> items;
    items.reserve(size);
    for (int i = 0; i < size; ++i) items.push_back(next());
    return items;
  }

 private:
  std::mt19937_64 rng_;
  std::uniform_int_distribution<int> tenant_;
  std::uniform_int_distribution<long> order_id_{1, 1'000'000'000};
};

// Element of a Postgres array literal: double-quoted, with " and \ escaped.
void append_array_element(std::string& out, const std::string& value) {
  out += '"';
  for (char c : value) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  out += '"';
}

// {a,b,c} literal of one field of every item, for the unnest() baseline.
std::string array_literal(const std::vector<quick::NewItem>& items,
                          const std::string quick::NewItem::*field) {
  std::string out = "{";
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ',';
    append_array_element(out, items[i].*field);
  }
  return out + "}";
}

// Enqueues one item for every tenant, so that the measured enqueues find their zone non-empty
// (its pointer exists), the steady state of a busy queue. Without this, the first enqueue per
// tenant also creates the pointer, and how many of those a phase sees would depend on its speed.
void seed_tenants(const std::string& url, int tenants) {
  pqxx::connection conn(url);
  for (int first = 0; first < tenants; first += kBatchSize) {
    std::vector<quick::NewItem> items;
    for (int t = first; t < std::min(tenants, first + kBatchSize); ++t) {
      items.push_back(quick::NewItem{tenant_name(t), "seed", "{}", {}, 0, std::nullopt});
    }
    pqxx::work txn(conn);
    quick::enqueue_batch_in(txn, items);
    txn.commit();
  }
}

// ---- Phases ----------------------------------------------------------------------------------

// One transaction of a phase, run on the client's own connection.
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
            quick::enqueue_in(txn, item);
            txn.commit();
          }};
}

Phase plain_batch() {
  return {"plain-100", kBatchSize, [](pqxx::connection& conn, JobSource& jobs) {
            conn.prepare("plain_many", kPlainInsertMany);
            const auto items = jobs.next_batch(kBatchSize);
            pqxx::work txn(conn);
            txn.exec_prepared("plain_many", array_literal(items, &quick::NewItem::tenant),
                              array_literal(items, &quick::NewItem::job_type),
                              array_literal(items, &quick::NewItem::payload));
            txn.commit();
          }};
}

Phase quick_batch() {
  return {"quick-100", kBatchSize, [](pqxx::connection& conn, JobSource& jobs) {
            const auto items = jobs.next_batch(kBatchSize);
            pqxx::work txn(conn);
            quick::enqueue_batch_in(txn, items);
            txn.commit();
          }};
}

struct PhaseResult {
  long transactions = 0;
  long retries = 0;  // deadlocks / serialization failures (expected: none)
  double seconds = 0;
  int jobs_per_txn = 1;
  double txn_rate() const { return transactions / seconds; }
  double job_rate() const { return txn_rate() * jobs_per_txn; }
  void add(const PhaseResult& other) {
    transactions += other.transactions;
    retries += other.retries;
    seconds += other.seconds;
  }
};

// The client side of one phase: one connection and one job source per client thread (libpqxx
// objects are not thread-safe). Kept open across the phase's slices, so prepared statements and
// caches stay warm between them.
class Clients {
 public:
  Clients(const Phase& phase, const Options& options, const std::string& url, unsigned seed)
      : phase_(phase) {
    for (int c = 0; c < options.clients; ++c) {
      connections_.push_back(quick::connect(url));
      jobs_.emplace_back(options.tenants, seed * 1000 + c);
    }
  }

  // Runs the phase on every client for `seconds`. Every transaction that commits counts, and the
  // time runs until the last client has finished its last transaction.
  PhaseResult run_for(double seconds) {
    std::atomic<long> transactions{0};
    std::atomic<long> retries{0};
    std::mutex error_mutex;
    std::string first_error;
    const auto start = Clock::now();
    const auto until = start + std::chrono::duration_cast<Clock::duration>(
                                   std::chrono::duration<double>(seconds));
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
    return PhaseResult{transactions, retries,
                       std::chrono::duration<double>(Clock::now() - start).count(),
                       phase_.jobs_per_txn};
  }

 private:
  const Phase& phase_;
  std::vector<std::unique_ptr<pqxx::connection>> connections_;
  std::vector<JobSource> jobs_;
};

// ---- Report ----------------------------------------------------------------------------------

struct Comparison {
  Phase baseline;
  Phase candidate;
  double target;  // minimum candidate/baseline ratio of jobs/s
};

void print_row(const std::string& phase, const PhaseResult& r, const std::string& ratio,
               const std::string& target, const std::string& verdict) {
  std::cout << fmt::format("{:<10} {:>12.0f} {:>12.0f} {:>8} {:>8} {:>8}{}\n", phase,
                           r.job_rate(), r.txn_rate(), ratio, target, verdict,
                           r.retries > 0 ? fmt::format("  ({} retries)", r.retries) : "");
}

// Alternates baseline and candidate in options.rounds short slices (A B A B ...), so that the
// load of a shared machine, which drifts over seconds, weighs on both alike. Prints both phases,
// the ratio of their totals, and the ratio of each round; returns whether the target is met.
bool run_comparison(const Comparison& cmp, const Options& options, const std::string& url) {
  Clients base_clients(cmp.baseline, options, url, 1);
  Clients cand_clients(cmp.candidate, options, url, 2);
  base_clients.run_for(options.warmup_seconds);  // prepares statements, warms caches
  cand_clients.run_for(options.warmup_seconds);

  const double slice = options.seconds / options.rounds;
  PhaseResult base_total{0, 0, 0, cmp.baseline.jobs_per_txn};
  PhaseResult cand_total{0, 0, 0, cmp.candidate.jobs_per_txn};
  std::string round_ratios;
  for (int round = 0; round < options.rounds; ++round) {
    const auto base = base_clients.run_for(slice);
    const auto cand = cand_clients.run_for(slice);
    base_total.add(base);
    cand_total.add(cand);
    round_ratios += fmt::format(" {:.2f}", cand.job_rate() / base.job_rate());
  }
  const double ratio = cand_total.job_rate() / base_total.job_rate();
  const bool pass = ratio >= cmp.target;
  print_row(cmp.baseline.name, base_total, "", "", "");
  print_row(cmp.candidate.name, cand_total, fmt::format("{:.2f}", ratio),
            fmt::format(">={:.2f}", cmp.target), pass ? "PASS" : "MISS");
  std::cout << "           ratio per round:" << round_ratios << "\n";
  return pass;
}

Options parse_options(int argc, char** argv) {
  Options options;
  options.database_url = quick::database_url_from_environment();
  CLI::App app{"quick-pg enqueue benchmark: quick enqueue vs plain INSERT, same server, same run"};
  app.add_option("--database", options.database_url,
                 "server to benchmark on (libpq URL); a scratch database is created there "
                 "(default: $QUICK_DATABASE_URL)");
  app.add_option("--seconds", options.seconds, "measured seconds per phase, all rounds together")
      ->check(CLI::PositiveNumber);
  app.add_option("--warmup", options.warmup_seconds, "unmeasured seconds per phase before the rounds");
  app.add_option("--clients", options.clients, "client threads, one connection each")
      ->check(CLI::PositiveNumber);
  app.add_option("--tenants", options.tenants, "distinct tenants, chosen at random")
      ->check(CLI::PositiveNumber);
  app.add_option("--rounds", options.rounds, "baseline/quick alternations the seconds are split into")
      ->check(CLI::PositiveNumber);
  app.add_flag("--quick", options.quick, "toy run: 1 s per phase in 2 rounds, short warm-up");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::exit(app.exit(e));
  }
  if (options.database_url.empty()) {
    std::cerr << "error: --database is required (or set QUICK_DATABASE_URL)\n";
    std::exit(2);
  }
  if (options.quick) {
    options.seconds = 1.0;
    options.rounds = 2;
    options.warmup_seconds = 0.3;
  }
  return options;
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse_options(argc, argv);
  try {
    BenchDatabase db(options.database_url);
    seed_tenants(db.url(), options.tenants);
    std::cout << fmt::format(
        "database {} (fresh), {} clients, {} tenants, {:.1f} s per phase in {} alternating rounds, "
        "after {:.1f} s warm-up\n",
        kBenchDatabase, options.clients, options.tenants, options.seconds, options.rounds,
        options.warmup_seconds);
    std::cout << "every tenant's zone is non-empty before the phases (one seed item each)\n";
    std::cout << "baseline table: " << kBareTableDescription << ", prepared statements\n"
              << "  plain-1:   " << kPlainInsertOne << "\n"
              << "  plain-100: " << kPlainInsertMany << "\n\n";
    std::cout << fmt::format("{:<10} {:>12} {:>12} {:>8} {:>8} {:>8}\n", "phase", "jobs/s",
                             "txn/s", "ratio", "target", "result");
    const bool single_ok = run_comparison({plain_single(), quick_single(), 0.8}, options, db.url());
    const bool batch_ok = run_comparison({plain_batch(), quick_batch(), 0.5}, options, db.url());
    std::cout << fmt::format("single-item target {}, batch-of-{} target {}\n",
                             single_ok ? "met" : "MISSED", kBatchSize,
                             batch_ok ? "met" : "MISSED");
    return single_ok && batch_ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
}
