// The operator commands: quick tenant|job-type pause|resume|paused, quick dead list|retry|purge
// and quick item cancel, run as a user would, against a test database. What the SQL functions
// behind them do is tested in tests/operations/; here, that the commands reach them with the
// flags' values, report counts, and refuse unsafe or bad input with the flag's name.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/items.h"
#include "support/processes.h"
#include "support/test_database.h"

namespace quick {
namespace {

using namespace testing;

class OperationsCommandsTest : public DatabaseTest {
 protected:
  // Runs `quick <arguments> --database <url>` to its end; returns its exit code.
  int run(std::vector<std::string> arguments) {
    arguments.insert(arguments.begin(), quick_binary());
    arguments.push_back("--database");
    arguments.push_back(url());
    child_ = std::make_unique<ChildProcess>(arguments, std::vector<std::string>{}, dir_ / "out.txt", dir_ / "err.txt");
    EXPECT_TRUE(child_->wait_for(seconds(30)));
    return child_->exit_code().value_or(-1);
  }
  std::string out() const { return child_->out(); }
  std::string err() const { return child_->err(); }
  int count(const std::string& from_where) const { return query_value<int>("SELECT count(*) FROM " + from_where); }

  TempDir dir_;
  std::unique_ptr<ChildProcess> child_;
};

TEST_F(OperationsCommandsTest, PauseAndResumeTenantsAndJobTypes) {
  EXPECT_EQ(run({"tenant", "pause", "acme", "--reason", "incident 7"}), 0) << err();
  EXPECT_EQ(out(), "tenant acme paused\n");
  EXPECT_EQ(run({"tenant", "pause", "acme"}), 0);
  EXPECT_EQ(out(), "tenant acme was already paused\n");
  EXPECT_EQ(run({"job-type", "pause", "report"}), 0) << err();
  EXPECT_EQ(query_value<std::string>("SELECT string_agg(kind || '=' || name || '/' || coalesce(reason, '-'), ' ' "
                                     "ORDER BY kind) FROM quick.paused"),
            "job_type=report/- tenant=acme/incident 7");
  EXPECT_EQ(run({"tenant", "paused"}), 0);
  EXPECT_NE(out().find("incident 7"), std::string::npos) << out();
  EXPECT_EQ(run({"tenant", "resume", "acme"}), 0);
  EXPECT_EQ(out(), "tenant acme resumed\n");
  EXPECT_EQ(run({"job-type", "resume", "report"}), 0);
  EXPECT_EQ(run({"job-type", "resume", "report"}), 0);
  EXPECT_EQ(out(), "job type report was not paused\n");
  EXPECT_EQ(count("quick.paused"), 0);
  EXPECT_EQ(run({"tenant", "pause", ""}), 1);
  EXPECT_NE(err().find("tenant must be 1 to 200 characters"), std::string::npos) << err();
}

TEST_F(OperationsCommandsTest, CancelListRetryAndPurgeByFilterWithCounts) {
  auto conn = connect();
  const auto a = enqueue_committed(*conn, make_item("a", "mail"));
  const auto b = enqueue_committed(*conn, make_item("b", "report"));
  EXPECT_EQ(run({"item", "cancel", std::to_string(a), std::to_string(b), "999999"}), 1) << "one id was not queued";
  EXPECT_NE(out().find("item 999999: no such queued item"), std::string::npos) << out();
  EXPECT_EQ(count("quick.dead_items WHERE reason = 'cancelled'"), 2);

  EXPECT_EQ(run({"dead", "list", "--job-type", "mail"}), 0) << err();
  EXPECT_NE(out().find("(1 rows)"), std::string::npos) << out();
  EXPECT_EQ(run({"dead", "retry", "--tenant", "a"}), 0) << err();
  EXPECT_EQ(out(), "1 dead items retried\n");
  EXPECT_EQ(count("quick.items WHERE tenant = 'a'"), 1);

  EXPECT_EQ(run({"dead", "purge"}), 2) << "no filter and no --all";
  EXPECT_NE(err().find("give a filter"), std::string::npos) << err();
  EXPECT_EQ(run({"dead", "purge", "--older-than", "soon"}), 2);
  EXPECT_NE(err().find("--older-than: 'soon' is not a duration"), std::string::npos) << err();
  EXPECT_EQ(run({"dead", "purge", "--older-than", "1h"}), 0) << err();
  EXPECT_EQ(out(), "0 dead items purged\n") << "b died just now";
  EXPECT_EQ(run({"dead", "purge", "--all"}), 0);
  EXPECT_EQ(out(), "1 dead items purged\n");
  EXPECT_EQ(count("quick.dead_items"), 0);
}

// --older-than takes a duration as every other flag of the tool and the dashboard do: a bare number
// ("30", meant as days) is refused, not read by Postgres as seconds.
TEST_F(OperationsCommandsTest, OlderThanNeedsAUnit) {
  auto conn = connect();
  const auto id = enqueue_committed(*conn, make_item("old", "mail"));
  ASSERT_EQ(run({"item", "cancel", std::to_string(id)}), 0) << err();
  query("UPDATE quick.dead_items SET died_at = now() - interval '1 hour'");

  for (const std::string command : {"list", "retry", "purge"}) {
    SCOPED_TRACE("quick dead " + command);
    EXPECT_EQ(run({"dead", command, "--older-than", "30"}), 2) << out();
    EXPECT_NE(err().find("--older-than: '30' has no unit"), std::string::npos) << err();
  }
  EXPECT_EQ(count("quick.dead_items"), 1) << "nothing purged or retried";
  EXPECT_EQ(run({"dead", "purge", "--older-than", "1 hour"}), 2);
  EXPECT_NE(err().find("--older-than: '1 hour' has an unknown unit"), std::string::npos) << err();

  EXPECT_EQ(run({"dead", "list", "--older-than", "2d"}), 0) << err();
  EXPECT_NE(out().find("(0 rows)"), std::string::npos) << out();
  EXPECT_EQ(run({"dead", "purge", "--older-than", "7d"}), 0) << err();
  EXPECT_EQ(out(), "0 dead items purged\n");
  EXPECT_EQ(run({"dead", "purge", "--older-than", "59m"}), 0) << err();
  EXPECT_EQ(out(), "1 dead items purged\n");
}

}  // namespace
}  // namespace quick
