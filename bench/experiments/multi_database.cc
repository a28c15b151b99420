// Experiment: several databases (issue 14, docs/scaling.md). Opt-in (--experiment multi_database):
// it starts PostgreSQL clusters of its own on this machine (quick::local_postgres::LocalCluster,
// each in its own state directory under a temporary directory, each with the quick migrations),
// and stops and deletes them at the end, also when it fails. The server under test
// (--database) is not used.
//
// Part 1, throughput: 1, 2 and 3 databases, each a separate cluster, all served by one consumer
// (Scanner, 2 Managers, writer, 4 Workers; ConsumerConfig.databases lists them all), with a
// no-op handler. 1,000 tenants placed by the directory's default rule (register_placement_databases
// of all of them; the directory is in the first). 4 producer threads enqueue one item per
// transaction through one quick::Router to a tenant chosen at random, as fast as they can, for
// 20 s. Reported per database count and per 10 s window: items enqueued and done per second,
// end-to-end latency (vesting -> handler start) p50/p99 of the items started in the window, and
// the backlog left when the producers stop.
//
// Part 2, moves under load: 2 databases, the consumer running and 2 producer threads offering
// half of part 1's 2-database done rate to the 1,000 tenants. A tenant with 1,000 and then
// 100,000 queued items (paused in its database with quick.pause_tenant, so that the backlog stays;
// the pause moves with it) is moved to the other database with quick::move_tenant while a probe
// thread enqueues into it through the Router every 5 ms. Reported: the move's time
// (MoveResult.took) and when each step completed, the items moved, the probe's enqueue latency
// (median before the move, max during it) and the longest gap between two acknowledged probe
// enqueues: the pause the tenant's producers see. Then it checks that every item is at the
// destination (none left at the source), resumes the tenant there and waits for the consumer to
// run them.
//
// On a small machine the clusters, the consumer and the producers share the cores: more
// databases add processes competing for them, not capacity.
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <pqxx/pqxx>

#include "local_postgres/local_cluster.h"
#include "quick/consumer.h"
#include "quick/database.h"
#include "quick/migrate.h"
#include "quick/placement.h"
#include "quick/producer.h"
#include "support/cleanup_on_signal.h"
#include "support/experiment.h"
#include "support/latency_recorder.h"
#include "support/load.h"
#include "support/machine_cpu.h"
#include "support/quick_pool.h"
#include "support/results_folder.h"

namespace quick::bench {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr const char* kJobType = "noop";
constexpr int kTenants = 1000;
constexpr int kFullSpeedProducers = 4;
constexpr int kBackgroundProducers = 2;
constexpr milliseconds kProbeInterval{5};

double seconds_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

double ms_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

// PostgreSQL clusters of this experiment's own, under one temporary directory; stopped and
// deleted by the destructor, however the experiment ends, and by quick_bench's signal thread when
// a signal ends it (support/cleanup_on_signal.h); only a process killed outright leaves them.
class ScratchClusters {
 public:
  ScratchClusters() {
    std::string pattern = (fs::temp_directory_path() / "quick-bench-multi-db-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("multi_database: mkdtemp failed");
    dir_ = pattern;
    // As root the servers run as the postgres OS user, which must reach the state directories.
    fs::permissions(dir_, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                              fs::perms::others_read | fs::perms::others_exec);
    on_signal_ = std::make_unique<CleanupOnSignal>([this] { stop_and_delete(); });
  }
  ~ScratchClusters() {
    stop_and_delete();
    on_signal_.reset();
  }
  ScratchClusters(const ScratchClusters&) = delete;
  ScratchClusters& operator=(const ScratchClusters&) = delete;

  // Creates and starts one more cluster; returns its index.
  std::size_t add() {
    const fs::path state = dir_ / ("cluster-" + std::to_string(size() + 1));
    fs::create_directory(state);
    fs::permissions(state, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                               fs::perms::others_read | fs::perms::others_exec);
    local_postgres::LocalCluster* cluster = nullptr;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      clusters_.push_back(std::make_unique<local_postgres::LocalCluster>(state));
      cluster = clusters_.back().get();
    }
    cluster->start();
    return size() - 1;
  }

