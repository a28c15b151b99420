// The placement commands: quick tenant databases|where|place|move|rebalance and quick doctor, run
// as a user would against two (or three) databases of the test cluster named in a consumer
// configuration. What the SQL functions and quick::move_tenant do is tested with the library;
// here, that the commands reach them with the flags' values, report what happened, end what
// interrupted moves left, and refuse bad input naming the flag.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "quick/errors.h"
#include "quick/migrate.h"
#include "quick/producer.h"
#include "support/items.h"
#include "support/processes.h"
#include "support/test_database.h"

namespace quick {
namespace {

using namespace testing;
using ::testing::HasSubstr;
using ::testing::Not;

// A migrated database of its own, besides the fixture's.
class MigratedDatabase {
 public:
  MigratedDatabase() {
    pqxx::connection conn(empty_.url());
    migrate(conn);
  }
  std::string url() const { return empty_.url(); }
  const std::string& name() const { return empty_.name(); }

 private:
  EmptyDatabase empty_;
};

// Rolls back every prepared transaction of a move left in the database at `url` (a test that
// failed halfway may leave one; a database holding one cannot be dropped).
void rollback_prepared_moves(const std::string& url) {
  try {
    pqxx::connection conn(url);
    pqxx::nontransaction session(conn);
    for (const auto& row : session.exec("SELECT gid FROM pg_prepared_xacts "
                                        "WHERE database = current_database() AND gid LIKE 'quick_move:%'")) {
      session.exec("ROLLBACK PREPARED " + session.quote(row[0].as<std::string>()));
    }
  } catch (const std::exception& error) {
    ADD_FAILURE() << "cleaning up prepared transactions: " << error.what();
  }
}

class PlacementCommandsTest : public DatabaseTest {
 protected:
  void SetUp() override {
    DatabaseTest::SetUp();
    two_ = std::make_unique<MigratedDatabase>();
    write_config("consumer.yaml", {{"one", url()}, {"two", two_->url()}});
  }
  void TearDown() override {
    rollback_prepared_moves(url());
    if (two_) rollback_prepared_moves(two_->url());
    if (three_) rollback_prepared_moves(three_->url());
    three_.reset();
    two_.reset();
    DatabaseTest::TearDown();
  }

  void write_config(const std::string& file, const std::vector<std::pair<std::string, std::string>>& databases) {
    std::string yaml = "databases:\n";
    for (const auto& [name, database_url] : databases) {
      yaml += "  - name: " + name + "\n    url: \"" + database_url + "\"\n";
    }
    write_text_file(dir_ / file, yaml);
  }

  // Runs `quick <arguments> --config <config>` to its end; returns its exit code.
  int run(std::vector<std::string> arguments, const std::string& config = "consumer.yaml") {
    arguments.insert(arguments.begin(), quick_binary());
    arguments.push_back("--config");
    arguments.push_back((dir_ / config).string());
    child_ = std::make_unique<ChildProcess>(arguments, std::vector<std::string>{}, dir_ / "out.txt", dir_ / "err.txt");
    EXPECT_TRUE(child_->wait_for(seconds(60)));
    return child_->exit_code().value_or(-1);
  }
  std::string out() const { return child_->out(); }
  std::string err() const { return child_->err(); }

  static pqxx::result query_at(const std::string& database_url, const std::string& sql) {
    pqxx::connection conn(database_url);
    pqxx::nontransaction session(conn);
    return session.exec(sql);
  }
  static std::int64_t count_at(const std::string& database_url, const std::string& from_where) {
    return query_at(database_url, "SELECT count(*) FROM " + from_where).at(0).at(0).as<std::int64_t>();
  }

  // Registers both databases and places `tenant` in `database` (directory: one).
  void register_and_place(const std::string& tenant, const std::string& database) {
    ASSERT_EQ(run({"tenant", "databases", "--register"}), 0) << err();
    query("SELECT quick.place_tenant('" + tenant + "', '" + database + "')");
  }

