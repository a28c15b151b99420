// Router: which database holds a tenant (the directory, cached), and work sent there.
#include <list>
#include <map>
#include <mutex>
#include <unordered_map>

#include "placement/named_database.h"
#include "quick/placement.h"
#include "quick/producer.h"
#include "store/sql_errors.h"

namespace quick {

namespace {
constexpr int kMaxAttempts = 3;  // a tenant moved twice while one piece of work was routed is rare
}  // namespace

struct Router::State {
  PlacementConfig config;
  std::mutex mutex;  // guards everything below

  struct Route {
    std::string database;
    std::chrono::steady_clock::time_point learned_at;
    std::list<std::string>::iterator age;  // position in `oldest_first`
  };
  std::unordered_map<std::string, Route> routes;
  std::list<std::string> oldest_first;
  // Idle connections by database name; a connection is taken out while in use.
  std::map<std::string, std::vector<std::unique_ptr<pqxx::connection>>> idle;

  void remember(const std::string& tenant, const std::string& database) {
    const auto now = std::chrono::steady_clock::now();
    auto found = routes.find(tenant);
    if (found != routes.end()) {
      oldest_first.erase(found->second.age);
      routes.erase(found);
    }
    oldest_first.push_back(tenant);
    routes.emplace(tenant, Route{database, now, std::prev(oldest_first.end())});
    while (routes.size() > config.route_cache_max) {
      routes.erase(oldest_first.front());
      oldest_first.pop_front();
    }
  }

  std::unique_ptr<pqxx::connection> take(const std::string& database) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      auto& pool = idle[database];
      if (!pool.empty()) {
        auto conn = std::move(pool.back());
        pool.pop_back();
        if (conn->is_open()) return conn;
      }
    }
    return placement::connect_to(config, database);
  }

  void give_back(const std::string& database, std::unique_ptr<pqxx::connection> conn) {
    if (!conn || !conn->is_open()) return;
    std::lock_guard<std::mutex> lock(mutex);
    auto& pool = idle[database];
    if (pool.size() < 8) pool.push_back(std::move(conn));
  }

  // A pooled connection, returned to the pool unless the work on it failed.
  class PooledConnection {
   public:
    PooledConnection(State& state, std::string database)
        : state_(state), database_(std::move(database)), conn_(state_.take(database_)) {}
    ~PooledConnection() {
      if (healthy_) state_.give_back(database_, std::move(conn_));
    }
    PooledConnection(const PooledConnection&) = delete;
    PooledConnection& operator=(const PooledConnection&) = delete;
    pqxx::connection& operator*() { return *conn_; }
    void mark_healthy() { healthy_ = true; }

   private:
    State& state_;
    std::string database_;
    std::unique_ptr<pqxx::connection> conn_;
    bool healthy_ = false;
  };
};

Router::Router(PlacementConfig config) : state_(std::make_unique<State>()) {
  validate(config);
  state_->config = std::move(config);
}

Router::~Router() = default;

const DatabaseConfig& Router::database(const std::string& name) const {
  return placement::database_named(state_->config, name);
}

std::string Router::database_for(const std::string& tenant) {
  if (is_local_tenant(tenant)) {
    throw InvalidArgument("placement: tenant \"" + tenant +
                          "\" is a local zone: it has no placement; enqueue it into the database it concerns");
  }
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    auto found = state_->routes.find(tenant);
    if (found != state_->routes.end() &&
        std::chrono::steady_clock::now() - found->second.learned_at <= state_->config.route_cache_ttl) {
      return found->second.database;
    }
  }
  State::PooledConnection directory(*state_, state_->config.directory);
  const auto name = placement::tenant_database(state_->config, *directory, tenant);
  directory.mark_healthy();
  database(name);  // throws when this configuration does not know it
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->remember(tenant, name);
  return name;
}

std::unique_ptr<pqxx::connection> Router::connect_for(const std::string& tenant) {
  return placement::connect_to(state_->config, database_for(tenant));
}

void Router::learn(const TenantMoved& moved) {
  if (moved.tenant().empty() || moved.moved_to().empty()) return;
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->remember(moved.tenant(), moved.moved_to());
}

void Router::forget(const std::string& tenant) {
  std::lock_guard<std::mutex> lock(state_->mutex);
  auto found = state_->routes.find(tenant);
  if (found == state_->routes.end()) return;
  state_->oldest_first.erase(found->second.age);
  state_->routes.erase(found);
}

void Router::in_tenant_transaction(const std::string& tenant, const std::function<void(pqxx::work&)>& body) {
  for (int attempt = 1;; ++attempt) {
    const std::string name = database_for(tenant);
    State::PooledConnection conn(*state_, name);
    try {
      pqxx::work txn(*conn);
      try {
        body(txn);
        txn.commit();
      } catch (const pqxx::sql_error& error) {
        store::throw_if_tenant_moved(error);  // a fence raised in the body's own statements
        throw;
      }
      conn.mark_healthy();
      return;
    } catch (const TenantMoved& moved) {
      conn.mark_healthy();  // the transaction rolled back; the connection is fine
      if (moved.moved_to().empty() || moved.moved_to() == name) forget(tenant);
      else learn(moved);
      if (attempt >= kMaxAttempts) throw;
    }
  }
}

EnqueueResult Router::enqueue(const NewItem& item) {
  validate_new_item(item);
  for (int attempt = 1;; ++attempt) {
    const std::string name = database_for(item.tenant);
    State::PooledConnection conn(*state_, name);
    try {
      auto result = quick::enqueue(*conn, item);
      conn.mark_healthy();
      return result;
    } catch (const TenantMoved& moved) {
      conn.mark_healthy();
      if (moved.moved_to().empty() || moved.moved_to() == name) forget(item.tenant);
      else learn(moved);
      if (attempt >= kMaxAttempts) throw;
    }
  }
}

}  // namespace quick
