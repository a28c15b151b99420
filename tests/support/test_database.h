// A fresh, migrated database per test, on the cluster named by QUICK_TEST_DATABASE_URL.
//
// The first test on a cluster creates a template database migrated to this build's schema (its
// name carries a hash of the embedded SQL, so a schema change makes a new one); every test then
// clones it, which is much faster than migrating, and drops its clone afterwards. A missing
// QUICK_TEST_DATABASE_URL fails the test: tests are never skipped for want of a database.
#pragma once

#include <memory>
#include <string>

#include <gtest/gtest.h>
#include <pqxx/pqxx>

namespace quick::testing {

// The admin connection string from QUICK_TEST_DATABASE_URL; fails the current test if unset.
std::string admin_url();

// `url` with its dbname replaced (libpq keyword/value form appended last wins).
std::string url_for_database(const std::string& url, const std::string& dbname);

// A database on the test cluster without the quick schema, dropped by the destructor.
class EmptyDatabase {
 public:
  EmptyDatabase();
  ~EmptyDatabase();
  EmptyDatabase(const EmptyDatabase&) = delete;
  EmptyDatabase& operator=(const EmptyDatabase&) = delete;

  std::string url() const;
  const std::string& name() const { return name_; }

 private:
  std::string name_;
};

// One more database migrated to this build's schema on the test cluster (a clone of the template,
// as DatabaseTest's own), dropped by the destructor after rolling back any prepared transaction
// left in it. For tests that need several quick-pg databases.
class MigratedDatabase {
 public:
  MigratedDatabase();
  ~MigratedDatabase();
  MigratedDatabase(const MigratedDatabase&) = delete;
  MigratedDatabase& operator=(const MigratedDatabase&) = delete;

  std::string url() const;
  const std::string& name() const { return name_; }

 private:
  std::string name_;
};

// A LOGIN role with a random password on the test cluster, for one test (roles are
// cluster-wide), dropped by the destructor. `granted_role` ("" for none) is granted to it;
// `attributes` go into its CREATE ROLE (such as "SUPERUSER").
class TestLogin {
 public:
  explicit TestLogin(const std::string& granted_role, const std::string& attributes = "");
  ~TestLogin();
  TestLogin(const TestLogin&) = delete;
  TestLogin& operator=(const TestLogin&) = delete;

  const std::string& name() const { return name_; }
  const std::string& password() const { return password_; }
  // `database_url` as this login (keyword form: later keywords win).
  std::string url(const std::string& database_url) const {
    return database_url + " user=" + name_ + " password=" + password_;
  }

 private:
  std::string name_;
  std::string password_;
};

class DatabaseTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  // Connection string of this test's own database.
  const std::string& url() const { return url_; }
  const std::string& database_name() const { return database_name_; }

  // A new connection to this test's database (one per thread, as libpqxx requires).
  std::unique_ptr<pqxx::connection> connect() const;

  // Runs one statement on a fresh autocommit connection and returns its result.
  pqxx::result query(const std::string& sql) const;

  // Shorthand for a single value.
  template <typename T>
  T query_value(const std::string& sql) const {
    return query(sql).at(0).at(0).template as<T>();
  }

 private:
  std::string database_name_;
  std::string url_;
};

}  // namespace quick::testing
