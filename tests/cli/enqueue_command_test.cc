// `quick enqueue`: one item from the command line, in the tool's own short transaction. That
// transaction holds nothing else, so the tool pulls a parked zone's pointer inside it
// (EnqueueOptions::pull_in_transaction) instead of leaving a pull request for a consumer.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "quick/quick.h"
#include "support/consumer_helpers.h"
#include "support/eventually.h"
#include "support/items.h"
#include "support/processes.h"
#include "support/test_database.h"

namespace quick {
namespace {

using namespace testing;

class EnqueueCommandTest : public testing::DatabaseTest {
 protected:
  // Runs `quick enqueue --database <database_url, else this test's database> <args>` to its end.
  ChildProcess& run(const std::vector<std::string>& args, const std::string& database_url = "") {
    std::vector<std::string> argv = {quick_binary(), "enqueue", "--database",
                                     database_url.empty() ? url() : database_url};
    argv.insert(argv.end(), args.begin(), args.end());
    child_ = std::make_unique<ChildProcess>(argv, std::vector<std::string>{}, dir_ / "out.txt", dir_ / "err.txt");
    EXPECT_TRUE(child_->wait_for(std::chrono::seconds(30))) << "quick enqueue did not finish";
    return *child_;
  }

  TempDir dir_;
  std::unique_ptr<ChildProcess> child_;
};

TEST_F(EnqueueCommandTest, EnqueuesOneItemAndPullsAParkedZonesPointerAtItsCommit) {
  ASSERT_FALSE(quick_binary().empty());
  {
    auto conn = connect();  // a zone whose pointer is parked for an hour
    testing::enqueue_committed(*conn, testing::make_item("zone", "job", "{}", std::chrono::hours(1)));
  }
  auto& child = run({"--tenant", "zone", "--job-type", "send", "--payload", R"({"to":"ann"})"});
  ASSERT_EQ(child.exit_code(), std::optional<int>(0)) << child.describe() << "\n" << child.err();
  const auto id = query_value<std::int64_t>("SELECT id FROM quick.items WHERE job_type = 'send'");
  EXPECT_NE(child.out().find("item " + std::to_string(id)), std::string::npos) << child.out();
  EXPECT_EQ(query_value<std::string>("SELECT payload::text FROM quick.items WHERE id = " + std::to_string(id)),
            R"({"to": "ann"})");
  EXPECT_TRUE(
      query_value<bool>("SELECT p.vesting_time = i.vesting_time FROM quick.pointers p, quick.items i "
                        "WHERE p.tenant = 'zone' AND i.id = " +
                        std::to_string(id)))
      << "the pointer vests with the new item";
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.pointer_pulls"), 0);
}

// A payload larger than one command-line argument may be (128 KiB on Linux) comes from a file or
// from standard input.
TEST_F(EnqueueCommandTest, ReadsALargePayloadFromAFileOrFromStandardInput) {
  ASSERT_FALSE(quick_binary().empty());
  const std::string payload = "{\"blob\": \"" + std::string(300 * 1024, 'x') + "\"}";
  const auto file = dir_ / "payload.json";
  {
    std::ofstream out(file);
    out << payload;
  }
  auto& from_file = run({"--tenant", "zone", "--job-type", "file", "--payload-file", file.string()});
  ASSERT_EQ(from_file.exit_code(), std::optional<int>(0)) << from_file.err();

  const std::string shell_line =
      "exec \"$0\" enqueue --database \"$1\" --tenant zone --job-type stdin "
      "--payload-file - < \"$2\"";
  ChildProcess from_stdin({"/bin/sh", "-c", shell_line, quick_binary(), url(), file.string()}, {},
                          dir_ / "stdin_out.txt", dir_ / "stdin_err.txt");
  ASSERT_TRUE(from_stdin.wait_for(std::chrono::seconds(30)));
  ASSERT_EQ(from_stdin.exit_code(), std::optional<int>(0)) << from_stdin.err();

  for (const std::string job_type : {"file", "stdin"}) {
    EXPECT_EQ(query_value<std::string>("SELECT payload::text FROM quick.items WHERE job_type = '" + job_type + "'"),
              payload)
        << job_type;
  }
}

TEST_F(EnqueueCommandTest, APayloadFileThatCannotBeReadOrAPayloadGivenTwiceIsRefused) {
  ASSERT_FALSE(quick_binary().empty());
  auto& missing = run({"--tenant", "zone", "--job-type", "send", "--payload-file", (dir_ / "missing.json").string()});
  EXPECT_EQ(missing.exit_code(), std::optional<int>(2));
  EXPECT_NE(missing.err().find("--payload-file: cannot read"), std::string::npos) << missing.err();
  auto& both = run({"--tenant", "zone", "--job-type", "send", "--payload", "{}", "--payload-file", "-"});
  EXPECT_NE(both.exit_code(), std::optional<int>(0));
  EXPECT_NE(both.err().find("excludes"), std::string::npos) << both.err();
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.items"), 0);
}

// Each is a usage error (exit 2) saying what is wrong with the input, and enqueues nothing: an
// empty file name (which enqueued the default {}), a directory (which failed with
// "basic_filebuf::underflow error", exit 1), an empty file or standard input, a read error, and a
// byte order mark (which JSON parsers skip and Postgres refuses).
TEST_F(EnqueueCommandTest, PayloadInputThatIsNotAPayloadIsAUsageErrorNamingIt) {
  ASSERT_FALSE(quick_binary().empty());
  const auto empty_file = dir_ / "empty.json";
  const auto with_bom = dir_ / "bom.json";
  write_text_file(empty_file, "");
  write_text_file(with_bom, "\xEF\xBB\xBF{\"a\": 1}");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "--payload-file needs a file name, or - for standard input"},
      {dir_.path().string(), "--payload-file: cannot read " + dir_.path().string() + ": it is a directory"},
      {empty_file.string(), "--payload-file: " + empty_file.string() + " is empty"},
      {with_bom.string(), "--payload-file: " + with_bom.string() + " starts with a UTF-8 byte order mark"},
      {"-", "--payload-file: standard input was empty"},  // ChildProcess's stdin is /dev/null
  };
  for (const auto& [file, expected] : cases) {
    SCOPED_TRACE("--payload-file '" + file + "'");
    auto& child = run({"--tenant", "zone", "--job-type", "send", "--payload-file", file});
    EXPECT_EQ(child.exit_code(), std::optional<int>(2)) << child.describe() << "\n" << child.err();
    EXPECT_NE(child.err().find(expected), std::string::npos) << child.err();
  }
  // A read error on standard input (here a directory): reported, not taken for the end of the input.
  ChildProcess from_directory({"/bin/sh", "-c",
                               "exec \"$0\" enqueue --database \"$1\" --tenant zone --job-type send "
                               "--payload-file - < /",
                               quick_binary(), url()},
                              {}, dir_ / "dir_out.txt", dir_ / "dir_err.txt");
  ASSERT_TRUE(from_directory.wait_for(std::chrono::seconds(30)));
  EXPECT_EQ(from_directory.exit_code(), std::optional<int>(2)) << from_directory.err();
  EXPECT_NE(from_directory.err().find("--payload-file: error reading standard input: Is a directory"),
            std::string::npos)
      << from_directory.err();
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.items"), 0);
}

