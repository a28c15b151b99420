// `quick stats`: the operator views as tables. Tenants and job types are whatever producers
// enqueued, so the tables escape them: a tenant named with a newline or an ANSI escape cannot
// forge rows or drive the terminal. A database without this build's schema is refused with a
// message saying to run `quick migrate`.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "quick/quick.h"
#include "support/items.h"
#include "support/processes.h"
#include "support/test_database.h"

namespace quick {
namespace {

using namespace testing;

class StatsCommandTest : public DatabaseTest {
 protected:
  // Runs `quick stats --database <database_url>` to its end.
  ChildProcess& run(const std::string& database_url) {
    child_ = std::make_unique<ChildProcess>(
        std::vector<std::string>{quick_binary(), "stats", "--database", database_url}, std::vector<std::string>{},
        dir_ / "out.txt", dir_ / "err.txt");
    EXPECT_TRUE(child_->wait_for(seconds(30))) << "quick stats did not finish";
    return *child_;
  }

  TempDir dir_;
  std::unique_ptr<ChildProcess> child_;
};

TEST_F(StatsCommandTest, TenantsAndJobTypesAreEscapedInTheTables) {
  ASSERT_FALSE(quick_binary().empty());
  const std::string tenant = "evil\x1b[2J\nforged | row";
  const std::string job_type = "job\rtype\xe2\x80\xae";
  {
    auto conn = connect();
    enqueue_committed(*conn, make_item(tenant, job_type, "{}"));
  }
  auto& stats = run(url());
  ASSERT_EQ(stats.exit_code(), std::optional<int>(0)) << stats.describe() << "\n" << stats.err();
  const std::string out = stats.out();
  std::cout << out;
  EXPECT_NE(out.find("evil\\x1B[2J\\x0Aforged | row"), std::string::npos) << out;
  EXPECT_NE(out.find("job\\x0Dtype\\xE2\\x80\\xAE"), std::string::npos) << out;
  EXPECT_EQ(out.find('\x1b'), std::string::npos) << "a raw ESC reached the terminal";
  EXPECT_EQ(out.find('\r'), std::string::npos);
  EXPECT_EQ(out.find("\xe2\x80\xae"), std::string::npos);
  EXPECT_EQ(out.find("\nforged"), std::string::npos) << "the tenant started a line of its own";
}

TEST_F(StatsCommandTest, DatabaseWithoutTheSchemaIsRefusedSayingToRunQuickMigrate) {
  ASSERT_FALSE(quick_binary().empty());
  EmptyDatabase empty;
  auto& stats = run(empty.url());
  EXPECT_EQ(stats.exit_code(), std::optional<int>(1)) << stats.describe();
  const std::string err = stats.err();
  std::cout << "no schema: " << err;
  EXPECT_NE(err.find("has no quick schema: run `quick migrate`"), std::string::npos) << err;
  EXPECT_NE(err.find(empty.name()), std::string::npos) << err;
  EXPECT_EQ(stats.out(), "") << "nothing is printed from a database it cannot read";
}

// A database migrated by an older build: its views still answer, but it is not this build's.
TEST_F(StatsCommandTest, DatabaseWithAnOlderSchemaIsRefusedSayingToRunQuickMigrate) {
  ASSERT_FALSE(quick_binary().empty());
  query(
      "CREATE OR REPLACE FUNCTION quick.item_miss_reason(item_id bigint) RETURNS quick.outcome "
      "LANGUAGE sql STABLE AS $$ SELECT 'item_gone'::quick.outcome $$");
  auto& stats = run(url());
  EXPECT_EQ(stats.exit_code(), std::optional<int>(1)) << stats.describe();
  const std::string err = stats.err();
  std::cout << "older schema: " << err;
  EXPECT_NE(err.find("older definition of quick.item_miss_reason"), std::string::npos) << err;
  EXPECT_NE(err.find("run `quick migrate`"), std::string::npos) << err;
}

}  // namespace
}  // namespace quick