  // Creates database `name` in cluster `index`, migrated; returns its connection string.
  std::string create_database(std::size_t index, const std::string& name) {
    auto& cluster = this->cluster(index);
    {
      pqxx::connection admin(cluster.connection_string("quick"));
      pqxx::nontransaction session(admin);
      session.exec("DROP DATABASE IF EXISTS " + session.quote_name(name));
      session.exec("CREATE DATABASE " + session.quote_name(name));
    }
    const std::string url = cluster.connection_string(name);
    pqxx::connection conn(url);
    migrate(conn);
    return url;
  }

  std::size_t size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return clusters_.size();
  }

 private:
  local_postgres::LocalCluster& cluster(std::size_t index) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return *clusters_.at(index);
  }

  // Stops every cluster and deletes its files. Idempotent; from the destructor or the signal thread.
  void stop_and_delete() {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& cluster : clusters_) {
      try {
        cluster->stop();
      } catch (const std::exception&) {
      }
      // A cluster made outside the state directory (/var/tmp, when the server user could not
      // reach it) is deleted too.
      std::error_code ignored;
      const fs::path root = cluster->data_dir().parent_path();
      if (!root.empty() && root.string().rfind(dir_.string(), 0) != 0) fs::remove_all(root, ignored);
    }
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  fs::path dir_;
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<local_postgres::LocalCluster>> clusters_;  // guarded by mutex_
  std::unique_ptr<CleanupOnSignal> on_signal_;
};

// Latencies with the time they were recorded, so that each window gets its own percentiles.
class TimedLatencies {
 public:
  void record(Clock::time_point at, std::chrono::microseconds latency) {
    std::lock_guard<std::mutex> lock(mutex_);
    samples_.emplace_back(at, latency);
  }
  Percentiles between(Clock::time_point from, Clock::time_point to) const {
    LatencyRecorder window;
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [at, latency] : samples_) {
      if (at >= from && at < to) window.record(latency);
    }
    return window.summary();
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::pair<Clock::time_point, std::chrono::microseconds>> samples_;  // guarded by mutex_
};

// N databases, one per cluster, named db1..dbN, registered in the directory (db1), all in the
// default rule.
struct Placement {
  PlacementConfig config;
  ConsumerConfig consumer;
};

Placement make_placement(ScratchClusters& clusters, int databases, const std::string& database_name) {
  Placement placement;
  for (int i = 0; i < databases; ++i) {
    const std::string url = clusters.create_database(static_cast<std::size_t>(i), database_name);
    placement.config.databases.push_back(DatabaseConfig{"db" + std::to_string(i + 1), url});
  }
  placement.config.directory = "db1";
  register_placement_databases(placement.config);
  placement.consumer = bench_consumer_config(placement.config.databases.front().url);
  placement.consumer.databases = placement.config.databases;
  placement.consumer.manager.threads = 2;
  placement.consumer.worker.threads = 4;
  return placement;
}

// One item for each of the tenants t0..t<n-1>, written straight into each tenant's database (so
// that every zone exists before the load); returns each tenant's database index.
std::vector<int> create_zones(Router& router, const PlacementConfig& config, int tenants) {
  std::vector<int> database_of(static_cast<std::size_t>(tenants));
  std::vector<std::vector<NewItem>> batches(config.databases.size());
  for (int t = 0; t < tenants; ++t) {
    const std::string name = router.database_for(tenant_name(t));
    for (std::size_t d = 0; d < config.databases.size(); ++d) {
      if (config.databases[d].name == name) database_of[static_cast<std::size_t>(t)] = static_cast<int>(d);
    }
    NewItem item;
    item.tenant = tenant_name(t);
    item.job_type = kJobType;
    batches[static_cast<std::size_t>(database_of[static_cast<std::size_t>(t)])].push_back(std::move(item));
  }
  for (std::size_t d = 0; d < batches.size(); ++d) {
    if (batches[d].empty()) continue;
    auto conn = connect(config.databases[d].url);
    enqueue_batch(*conn, batches[d]);
  }
  return database_of;
}

struct Window {
  double t_s = 0;
  double enqueued_per_s = 0, done_per_s = 0;
  Percentiles e2e;
};

struct ThroughputRun {
  int databases = 0;
  double seconds = 0;
  long long enqueued = 0, done = 0, errors = 0;
  std::vector<long long> enqueued_per_database;
  Percentiles e2e;
  CpuUse cpu;  // the whole machine while the producers ran (servers, consumer, producers)
  std::vector<Window> windows;
  double enqueued_per_s() const { return seconds > 0 ? static_cast<double>(enqueued) / seconds : 0; }
  double done_per_s() const { return seconds > 0 ? static_cast<double>(done) / seconds : 0; }
};