// The payload is checked before connecting: a JSON error is reported as such (exit 2) also when
// the database cannot be reached.
TEST_F(EnqueueCommandTest, APayloadErrorIsReportedEvenWithAnUnreachableDatabase) {
  ASSERT_FALSE(quick_binary().empty());
  const std::string unreachable = "postgresql://quick@127.0.0.1:1/nowhere?connect_timeout=2";
  auto& child = run({"--tenant", "zone", "--job-type", "send", "--payload", "{not json"}, unreachable);
  EXPECT_EQ(child.exit_code(), std::optional<int>(2)) << child.describe() << "\n" << child.err();
  EXPECT_NE(child.err().find("payload is not valid JSON"), std::string::npos) << child.err();
}

TEST_F(EnqueueCommandTest, RejectsBadInputNamingItAndEnqueuesNothing) {
  ASSERT_FALSE(quick_binary().empty());
  auto& child = run({"--tenant", "zone", "--job-type", "send", "--payload", "{not json"});
  EXPECT_NE(child.exit_code(), std::optional<int>(0)) << child.describe();
  EXPECT_NE(child.err().find("payload"), std::string::npos) << child.err();
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.items"), 0);
}

TEST_F(EnqueueCommandTest, DatabaseWithoutTheSchemaIsRefusedSayingToRunQuickMigrate) {
  ASSERT_FALSE(quick_binary().empty());
  EmptyDatabase empty;
  auto& child = run({"--tenant", "zone", "--job-type", "send"}, empty.url());
  EXPECT_EQ(child.exit_code(), std::optional<int>(1)) << child.describe();
  std::cout << "no schema: " << child.err();
  EXPECT_NE(child.err().find("has no quick schema: run `quick migrate`"), std::string::npos) << child.err();
}

TEST_F(EnqueueCommandTest, DatabaseWithAnOlderSchemaIsRefusedAndGetsNoItem) {
  ASSERT_FALSE(quick_binary().empty());
  query(
      "CREATE OR REPLACE FUNCTION quick.item_miss_reason(item_id bigint) RETURNS quick.outcome "
      "LANGUAGE sql STABLE AS $$ SELECT 'item_gone'::quick.outcome $$");
  auto& child = run({"--tenant", "zone", "--job-type", "send"});
  EXPECT_EQ(child.exit_code(), std::optional<int>(1)) << child.describe();
  EXPECT_NE(child.err().find("run `quick migrate`"), std::string::npos) << child.err();
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.items"), 0);
}

}  // namespace
}  // namespace quick
