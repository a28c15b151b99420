// Two quick-pg databases on the test cluster, "one" (the directory, and the default rule's only
// database, so every tenant starts there) and "two", for tests of placement and tenant moves.
#pragma once

#include <chrono>
#include <future>
#include <memory>
#include <string>

#include <gtest/gtest.h>
#include <pqxx/pqxx>

#include "quick/placement.h"
#include "support/test_database.h"

namespace quick::testing {

class TwoDatabaseTest : public DatabaseTest {
 protected:
  void SetUp() override {
    DatabaseTest::SetUp();
    second_ = std::make_unique<MigratedDatabase>();
    config_.databases = {DatabaseConfig{"one", url()}, DatabaseConfig{"two", second_->url()}};
    config_.directory = "one";
    register_placement_databases(config_, {"one"});
  }
  void TearDown() override {
    second_.reset();
    DatabaseTest::TearDown();
  }

  std::string url_of(const std::string& name) const { return name == "one" ? url() : second_->url(); }
  // A single number from database `name`.
  long long value_in(const std::string& name, const std::string& sql) const {
    pqxx::connection conn(url_of(name));
    pqxx::nontransaction session(conn);
    return session.exec(sql).at(0).at(0).as<long long>();
  }
  long long items_of(const std::string& name, const std::string& tenant) const {
    pqxx::connection conn(url_of(name));
    pqxx::nontransaction session(conn);
    return session.exec_params("SELECT count(*) FROM quick.items WHERE tenant = $1", tenant)
        .at(0)
        .at(0)
        .as<long long>();
  }
  // Zones with items but no pointer: the invariant says none, in every database.
  long long orphaned_zones(const std::string& name) const {
    return value_in(name,
                    "SELECT count(*) FROM (SELECT DISTINCT tenant FROM quick.items) i "
                    "WHERE NOT EXISTS (SELECT 1 FROM quick.pointers p WHERE p.tenant = i.tenant)");
  }
  long long prepared_moves(const std::string& name) const {
    return value_in(name,
                    "SELECT count(*) FROM pg_prepared_xacts WHERE database = current_database() "
                    "AND gid LIKE 'quick_move:%'");
  }

  PlacementConfig config_;

 private:
  std::unique_ptr<MigratedDatabase> second_;
};

// A move_tenant on a thread of its own, held at `step` until finish(): for tests of what recovery
// does beside a mover that is still running.
class PausedMover {
 public:
  PausedMover(const PlacementConfig& config, std::string tenant, std::string to, MoveStep step)
      : go_on_(go_on_promise_.get_future().share()) {
    mover_ = std::async(std::launch::async, [this, config, tenant, to, step] {
      return move_tenant(config, tenant, to, {}, {}, [this, step](MoveStep reached) {
        if (reached != step) return;
        at_step_.set_value();
        go_on_.wait();
      });
    });
  }
  ~PausedMover() {
    if (!released_) go_on_promise_.set_value();
    if (mover_.valid()) mover_.wait();
  }
  PausedMover(const PausedMover&) = delete;
  PausedMover& operator=(const PausedMover&) = delete;

  // Whether the mover got to its step within 30 s.
  bool reached() { return at_step_.get_future().wait_for(std::chrono::seconds(30)) == std::future_status::ready; }
  // Lets it go on, and returns its result (or throws what it threw).
  MoveResult finish() {
    released_ = true;
    go_on_promise_.set_value();
    return mover_.get();
  }

 private:
  std::promise<void> at_step_;
  std::promise<void> go_on_promise_;
  std::shared_future<void> go_on_;
  std::future<MoveResult> mover_;
  bool released_ = false;
};

}  // namespace quick::testing
