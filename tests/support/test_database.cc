#include "support/test_database.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <functional>
#include <random>

#include "embedded_sql.h"
#include "quick/migrate.h"

namespace quick::testing {
namespace {

// Identifies this build's schema: any change to migrations, functions or views gives a new
// template.
std::string schema_fingerprint() {
  std::string all;
  for (std::size_t i = 0; i < embedded::kMigrationCount; ++i) all += embedded::kMigrations[i].sql;
  for (std::size_t i = 0; i < embedded::kDefinitionCount; ++i) all += embedded::kDefinitions[i].sql;
  return std::to_string(std::hash<std::string>{}(all) % 1000000007ULL);
}

std::string template_name() { return "quick_template_" + schema_fingerprint(); }

// Creates the template once per cluster. An advisory lock on the admin database serializes test
// processes that start at the same time.
void ensure_template(const std::string& admin) {
  pqxx::connection conn(admin);
  pqxx::nontransaction session(conn);
  session.exec("SELECT pg_advisory_lock(7151170001)");
  const std::string name = template_name();
  const bool exists = !session.exec_params("SELECT 1 FROM pg_database WHERE datname = $1", name).empty();
  if (!exists) {
    const std::string building = name + "_building";
    session.exec("DROP DATABASE IF EXISTS " + session.quote_name(building) + " WITH (FORCE)");
    session.exec("CREATE DATABASE " + session.quote_name(building));
    {
      pqxx::connection template_conn(url_for_database(admin, building));
      quick::migrate(template_conn);
    }
    session.exec("ALTER DATABASE " + session.quote_name(building) + " RENAME TO " + session.quote_name(name));
  }
  session.exec("SELECT pg_advisory_unlock(7151170001)");
}

}  // namespace

std::string admin_url() {
  const char* url = std::getenv("QUICK_TEST_DATABASE_URL");
  if (url == nullptr || *url == '\0') {
    ADD_FAILURE() << "QUICK_TEST_DATABASE_URL is not set: run the tests through scripts/test, "
                     "or point it at a Postgres cluster where tests may create databases";
    return "";
  }
  return url;
}

std::string url_for_database(const std::string& url, const std::string& dbname) {
  // Works for both libpq forms: for URIs we append a query parameter, for keyword/value strings
  // a later keyword overrides an earlier one.
  if (url.rfind("postgresql://", 0) == 0 || url.rfind("postgres://", 0) == 0) {
    const auto query = url.find('?');
    const std::string base = url.substr(0, query);
    const std::string params = query == std::string::npos ? "" : "&" + url.substr(query + 1);
    return base + "?dbname=" + dbname + params;
  }
  return url + " dbname=" + dbname;
}

namespace {

// A database name no other test process uses: "<prefix>_<pid>_<n>".
std::string unique_database_name(const std::string& prefix) {
  static std::atomic<int> counter{0};
  return prefix + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
}

// (Re)creates `name` from `template_name` on the admin connection.
void create_database(const std::string& name, const std::string& template_name) {
  pqxx::connection conn(admin_url());
  pqxx::nontransaction session(conn);
  session.exec("DROP DATABASE IF EXISTS " + session.quote_name(name) + " WITH (FORCE)");
  session.exec("CREATE DATABASE " + session.quote_name(name) + " TEMPLATE " + session.quote_name(template_name));
}

// Rolls back the prepared transactions left in database `name` (a test of an interrupted tenant
// move may leave some): DROP DATABASE refuses a database that has any.
void roll_back_prepared_transactions(const std::string& name) {
  pqxx::connection conn(url_for_database(admin_url(), name));
  pqxx::nontransaction session(conn);
  for (const auto& row : session.exec("SELECT gid FROM pg_prepared_xacts WHERE database = current_database()")) {
    session.exec("ROLLBACK PREPARED " + session.quote(row[0].as<std::string>()));
  }
}

// Drops `name`; a failure fails the current test rather than throwing from a destructor.
void drop_database_quietly(const std::string& name) {
  try {
    roll_back_prepared_transactions(name);
    pqxx::connection conn(admin_url());
    pqxx::nontransaction session(conn);
    session.exec("DROP DATABASE IF EXISTS " + session.quote_name(name) + " WITH (FORCE)");
  } catch (const std::exception& error) {
    ADD_FAILURE() << "could not drop test database " << name << ": " << error.what();
  }
}

}  // namespace

EmptyDatabase::EmptyDatabase() : name_(unique_database_name("quick_empty")) { create_database(name_, "template0"); }

EmptyDatabase::~EmptyDatabase() { drop_database_quietly(name_); }

std::string EmptyDatabase::url() const { return url_for_database(admin_url(), name_); }

MigratedDatabase::MigratedDatabase() : name_(unique_database_name("quick_second")) {
  const std::string admin = admin_url();
  ensure_template(admin);
  create_database(name_, template_name());
}

MigratedDatabase::~MigratedDatabase() { drop_database_quietly(name_); }

std::string MigratedDatabase::url() const { return url_for_database(admin_url(), name_); }

TestLogin::TestLogin(const std::string& granted_role, const std::string& attributes) {
  static std::atomic<int> counter{0};
  name_ = "quick_test_login_" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
  std::mt19937_64 random(std::random_device{}());
  password_ = "pw" + std::to_string(random());
  pqxx::connection conn(admin_url());
  pqxx::nontransaction session(conn);
  session.exec("CREATE ROLE " + session.quote_name(name_) + " LOGIN " + attributes + " PASSWORD " +
               session.quote(password_));
  if (!granted_role.empty()) session.exec("GRANT " + granted_role + " TO " + session.quote_name(name_));
}

TestLogin::~TestLogin() {
  try {
    pqxx::connection conn(admin_url());
    pqxx::nontransaction session(conn);
    session.exec("DROP ROLE IF EXISTS " + session.quote_name(name_));
  } catch (const std::exception& error) {
    ADD_FAILURE() << "could not drop role " << name_ << ": " << error.what();
  }
}

void DatabaseTest::SetUp() {
  const std::string admin = admin_url();
  ASSERT_FALSE(admin.empty());
  ensure_template(admin);
  database_name_ = unique_database_name("quick_test");
  create_database(database_name_, template_name());
  url_ = url_for_database(admin, database_name_);
}

void DatabaseTest::TearDown() {
  if (!database_name_.empty()) drop_database_quietly(database_name_);
}

std::unique_ptr<pqxx::connection> DatabaseTest::connect() const { return std::make_unique<pqxx::connection>(url_); }

pqxx::result DatabaseTest::query(const std::string& sql) const {
  pqxx::connection conn(url_);
  pqxx::nontransaction session(conn);
  return session.exec(sql);
}

}  // namespace quick::testing
