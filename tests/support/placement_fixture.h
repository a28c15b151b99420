// Two quick-pg databases on the test cluster, "one" (the directory, and the default rule's only
// database, so every tenant starts there) and "two", for tests of placement and tenant moves.
#pragma once

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

}  // namespace quick::testing