  // What an interrupted `quick tenant move TENANT --to two` leaves after PREPARE TRANSACTION at
  // the source, one, before its decision: the move recorded in the directory, the tenant's rows
  // deleted and fenced in a prepared transaction. Returns the move id.
  std::string leave_prepared_move_out(const std::string& tenant) {
    const auto move_id = query_value<std::string>("SELECT gen_random_uuid()::text");
    query("SELECT quick.begin_move('" + move_id + "', '" + tenant + "', 'one', 'two')");
    auto conn = connect();
    pqxx::nontransaction session(*conn);
    session.exec("BEGIN");
    session.exec("SELECT * FROM quick.move_out_begin('" + tenant + "', 'two', '" + move_id + "')");
    session.exec("SELECT * FROM quick.move_out_finish('" + tenant + "', '" + move_id + "')");
    session.exec("PREPARE TRANSACTION 'quick_move:" + move_id + ":source'");
    return move_id;
  }
  std::int64_t prepared_moves() const {
    return query_value<std::int64_t>(
        "SELECT count(*) FROM pg_prepared_xacts WHERE gid LIKE 'quick_move:%' AND "
        "database IN ('" +
        database_name() + "', '" + two_->name() + "')");
  }

  TempDir dir_;
  std::unique_ptr<ChildProcess> child_;
  std::unique_ptr<MigratedDatabase> two_;
  std::unique_ptr<MigratedDatabase> three_;
};

TEST_F(PlacementCommandsTest, RegisterListWhereAndPlace) {
  EXPECT_EQ(run({"tenant", "databases"}), 0) << err();
  EXPECT_THAT(out(), HasSubstr("(0 rows)"));
  EXPECT_EQ(run({"tenant", "where", "acme"}), 1);
  EXPECT_THAT(err(), HasSubstr("quick tenant databases --register"));

  EXPECT_EQ(run({"tenant", "databases", "--register"}), 0) << err();
  EXPECT_EQ(out(), "registered database one (in the default rule)\nregistered database two (in the default rule)\n");
  EXPECT_EQ(run({"tenant", "databases", "--register"}), 0) << err();
  EXPECT_THAT(out(), HasSubstr("nothing to register"));
  EXPECT_EQ(run({"tenant", "databases"}), 0) << err();
  EXPECT_THAT(out(), HasSubstr("(2 rows)"));

  const auto by_rule = query_value<std::string>("SELECT quick.tenant_database('acme')");
  EXPECT_EQ(run({"tenant", "where", "acme"}), 0) << err();
  EXPECT_EQ(out(), "tenant acme is in database " + by_rule + " (by the default rule)\n");

  const std::string other = by_rule == "one" ? "two" : "one";
  EXPECT_EQ(run({"tenant", "place", "acme", "--in", other}), 0) << err();
  EXPECT_EQ(out(), "tenant acme placed in database " + other + " (it was in database " + by_rule +
                       ", by the default rule); nothing was moved\n");
  EXPECT_EQ(query_value<std::string>("SELECT quick.tenant_database('acme')"), other);
  EXPECT_EQ(run({"tenant", "where", "acme"}), 0) << err();
  EXPECT_THAT(out(), HasSubstr("tenant acme is in database " + other + " (placed explicitly by an operator at "));

  // Work left behind by a place is pointed out.
  auto conn = connect();
  enqueue_committed(*conn, make_item("left-behind"));
  query("SELECT quick.place_tenant('left-behind', 'one')");
  EXPECT_EQ(run({"tenant", "place", "left-behind", "--in", "two"}), 0) << err();
  EXPECT_THAT(err(), HasSubstr("still has 1 items and 0 dead items in database one"));

  EXPECT_EQ(run({"tenant", "place", "acme", "--in", "nine"}), 2);
  EXPECT_THAT(err(), HasSubstr("not a registered placement database"));
  EXPECT_EQ(run({"tenant", "where", "@local:maintenance"}), 2);
  EXPECT_EQ(run({"tenant", "where", "acme", "--directory", "nine"}), 2);
  EXPECT_THAT(err(), HasSubstr("--directory: no database named \"nine\""));
  EXPECT_NE(run({"tenant", "databases", "--default-rule", "one"}), 0);
  EXPECT_THAT(err(), HasSubstr("--default-rule requires --register"));
}

TEST_F(PlacementCommandsTest, RegisteringANewDatabaseLaterNeedsTheDefaultRuleSpelledOut) {
  write_config("first.yaml", {{"one", url()}});
  ASSERT_EQ(run({"tenant", "databases", "--register"}, "first.yaml"), 0) << err();
  EXPECT_EQ(run({"tenant", "databases", "--register"}), 2);
  EXPECT_THAT(err(), HasSubstr("would re-place about 1/n of the tenants nobody placed"));
  EXPECT_EQ(run({"tenant", "databases", "--register", "--default-rule", "one"}), 0) << err();
  EXPECT_EQ(out(), "registered database two (outside the default rule)\n");
  EXPECT_EQ(query_value<std::string>(
                "SELECT string_agg(name || '=' || in_default_rule, ' ' ORDER BY name) FROM quick.placement_databases"),
            "one=true two=false");
  EXPECT_EQ(run({"tenant", "databases", "--register", "--default-rule", "six"}), 2);
  EXPECT_THAT(err(), HasSubstr("--default-rule: no database named \"six\""));
}

TEST_F(PlacementCommandsTest, MovesATenantWithItsItemsAndBack) {
  register_and_place("acme", "one");
  auto conn = connect();
  enqueue_committed(*conn, make_item("acme", "mail", R"({"n": 1})", 0ms, 5));
  enqueue_committed(*conn, make_item("acme", "mail", R"({"n": 2})", 0ms, -3));
  const auto cancelled = enqueue_committed(*conn, make_item("acme", "mail", R"({"n": 3})"));
  query("SELECT quick.cancel_item(" + std::to_string(cancelled) + ")");
  enqueue_committed(*conn, make_item("other", "mail"));

  EXPECT_EQ(run({"tenant", "move", "acme", "--to", "two"}), 0) << err();
  EXPECT_THAT(out(), HasSubstr("tenant acme moved from one to two: 2 items, 1 dead items in "));
  EXPECT_THAT(out(), HasSubstr("(move "));
  const auto moved = query_at(
      two_->url(), "SELECT payload::text, priority FROM quick.items WHERE tenant = 'acme' ORDER BY priority");
  ASSERT_EQ(moved.size(), 2u);
  EXPECT_EQ(moved[0][0].as<std::string>(), R"({"n": 2})");
  EXPECT_EQ(moved[0][1].as<int>(), -3);
  EXPECT_EQ(moved[1][0].as<std::string>(), R"({"n": 1})");
  EXPECT_EQ(moved[1][1].as<int>(), 5);
  EXPECT_EQ(count_at(two_->url(), "quick.dead_items WHERE tenant = 'acme'"), 1);
  EXPECT_EQ(count_at(url(), "quick.items WHERE tenant = 'acme'"), 0);
  EXPECT_EQ(count_at(url(), "quick.dead_items WHERE tenant = 'acme'"), 0);
  EXPECT_EQ(count_at(url(), "quick.items WHERE tenant = 'other'"), 1) << "another tenant stays";

  try {
    enqueue_committed(*conn, make_item("acme"));
    ADD_FAILURE() << "an enqueue at the old database was accepted";
  } catch (const TenantMoved& moved_away) {
    EXPECT_EQ(moved_away.moved_to(), "two");
  }
  ChildProcess enqueue({quick_binary(), "enqueue", "--database", url(), "--tenant", "acme", "--job-type", "mail"}, {},
                       dir_ / "enqueue.out", dir_ / "enqueue.err");
  ASSERT_TRUE(enqueue.wait_for(seconds(30)));
  EXPECT_EQ(enqueue.exit_code(), 1);
  EXPECT_THAT(enqueue.err(), HasSubstr("two"));

  EXPECT_EQ(run({"tenant", "where", "acme"}), 0) << err();
  EXPECT_THAT(out(), HasSubstr("tenant acme is in database two (placed explicitly by move "));
  EXPECT_EQ(run({"tenant", "move", "acme", "--to", "two"}), 0) << err();
  EXPECT_EQ(out(), "tenant acme is already in two: nothing to move\n");

  EXPECT_EQ(run({"tenant", "move", "acme", "--to", "one", "--batch-items", "1"}), 0) << err();
  EXPECT_THAT(out(), HasSubstr("tenant acme moved from two to one: 2 items, 1 dead items in "));
  EXPECT_EQ(count_at(url(), "quick.items WHERE tenant = 'acme'"), 2);
  EXPECT_EQ(count_at(two_->url(), "quick.items WHERE tenant = 'acme'"), 0);
  enqueue_committed(*conn, make_item("acme"));  // home again: accepted
  EXPECT_EQ(count_at(url(), "quick.items WHERE tenant = 'acme'"), 3);

  // A directory that disagrees with the fences (a careless place) stops a move, saying how to repair it.
  EXPECT_EQ(run({"tenant", "place", "acme", "--in", "two"}), 0) << err();
  EXPECT_EQ(run({"tenant", "move", "acme", "--to", "one"}), 1);
  EXPECT_THAT(err(), HasSubstr("it moved to database \"one\""));
  EXPECT_THAT(err(), HasSubstr("`quick tenant place acme --in one` repairs the directory"));
  EXPECT_EQ(count_at(url(), "quick.items WHERE tenant = 'acme'"), 3);
  EXPECT_EQ(prepared_moves(), 0);
}

TEST_F(PlacementCommandsTest, MoveRefusesBadInputNamingTheFlag) {
  register_and_place("acme", "one");
  EXPECT_EQ(run({"tenant", "move", "acme", "--to", "nine"}), 2);
  EXPECT_THAT(err(), HasSubstr("--to: no database named \"nine\""));
  EXPECT_EQ(run({"tenant", "move", "acme"}), 2);
  EXPECT_THAT(err(), HasSubstr("TENANT needs --to NAME"));
  EXPECT_EQ(run({"tenant", "move"}), 2);
  EXPECT_THAT(err(), HasSubstr("or --resume to end interrupted moves"));
  EXPECT_EQ(run({"tenant", "move", "--to", "two", "--resume"}), 2);
  EXPECT_THAT(err(), HasSubstr("--to needs a TENANT"));
  EXPECT_NE(run({"tenant", "move", "acme", "--to", "two", "--lock-timeout", "0s"}), 0);
  EXPECT_THAT(err(), HasSubstr("--lock-timeout"));
  EXPECT_EQ(run({"tenant", "move", "acme", "--to", "two", "--lock-timeout", "11m"}), 2);
  EXPECT_THAT(err(), HasSubstr("--lock-timeout: must be at most 10min"));
  EXPECT_NE(run({"tenant", "move", "acme", "--to", "two", "--batch-items", "0"}), 0);
  EXPECT_THAT(err(), HasSubstr("--batch-items"));
  EXPECT_EQ(run({"tenant", "move", "@local:maintenance", "--to", "two"}), 2);
}

TEST_F(PlacementCommandsTest, AMoveThatCannotGetTheTenantsLockSaysWhichAndChangesNothing) {
  register_and_place("acme", "one");
  auto conn = connect();
  enqueue_committed(*conn, make_item("acme"));
  auto holder = connect();
  pqxx::work holding(*holder);  // a visit holding the zone's pointer
  holding.exec("SELECT 1 FROM quick.pointers WHERE tenant = 'acme' FOR UPDATE");

  EXPECT_EQ(run({"tenant", "move", "acme", "--to", "two", "--lock-timeout", "100ms"}), 1);
  EXPECT_THAT(err(), HasSubstr("gave up after --lock-timeout 100ms waiting for the lock on the tenant's zone"));
  EXPECT_THAT(err(), HasSubstr("in the source database"));
  EXPECT_THAT(err(), HasSubstr("give a larger --lock-timeout"));
  holding.abort();

  pqxx::connection destination(two_->url());
  pqxx::work moving(destination);  // another move of the tenant, into the destination
  moving.exec("SELECT pg_advisory_xact_lock(quick.tenant_lock_key('acme'))");
  EXPECT_EQ(run({"tenant", "move", "acme", "--to", "two", "--lock-timeout", "100ms"}), 1);
  EXPECT_THAT(err(), HasSubstr("waiting for the tenant's move lock"));
  EXPECT_THAT(err(), HasSubstr("in the destination database two"));
  moving.abort();
  EXPECT_EQ(count_at(url(), "quick.items WHERE tenant = 'acme'"), 1);
  EXPECT_EQ(count_at(url(), "quick.moved_tenants"), 0);
  EXPECT_EQ(query_value<std::string>("SELECT quick.tenant_database('acme')"), "one");
  EXPECT_EQ(prepared_moves(), 0);
}

TEST_F(PlacementCommandsTest, ResumeRollsBackWhatAnInterruptedMoveLeftThenMoves) {
  register_and_place("acme", "one");
  auto conn = connect();
  enqueue_committed(*conn, make_item("acme", "mail", R"({"n": 1})"));
  enqueue_committed(*conn, make_item("acme", "mail", R"({"n": 2})"));
  const std::string move_id = leave_prepared_move_out("acme");
  ASSERT_EQ(prepared_moves(), 1);

  EXPECT_EQ(run({"tenant", "move", "--resume"}), 0) << err();
  EXPECT_EQ(out(), "ended quick_move:" + move_id + ":source in database one: abort (rolled back)\n");
  EXPECT_EQ(prepared_moves(), 0);
  EXPECT_EQ(count_at(url(), "quick.items WHERE tenant = 'acme'"), 2) << "the items are intact at the source";
  EXPECT_EQ(count_at(url(), "quick.moved_tenants"), 0) << "no fence";
  EXPECT_EQ(query_value<std::string>("SELECT decision || '/' || (finished_at IS NOT NULL) FROM quick.tenant_moves "
                                     "WHERE move_id = '" +
                                     move_id + "'"),
            "abort/true");
  EXPECT_EQ(query_value<std::string>("SELECT quick.tenant_database('acme')"), "one");
  enqueue_committed(*conn, make_item("acme", "mail", R"({"n": 3})"));  // not fenced

  EXPECT_EQ(run({"tenant", "move", "acme", "--to", "two", "--resume"}), 0) << err();
  EXPECT_THAT(out(), HasSubstr("no interrupted moves"));
  EXPECT_THAT(out(), HasSubstr("tenant acme moved from one to two: 3 items, 0 dead items"));
  EXPECT_EQ(count_at(two_->url(), "quick.items WHERE tenant = 'acme'"), 3);
}

TEST_F(PlacementCommandsTest, RebalanceMovesTenantsRoundRobinAndReportsTheOnesItCannot) {
  three_ = std::make_unique<MigratedDatabase>();
  write_config("consumer.yaml", {{"one", url()}, {"two", two_->url()}, {"three", three_->url()}});
  ASSERT_EQ(run({"tenant", "databases", "--register"}), 0) << err();
  auto conn = connect();
  for (const std::string tenant : {"t1", "t2", "t3", "t4"}) {
    query("SELECT quick.place_tenant('" + tenant + "', 'one')");
    enqueue_committed(*conn, make_item(tenant));
  }
  enqueue_committed(*conn, make_item("t3"));
  enqueue_committed(*conn, make_item("@local:maintenance"));

  EXPECT_EQ(run({"tenant", "rebalance", "--from", "one", "--to", "two,one"}), 2);
  EXPECT_THAT(err(), HasSubstr("--to: database one is --from too"));
  EXPECT_EQ(run({"tenant", "rebalance", "--from", "one", "--to", "two,three", "--max-tenants", "3"}), 0) << err();
  EXPECT_THAT(out(), HasSubstr("t1 -> two: 1 items, 0 dead items in "));
  EXPECT_THAT(out(), HasSubstr("t2 -> three: 1 items, 0 dead items in "));
  EXPECT_THAT(out(), HasSubstr("t3 -> two: 2 items, 0 dead items in "));
  EXPECT_THAT(out(), Not(HasSubstr("t4")));
  EXPECT_THAT(out(), HasSubstr("moved 3 of 3 tenants from one (4 items, 0 dead items); 0 failed"));
  EXPECT_EQ(count_at(two_->url(), "quick.items WHERE tenant IN ('t1', 't3')"), 3);
  EXPECT_EQ(count_at(three_->url(), "quick.items WHERE tenant = 't2'"), 1);
  EXPECT_EQ(query_value<std::string>("SELECT string_agg(tenant, ' ' ORDER BY tenant) FROM quick.items"),
            "@local:maintenance t4")
      << "local zones are never moved";

  // A zone whose tenant the directory places elsewhere is not moved; the others are.
  enqueue_committed(*conn, make_item("t5"));
  query("SELECT quick.place_tenant('t4', 'two')");
  query("SELECT quick.place_tenant('t5', 'one')");
  EXPECT_EQ(run({"tenant", "rebalance", "--from", "one", "--to", "three"}), 1);
  EXPECT_THAT(out(), HasSubstr("t4: skipped: the directory places it in database two, not in one"));
  EXPECT_THAT(out(), HasSubstr("t5 -> three: 1 items"));
  EXPECT_THAT(out(), HasSubstr("moved 1 of 2 tenants from one (1 items, 0 dead items); 1 failed"));
  EXPECT_EQ(count_at(url(), "quick.items WHERE tenant = 't4'"), 1);

  EXPECT_EQ(run({"tenant", "rebalance", "--from", "two", "--to", "three", "--max-tenants", "1"}), 0) << err();
  EXPECT_THAT(out(), HasSubstr("moved 1 of 1 tenants from two"));
}

TEST_F(PlacementCommandsTest, DoctorEndsLeftoverMovesAndReportsProblems) {
  EXPECT_EQ(run({"doctor"}), 1);
  EXPECT_THAT(out(), HasSubstr("PROBLEM: the placement directory in database one has no databases registered"));

  register_and_place("acme", "one");
  EXPECT_EQ(run({"doctor"}), 0) << out() << err();
  EXPECT_THAT(out(), HasSubstr("database one: ok (max_prepared_transactions = "));
  EXPECT_THAT(out(), HasSubstr("database two: ok"));
  EXPECT_THAT(out(), HasSubstr("interrupted moves: none"));
  EXPECT_THAT(out(), HasSubstr("\nhealthy\n"));

  auto conn = connect();
  enqueue_committed(*conn, make_item("acme"));
  const std::string move_id = leave_prepared_move_out("acme");
  EXPECT_EQ(run({"doctor"}), 0) << out() << err();
  EXPECT_THAT(out(), HasSubstr("interrupted moves: 1 ended"));
  EXPECT_THAT(out(), HasSubstr("ended quick_move:" + move_id + ":source in database one: abort (rolled back)"));
  EXPECT_THAT(out(), HasSubstr("\nhealthy\n"));
  EXPECT_EQ(prepared_moves(), 0);
  EXPECT_EQ(count_at(url(), "quick.items WHERE tenant = 'acme'"), 1);

  // A move recorded but never prepared, and one aborted before it finished.
  const auto undecided = query_value<std::string>("SELECT gen_random_uuid()::text");
  query("SELECT quick.begin_move('" + undecided + "', 'acme', 'one', 'two')");
  const auto aborted = query_value<std::string>("SELECT gen_random_uuid()::text");
  query("SELECT quick.begin_move('" + aborted + "', 'beta', 'one', 'two')");
  query("SELECT quick.decide_move('" + aborted + "', 'abort', 'mover')");
  // No mover holds the undecided one (its liveness lock is free): recovery aborts it.
  EXPECT_EQ(run({"doctor"}), 0) << out() << err();
  EXPECT_THAT(out(), HasSubstr("move " + aborted + " of tenant beta (abort): nothing left prepared; marked finished"));
  EXPECT_THAT(out(), HasSubstr("\nhealthy\n"));
  EXPECT_EQ(query_value<std::string>("SELECT decision || ' by ' || decided_by || ', ' || (finished_at IS NOT NULL) "
                                     "FROM quick.tenant_moves WHERE move_id = '" +
                                     undecided + "'"),
            "abort by recovery, true");
  EXPECT_EQ(
      query_value<bool>("SELECT finished_at IS NOT NULL FROM quick.tenant_moves WHERE move_id = '" + aborted + "'"),
      true);
}

}  // namespace
}  // namespace quick
