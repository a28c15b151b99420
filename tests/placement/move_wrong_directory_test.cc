// Recovery run against the wrong directory (a configuration listing the databases in another
// order, a wrong --directory): every database has a quick.tenant_moves table, empty where it is not
// the directory, and the movers' liveness locks are the directory's own. Recovery must not take a
// move it finds no record of for one never begun and roll it back: that undid a decided move's
// source (its items then in both databases, its fence gone) and a live mover's transactions.
#include <future>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "quick/placement.h"
#include "quick/producer.h"
#include "support/items.h"
#include "support/placement_fixture.h"

namespace quick::testing {
namespace {

using ::testing::HasSubstr;

struct Interrupted {};

class MoveWrongDirectoryTest : public TwoDatabaseTest {
 protected:
  // The configuration a `quick doctor --config` listing [two, one] makes: database two is the directory.
  PlacementConfig wrong_directory() const {
    PlacementConfig config;
    config.databases = {config_.databases[1], config_.databases[0]};
    config.directory = "two";
    return config;
  }
  void enqueue_items(const std::string& tenant, int count) {
    pqxx::connection conn(url_of("one"));
    for (int i = 0; i < count; ++i) enqueue(conn, make_item(tenant, "job", "{\"i\": " + std::to_string(i) + "}"));
  }
  std::string prepared_gid(const std::string& database) const {
    pqxx::connection conn(url_of(database));
    pqxx::nontransaction session(conn);
    return session
        .exec("SELECT gid FROM pg_prepared_xacts WHERE database = current_database() AND gid LIKE 'quick_move:%'")
        .at(0)
        .at(0)
        .as<std::string>();
  }
};

TEST_F(MoveWrongDirectoryTest, ADecidedMoveIsLeftPreparedUntilRecoveryRunsAgainstItsDirectory) {
  enqueue_items("acme", 5);
  // The mover dies after the decision and the destination's commit: the source is still prepared.
  EXPECT_THROW(move_tenant(config_, "acme", "two", {}, {},
                           [](MoveStep step) {
                             if (step == MoveStep::kDestinationCommitted) throw Interrupted{};
                           }),
               Interrupted);
  ASSERT_EQ(prepared_moves("one"), 1);
  const std::string gid = prepared_gid("one");
  const std::string move_id = gid.substr(std::string("quick_move:").size(), 36);
  ASSERT_EQ(value_in("one", "SELECT count(*) FROM quick.tenant_moves WHERE decision = 'commit'"), 1);

  // Database two has no databases registered: it is no directory, and recovery refuses it.
  try {
    resolve_moves(wrong_directory());
    ADD_FAILURE() << "recovery ran against a directory with no databases registered";
  } catch (const InvalidArgument& error) {
    EXPECT_THAT(error.what(), HasSubstr("no databases registered"));
    EXPECT_THAT(error.what(), HasSubstr("\"two\""));
  }
  EXPECT_EQ(prepared_moves("one"), 1);

  // Even one with databases registered in it (a directory of its own) has no record of the move:
  // recovery leaves its prepared transaction alone and says so.
  register_placement_databases(wrong_directory(), {"two"});
  try {
    resolve_moves(wrong_directory());
    ADD_FAILURE() << "recovery reported nothing about a move its directory has no record of";
  } catch (const InvalidArgument&) {
    ADD_FAILURE() << "not a bad argument: the move is found and left alone";
  } catch (const Error& error) {
    EXPECT_THAT(error.what(), HasSubstr(move_id));
    EXPECT_THAT(error.what(), HasSubstr(gid + " in database one"));
    EXPECT_THAT(error.what(), HasSubstr("may be the wrong database"));
  }
  EXPECT_EQ(prepared_moves("one"), 1) << "the decided move's source was rolled back";
  EXPECT_EQ(value_in("one", "SELECT count(*) FROM quick.moved_tenants WHERE tenant = 'acme'"), 0)
      << "the fence is the prepared transaction's: not there until it commits";

  // Against the directory it was begun in, recovery commits it as decided.
  const auto resolved = resolve_moves(config_);
  ASSERT_EQ(resolved.size(), 1u);
  EXPECT_EQ(resolved[0].gid, gid);
  EXPECT_EQ(resolved[0].decision, "commit");
  EXPECT_EQ(items_of("one", "acme"), 0);
  EXPECT_EQ(items_of("two", "acme"), 5);
  EXPECT_EQ(value_in("one", "SELECT count(*) FROM quick.moved_tenants WHERE tenant = 'acme'"), 1);
  EXPECT_EQ(prepared_moves("one") + prepared_moves("two"), 0);
}

// The prepared transactions that recovery cannot end are handed back when asked for (quick doctor
// reports them), after it ended the others.
TEST_F(MoveWrongDirectoryTest, TheMovesRecoveryCannotEndAreReportedWhenAskedFor) {
  enqueue_items("acme", 2);
  EXPECT_THROW(move_tenant(config_, "acme", "two", {}, {},
                           [](MoveStep step) {
                             if (step == MoveStep::kDestinationCommitted) throw Interrupted{};
                           }),
               Interrupted);
  const std::string gid = prepared_gid("one");
  register_placement_databases(wrong_directory(), {"two"});
  std::vector<ResolvedMove> unknown;
  EXPECT_TRUE(resolve_moves(wrong_directory(), &unknown).empty());
  ASSERT_EQ(unknown.size(), 1u);
  EXPECT_EQ(unknown[0].gid, gid);
  EXPECT_EQ(unknown[0].database, "one");
  EXPECT_EQ(unknown[0].move_id, gid.substr(std::string("quick_move:").size(), 36));
  EXPECT_EQ(unknown[0].decision, "");
  EXPECT_EQ(prepared_moves("one"), 1);
  unknown.clear();
  EXPECT_EQ(resolve_moves(config_, &unknown).size(), 1u);
  EXPECT_TRUE(unknown.empty());
  EXPECT_EQ(items_of("one", "acme") + prepared_moves("one"), 0);
}

// A live mover's liveness lock is in its directory only: recovery against another database took
// its move for one never begun and rolled back both of its prepared transactions, and the mover,
// deciding "commit" afterwards, left the directory placing the tenant where its items were not.
TEST_F(MoveWrongDirectoryTest, RecoveryAgainstAnotherDatabaseDoesNotInterruptALiveMover) {
  enqueue_items("acme", 3);
  register_placement_databases(wrong_directory(), {"two"});
  PausedMover mover(config_, "acme", "two", MoveStep::kSourcePrepared);
  const bool reached = mover.reached();
  std::string reported;
  if (reached) {
    try {
      resolve_moves(wrong_directory());
    } catch (const Error& error) {
      reported = error.what();
    }
  }
  const auto result = mover.finish();
  ASSERT_TRUE(reached);
  EXPECT_THAT(reported, HasSubstr("may be the wrong database"));
  EXPECT_EQ(result.items, 3);
  EXPECT_EQ(items_of("one", "acme"), 0);
  EXPECT_EQ(items_of("two", "acme"), 3);
  EXPECT_EQ(Router(config_).database_for("acme"), "two");
  EXPECT_EQ(prepared_moves("one") + prepared_moves("two"), 0);
}

// A TenantMove given a directory connection to a database with no databases registered records
// nothing there and moves nothing: a decision there would be found by no recovery.
TEST_F(MoveWrongDirectoryTest, AMoveRefusesADirectoryWithNoDatabasesRegistered) {
  enqueue_items("acme", 2);
  pqxx::connection source_conn(url_of("one"));
  pqxx::connection destination_conn(url_of("two"));
  pqxx::connection wrong(url_of("two"));
  TenantMove move("acme", "one", "two");
  pqxx::work source(source_conn);
  pqxx::work destination(destination_conn);
  move.move_rows(source, destination);
  try {
    move.commit(source, destination, wrong);
    ADD_FAILURE() << "the move committed with its decision in database two";
  } catch (const InvalidArgument& error) {
    EXPECT_THAT(error.what(), HasSubstr("has no databases registered"));
  }
  EXPECT_EQ(value_in("two", "SELECT count(*) FROM quick.tenant_moves"), 0);
  EXPECT_EQ(value_in("two", "SELECT count(*) FROM quick.placement_databases"), 0);
  EXPECT_EQ(prepared_moves("one") + prepared_moves("two"), 0);
  EXPECT_EQ(items_of("one", "acme"), 2);
  EXPECT_EQ(items_of("two", "acme"), 0);
}

}  // namespace
}  // namespace quick::testing