ThroughputRun run_throughput(ExperimentContext& ctx, ScratchClusters& clusters, int databases, milliseconds duration,
                             milliseconds window) {
  ThroughputRun run;
  run.databases = databases;
  const Placement placement = make_placement(clusters, databases, "mdb_throughput_" + std::to_string(databases));
  Router router(placement.config);
  const std::vector<int> database_of = create_zones(router, placement.config, kTenants);
  TimedLatencies e2e;
  std::atomic<bool> measuring{false};
  QuickPool pool(placement.consumer, 1, {kJobType}, [&](JobContext& job) {
    if (measuring.load()) e2e.record(Clock::now(), job.waited());
    return JobResult::done();
  });
  pool.start();
  // The setup's items run first: every zone is then parked, as in a queue already in use.
  if (!wait_until_count([&] { return pool.done(); }, kTenants, std::chrono::minutes(1))) {
    throw std::runtime_error("multi_database: the consumer did not run the setup's items within a minute");
  }
  const std::string label = std::to_string(databases) + " database" + (databases > 1 ? "s" : "");
  ctx.progress(label + ": " + std::to_string(kFullSpeedProducers) + " producers through the Router, " +
               std::to_string(kTenants) + " tenants, full speed for " + fixed(duration.count() / 1000.0, 0) + " s");

  measuring.store(true);
  const std::uint64_t done_before = pool.done();
  std::atomic<long long> enqueued{0};
  std::atomic<long long> errors{0};
  std::vector<std::atomic<long long>> per_database(static_cast<std::size_t>(databases));
  for (auto& count : per_database) count.store(0);
  const CpuMeter cpu;
  const auto start = Clock::now();
  const auto end = start + duration;
  std::vector<std::thread> producers;
  for (int p = 0; p < kFullSpeedProducers; ++p) {
    producers.emplace_back([&, p] {
      std::mt19937 random(3000 + static_cast<unsigned>(p));
      std::uniform_int_distribution<int> pick(0, kTenants - 1);
      while (Clock::now() < end) {
        const int t = pick(random);
        NewItem item;
        item.tenant = tenant_name(t);
        item.job_type = kJobType;
        try {
          router.enqueue(item);
          enqueued.fetch_add(1);
          per_database[static_cast<std::size_t>(database_of[static_cast<std::size_t>(t)])].fetch_add(1);
        } catch (const std::exception& error) {
          if (errors.fetch_add(1) == 0) ctx.progress(label + ": producer error: " + error.what());
        }
      }
    });
  }
  long long last_enqueued = 0, last_done = 0;
  auto last_end = start;
  const auto windows = static_cast<int>(duration / window);
  for (int w = 1; w <= windows; ++w) {
    const auto window_end = start + w * window;
    std::this_thread::sleep_until(window_end);
    Window row;
    row.t_s = seconds_between(start, window_end);
    const long long now_enqueued = enqueued.load();
    const auto now_done = static_cast<long long>(pool.done() - done_before);
    const double seconds = std::chrono::duration<double>(window).count();
    row.enqueued_per_s = static_cast<double>(now_enqueued - last_enqueued) / seconds;
    row.done_per_s = static_cast<double>(now_done - last_done) / seconds;
    row.e2e = e2e.between(last_end, window_end);
    ctx.progress(label + ": " + fixed(row.t_s, 0) + " s: enqueued " + fixed(row.enqueued_per_s, 0) + "/s, done " +
                 fixed(row.done_per_s, 0) + "/s, e2e p50 " + fixed(row.e2e.p50_ms, 1) + " ms, p99 " +
                 fixed(row.e2e.p99_ms, 1) + " ms");
    run.windows.push_back(row);
    last_enqueued = now_enqueued;
    last_done = now_done;
    last_end = window_end;
  }
  for (auto& thread : producers) thread.join();
  run.cpu = cpu.finish();
  const auto stopped = Clock::now();
  run.seconds = seconds_between(start, stopped);
  run.enqueued = enqueued.load();
  run.done = static_cast<long long>(pool.done() - done_before);
  run.errors = errors.load();
  for (auto& count : per_database) run.enqueued_per_database.push_back(count.load());
  run.e2e = e2e.between(start, stopped);
  measuring.store(false);
  pool.stop();
  ctx.progress(label + ": enqueued " + fixed(run.enqueued_per_s(), 0) + "/s, done " + fixed(run.done_per_s(), 0) +
               "/s, e2e p50 " + fixed(run.e2e.p50_ms, 1) + " ms, p99 " + fixed(run.e2e.p99_ms, 1) + " ms, CPU busy " +
               fixed(100 * run.cpu.busy_fraction, 0) + "% (this process " +
               fixed(100 * run.cpu.own_core_seconds / std::max(1e-9, run.cpu.busy_core_seconds), 0) +
               "% of it), backlog " + std::to_string(run.enqueued - run.done) +
               (run.errors ? ", producer errors " + std::to_string(run.errors) : ""));
  return run;
}

struct MoveRun {
  long long preloaded = 0;
  std::string tenant, from, to;
  double preload_s = 0;
  MoveResult result;
  double wall_ms = 0;                                 // move_tenant's call, start to return
  std::vector<std::pair<std::string, double>> steps;  // step, ms since the call started
  // The probe: one enqueue into the tenant every 5 ms through the Router.
  long long probe_ok = 0, probe_errors = 0, probe_during = 0;
  double probe_p50_before_ms = 0, probe_max_during_ms = 0, probe_max_ms = 0, probe_gap_ms = 0;
  long long at_destination = 0, at_source = 0;
  bool paused_at_destination = false;
  // The other tenants' end-to-end latency: in the second before the move, and during it.
  Percentiles others_before, others_during;
  long long drained = 0;
  double drain_s = -1;  // -1: not all ran within the wait
  bool all_arrived() const { return at_destination == preloaded + probe_ok && at_source == 0; }
};

std::string moving_tenant(long long items) { return "moving-" + std::to_string(items); }

MoveRun run_move(ExperimentContext& ctx, const Placement& placement, Router& router, long long items,
                 std::atomic<long long>& moving_done, const TimedLatencies& others, std::chrono::seconds drain_wait) {
  MoveRun run;
  run.preloaded = items;
  run.tenant = moving_tenant(items);
  run.from = router.database_for(run.tenant);
  for (const auto& database : placement.config.databases) {
    if (database.name != run.from) run.to = database.name;
  }
  const std::string from_url = router.database(run.from).url;
  const std::string to_url = router.database(run.to).url;
  ctx.progress("move: " + std::to_string(items) + " items of " + run.tenant + " into " + run.from +
               " (tenant paused there)");
  const auto preload_start = Clock::now();
  {
    auto conn = connect(from_url);
    {
      pqxx::nontransaction session(*conn);
      session.exec_params("SELECT quick.pause_tenant($1, 'multi_database benchmark: keep the backlog')", run.tenant);
    }
    std::vector<NewItem> batch;
    for (long long i = 0; i < items; ++i) {
      NewItem item;
      item.tenant = run.tenant;
      item.job_type = kJobType;
      item.payload = R"({"n":)" + std::to_string(i) + "}";
      batch.push_back(std::move(item));
      if (batch.size() == 5000 || i + 1 == items) {
        enqueue_batch(*conn, batch);
        batch.clear();
      }
    }
    pqxx::nontransaction session(*conn);
    session.exec("ANALYZE quick.items");
  }
  run.preload_s = seconds_between(preload_start, Clock::now());

  // The probe: the tenant's producer.
  struct Sample {
    Clock::time_point started, finished;
    bool ok;
  };
  std::vector<Sample> samples;
  std::atomic<bool> stop_probe{false};
  std::thread probe([&] {
    auto next = Clock::now();
    long long n = 0;
    while (!stop_probe.load()) {
      NewItem item;
      item.tenant = run.tenant;
      item.job_type = kJobType;
      item.payload = R"({"probe":)" + std::to_string(n++) + "}";
      const auto started = Clock::now();
      bool ok = true;
      try {
        router.enqueue(item);
      } catch (const std::exception& error) {
        ok = false;
        ctx.progress("move: probe enqueue failed: " + std::string(error.what()));
      }
      samples.push_back({started, Clock::now(), ok});
      next = std::max(next + kProbeInterval, Clock::now());  // after a slow enqueue, the next one at once
      std::this_thread::sleep_until(next);
    }
  });
  std::this_thread::sleep_for(std::chrono::seconds(1));
  ctx.progress("move: moving " + run.tenant + " (" + std::to_string(items) + " items) from " + run.from + " to " +
               run.to + ", producers and consumer running");
  const auto move_start = Clock::now();
  std::vector<std::pair<std::string, double>> steps;
  try {
    run.result = move_tenant(placement.config, run.tenant, run.to, MoveOptions{}, {}, [&](MoveStep step) {
      steps.emplace_back(quick::to_string(step), ms_between(move_start, Clock::now()));
    });
  } catch (...) {
    stop_probe.store(true);
    probe.join();
    throw;
  }
  const auto move_end = Clock::now();
  run.wall_ms = ms_between(move_start, move_end);
  run.steps = steps;
  std::this_thread::sleep_for(std::chrono::seconds(1));
  stop_probe.store(true);
  probe.join();

  LatencyRecorder before;
  Clock::time_point last_ack{};
  for (const auto& sample : samples) {
    const double latency = ms_between(sample.started, sample.finished);
    if (!sample.ok) {
      ++run.probe_errors;
      continue;
    }
    ++run.probe_ok;
    run.probe_max_ms = std::max(run.probe_max_ms, latency);
    if (sample.finished < move_start) {
      before.record(std::chrono::duration_cast<std::chrono::microseconds>(sample.finished - sample.started));
    }
    // Enqueues running at some time during the move.
    if (sample.started <= move_end && sample.finished >= move_start) {
      ++run.probe_during;
      run.probe_max_during_ms = std::max(run.probe_max_during_ms, latency);
    }
    if (last_ack != Clock::time_point{})
      run.probe_gap_ms = std::max(run.probe_gap_ms, ms_between(last_ack, sample.finished));
    last_ack = sample.finished;
  }
  run.probe_p50_before_ms = before.summary().p50_ms;
  run.others_before = others.between(move_start - std::chrono::seconds(1), move_start);
  run.others_during = others.between(move_start, move_end);

  // Every item is at the destination, none at the source; the pause came along.
  {
    auto conn = connect(to_url);
    pqxx::nontransaction session(*conn);
    run.at_destination =
        session.exec_params1("SELECT count(*) FROM quick.items WHERE tenant = $1", run.tenant)[0].as<long long>();
    run.paused_at_destination =
        session.exec_params1("SELECT count(*) FROM quick.paused_tenants WHERE tenant = $1", run.tenant)[0].as<int>() >
        0;
  }
  {
    auto conn = connect(from_url);
    pqxx::nontransaction session(*conn);
    run.at_source =
        session.exec_params1("SELECT count(*) FROM quick.items WHERE tenant = $1", run.tenant)[0].as<long long>();
  }
  ctx.progress(
      "move: took " + fixed(static_cast<double>(run.result.took.count()), 0) + " ms (call " + fixed(run.wall_ms, 0) +
      " ms), " + std::to_string(run.result.items) + " items moved; probe: p50 " + fixed(run.probe_p50_before_ms, 1) +
      " ms before, max " + fixed(run.probe_max_during_ms, 0) + " ms during, longest gap " + fixed(run.probe_gap_ms, 0) +
      " ms, errors " + std::to_string(run.probe_errors) + "; at " + run.to + ": " + std::to_string(run.at_destination) +
      " (expected " + std::to_string(run.preloaded + run.probe_ok) + "), at " + run.from + ": " +
      std::to_string(run.at_source) + (run.all_arrived() ? "" : "  ITEMS MISSING") + "; other tenants' e2e p99 " +
      fixed(run.others_before.p99_ms, 1) + " ms before, " + fixed(run.others_during.p99_ms, 1) + " ms during");

  // The consumer runs them at the destination once the tenant is resumed there.
  const auto drain_start = Clock::now();
  const long long done_before = moving_done.load();
  {
    auto conn = connect(to_url);
    pqxx::nontransaction session(*conn);
    session.exec_params("SELECT quick.resume_tenant($1)", run.tenant);
  }
  const auto drained = wait_until_count([&] { return static_cast<std::uint64_t>(moving_done.load() - done_before); },
                                        static_cast<std::uint64_t>(run.at_destination), drain_wait);
  run.drained = moving_done.load() - done_before;
  run.drain_s = drained ? seconds_between(drain_start, Clock::now()) : -1;
  ctx.progress("move: after resuming, the consumer ran " + std::to_string(run.drained) + " of " +
               std::to_string(run.at_destination) + " items of " + run.tenant + " at " + run.to +
               (drained ? " in " + fixed(run.drain_s, 1) + " s" : " (stopped waiting)"));
  return run;
}

struct MovePart {
  double background_rate = 0;
  double background_enqueued_per_s = 0, background_done_per_s = 0;
  Percentiles background_e2e;
  std::vector<MoveRun> moves;
};

MovePart run_moves(ExperimentContext& ctx, ScratchClusters& clusters, double background_rate,
                   const std::vector<long long>& sizes) {
  MovePart part;
  part.background_rate = background_rate;
  const Placement placement = make_placement(clusters, 2, "mdb_moves");
  Router router(placement.config);
  create_zones(router, placement.config, kTenants);
  TimedLatencies background_e2e;
  std::atomic<long long> moving_done{0};
  QuickPool pool(placement.consumer, 1, {kJobType}, [&](JobContext& job) {
    if (job.item().tenant.rfind("moving-", 0) == 0) moving_done.fetch_add(1);
    else background_e2e.record(Clock::now(), job.waited());
    return JobResult::done();
  });
  pool.start();
  if (!wait_until_count([&] { return pool.done(); }, kTenants, std::chrono::minutes(1))) {
    throw std::runtime_error("multi_database: the consumer did not run the setup's items within a minute");
  }
  ctx.progress("move: 2 databases, " + fixed(background_rate, 0) + " items/s offered to " + std::to_string(kTenants) +
               " tenants by " + std::to_string(kBackgroundProducers) + " producers through the Router");
  std::atomic<bool> stop{false};
  std::atomic<long long> enqueued{0};
  const std::uint64_t done_before = pool.done();
  const long long moving_before = moving_done.load();
  const auto start = Clock::now();
  std::vector<std::thread> producers;
  for (int p = 0; p < kBackgroundProducers; ++p) {
    producers.emplace_back([&, p] {
      std::mt19937 random(4000 + static_cast<unsigned>(p));
      std::uniform_int_distribution<int> pick(0, kTenants - 1);
      const double per_thread = background_rate / kBackgroundProducers;
      long long sent = 0;
      while (!stop.load()) {
        const auto due = static_cast<long long>(per_thread * seconds_between(start, Clock::now()));
        if (sent >= due) {
          std::this_thread::sleep_for(milliseconds(1));
          continue;
        }
        NewItem item;
        item.tenant = tenant_name(pick(random));
        item.job_type = kJobType;
        try {
          router.enqueue(item);
          enqueued.fetch_add(1);
        } catch (const std::exception& error) {
          ctx.progress("move: background producer error: " + std::string(error.what()));
        }
        ++sent;
      }
    });
  }
  struct JoinProducers {
    std::atomic<bool>& stop;
    std::vector<std::thread>& threads;
    ~JoinProducers() {
      stop = true;
      for (auto& thread : threads)
        if (thread.joinable()) thread.join();
    }
  } join_producers{stop, producers};
  std::this_thread::sleep_for(std::chrono::seconds(1));
  for (const long long items : sizes) {
    part.moves.push_back(run_move(ctx, placement, router, items, moving_done, background_e2e,
                                  ctx.quick ? std::chrono::seconds(20) : std::chrono::seconds(60)));
  }
  stop = true;
  for (auto& thread : producers) thread.join();
  const double seconds = seconds_between(start, Clock::now());
  part.background_enqueued_per_s = static_cast<double>(enqueued.load()) / seconds;
  part.background_done_per_s = static_cast<double>(static_cast<long long>(pool.done() - done_before) -
                                                   (moving_done.load() - moving_before)) /
                               seconds;
  part.background_e2e = background_e2e.between(start, Clock::now());
  pool.stop();
  return part;
}

void run_multi_database(ExperimentContext& ctx) {
  const milliseconds duration = ctx.duration(milliseconds(20000), milliseconds(3000));
  const milliseconds window = ctx.duration(milliseconds(10000), milliseconds(1000));
  const int max_databases = ctx.quick ? 2 : 3;
  const std::vector<long long> sizes = ctx.quick ? std::vector<long long>{1000, 10000}
                                                 : std::vector<long long>{1000, 100000};

  ScratchClusters clusters;
  const auto started = Clock::now();
  for (int i = 0; i < max_databases; ++i) clusters.add();
  const double clusters_s = seconds_between(started, Clock::now());
  ctx.progress(std::to_string(max_databases) + " clusters started in " + fixed(clusters_s, 1) + " s");

  std::vector<ThroughputRun> runs;
  for (int databases = 1; databases <= max_databases; ++databases)
    runs.push_back(run_throughput(ctx, clusters, databases, duration, window));
  const double two_db_done = runs.size() >= 2 ? runs[1].done_per_s() : runs[0].done_per_s();
  const double background_rate = std::max(100.0, 0.5 * two_db_done);
  const MovePart moves = run_moves(ctx, clusters, background_rate, sizes);

  std::vector<std::vector<std::string>> csv, summary, windows_table;
  for (const auto& run : runs) {
    std::string split;
    for (std::size_t d = 0; d < run.enqueued_per_database.size(); ++d) {
      split += (d ? " / " : "") + std::to_string(run.enqueued_per_database[d]);
    }
    summary.push_back({std::to_string(run.databases), fixed(run.enqueued_per_s(), 0), fixed(run.done_per_s(), 0),
                       fixed(run.e2e.p50_ms, 1), fixed(run.e2e.p99_ms, 1), fixed(run.e2e.max_ms, 0),
                       std::to_string(run.enqueued - run.done), split, std::to_string(run.errors),
                       fixed(100 * run.cpu.busy_fraction, 0) + "%",
                       fixed(1e6 * run.cpu.busy_core_seconds / std::max<double>(1, static_cast<double>(run.done)), 0)});
    for (const auto& w : run.windows) {
      csv.push_back({std::to_string(run.databases), fixed(w.t_s, 0), fixed(w.enqueued_per_s, 1), fixed(w.done_per_s, 1),
                     std::to_string(w.e2e.count), fixed(w.e2e.p50_ms, 2), fixed(w.e2e.p99_ms, 2),
                     fixed(w.e2e.max_ms, 2)});
      windows_table.push_back({std::to_string(run.databases), fixed(w.t_s, 0), fixed(w.enqueued_per_s, 0),
                               fixed(w.done_per_s, 0), fixed(w.e2e.p50_ms, 1), fixed(w.e2e.p99_ms, 1)});
    }
  }
  ctx.results->write_csv(
      "multi_database.csv",
      {"databases", "t_s", "enqueued_per_s", "done_per_s", "e2e_n", "e2e_p50_ms", "e2e_p99_ms", "e2e_max_ms"}, csv);

  std::vector<std::vector<std::string>> move_csv, move_table, step_table;
  for (const auto& move : moves.moves) {
    const std::string drain = move.drain_s >= 0 ? fixed(move.drain_s, 1)
                                                : "> wait (" + std::to_string(move.drained) + " ran)";
    move_csv.push_back(
        {move.tenant, std::to_string(move.preloaded), move.from, move.to, std::to_string(move.result.took.count()),
         fixed(move.wall_ms, 1), std::to_string(move.result.items), fixed(move.probe_p50_before_ms, 2),
         fixed(move.probe_max_during_ms, 1), fixed(move.probe_gap_ms, 1), std::to_string(move.probe_during),
         std::to_string(move.probe_errors), std::to_string(move.at_destination), std::to_string(move.at_source),
         move.all_arrived() ? "1" : "0", fixed(move.drain_s, 2), fixed(move.others_before.p99_ms, 2),
         fixed(move.others_during.p99_ms, 2), fixed(move.others_during.max_ms, 2)});
    move_table.push_back({std::to_string(move.preloaded), move.from + " -> " + move.to,
                          std::to_string(move.result.took.count()), std::to_string(move.result.items),
                          fixed(move.probe_p50_before_ms, 1), fixed(move.probe_max_during_ms, 0),
                          fixed(move.probe_gap_ms, 0), std::to_string(move.probe_errors),
                          std::to_string(move.at_destination) + " / " + std::to_string(move.preloaded + move.probe_ok) +
                              (move.all_arrived() ? "" : " MISSING"),
                          std::to_string(move.at_source), drain,
                          fixed(move.others_before.p99_ms, 1) + " / " + fixed(move.others_during.p99_ms, 1)});
    std::string steps;
    for (const auto& [step, ms] : move.steps) steps += (steps.empty() ? "" : ", ") + step + " " + fixed(ms, 0);
    step_table.push_back({std::to_string(move.preloaded), steps});
    ctx.results->add_target(
        {"multi_database",
         "items of a tenant moved with " + std::to_string(move.preloaded) + " queued: at the destination / expected",
         static_cast<double>(move.at_destination) /
             static_cast<double>(std::max<long long>(1, move.preloaded + move.probe_ok)),
         "= 1, none left at the source", move.all_arrived()});
  }
  ctx.results->write_csv(
      "multi_database_moves.csv",
      {"tenant", "items_queued", "from", "to", "took_ms", "call_ms", "items_moved", "probe_p50_before_ms",
       "probe_max_during_ms", "probe_gap_ms", "probe_enqueues_during", "probe_errors", "at_destination", "at_source",
       "all_arrived", "drain_s", "others_p99_before_ms", "others_p99_during_ms", "others_max_during_ms"},
      move_csv);

  ctx.results->add_section(
      "## Several databases\n\n"
      "Opt-in (`--experiment multi_database`): " +
      std::to_string(max_databases) +
      " PostgreSQL clusters started by the experiment on this machine (quick's development cluster settings: "
      "max_connections 200, max_prepared_transactions 20, otherwise PostgreSQL's defaults), in " +
      fixed(clusters_s, 1) + " s. Throughput: one consumer (Scanner, 2 Managers, writer, 4 Workers) serving 1.." +
      std::to_string(max_databases) + " databases, one per cluster; " + std::to_string(kFullSpeedProducers) +
      " producer threads enqueue one no-op item per transaction through one `quick::Router` to " +
      std::to_string(kTenants) + " tenants placed by the default rule, as fast as they can, for " +
      fixed(duration.count() / 1000.0, 0) +
      " s. e2e: vesting to handler start. Backlog: enqueued and not done when the producers stopped. CPU: the "
      "whole machine (" +
      std::to_string(std::thread::hardware_concurrency()) +
      " cores: the clusters, the consumer and the producers) while the producers ran, and its processor time per "
      "item done.\n\n" +
      markdown_table({"databases", "enqueued/s", "done/s", "e2e p50 ms", "e2e p99 ms", "e2e max ms", "backlog",
                      "enqueued per database", "producer errors", "CPU busy", "CPU us per item"},
                     summary) +
      "\nPer window:\n\n" +
      markdown_table({"databases", "t s", "enqueued/s", "done/s", "p50 ms", "p99 ms"}, windows_table) +
      "\nMoves: 2 databases, the consumer running and " + std::to_string(kBackgroundProducers) +
      " producers offering " + fixed(moves.background_rate, 0) +
      " items/s (half the 2-database done rate above) to the other tenants (they enqueued " +
      fixed(moves.background_enqueued_per_s, 0) + "/s, done " + fixed(moves.background_done_per_s, 0) + "/s, e2e p50 " +
      fixed(moves.background_e2e.p50_ms, 1) + " ms, p99 " + fixed(moves.background_e2e.p99_ms, 1) + " ms, max " +
      fixed(moves.background_e2e.max_ms, 0) +
      " ms over the whole part). The moved tenant's items were enqueued first with the tenant paused "
      "(the pause moves with it); a probe enqueues one item into it through the Router every 5 ms. took: "
      "MoveResult.took; probe p50: before the move; probe max: the slowest enqueue running during the move "
      "(it waits for the move's lock at the source, then is refused there and retried at the destination); gap: the "
      "longest time between two acknowledged probe enqueues. At destination: the tenant's items there after the "
      "move / the preloaded ones plus the probe's. Drain: after resuming the tenant at the destination, until the "
      "consumer had run them all. Others' p99: the other tenants' end-to-end p99 in the second before the "
      "move and during it.\n\n" +
      markdown_table({"items queued", "move", "took ms", "items moved", "probe p50 ms", "probe max ms", "gap ms",
                      "probe errors", "at destination", "left at source", "drain s", "others' p99 ms, before / during"},
                     move_table) +
      "\nWhen each step completed, ms after move_tenant was called:\n\n" +
      markdown_table({"items queued", "steps"}, step_table));
}

}  // namespace

QUICK_BENCH_OPT_IN_EXPERIMENT(120, "multi_database",
                              "1/2/3 databases (own local clusters) under one consumer; moving a tenant with "
                              "1,000 / 100,000 items under load",
                              run_multi_database);

}  // namespace quick::bench
