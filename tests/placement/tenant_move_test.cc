// Moving a tenant between two databases: what arrives, the fence left behind, the directory, and
// the enqueues that race with a move (docs/scaling.md).
#include <future>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "quick/placement.h"
#include "quick/producer.h"
#include "support/items.h"
#include "support/placement_fixture.h"

namespace quick::testing {
namespace {

class TenantMoveTest : public TwoDatabaseTest {
 protected:
  // Everything an item is, but its id, in zone order.
  std::vector<std::string> zone_rows(const std::string& database, const std::string& tenant) const {
    pqxx::connection conn(url_of(database));
    pqxx::nontransaction session(conn);
    std::vector<std::string> rows;
    for (const auto& row : session.exec_params(
             "SELECT concat_ws('|', job_type, priority, vesting_time, lease_id, error_count, payload::text, "
             "enqueued_at, client_item_id, last_error) FROM quick.items WHERE tenant = $1 "
             "ORDER BY priority, vesting_time, payload::text",
             tenant)) {
      rows.push_back(row[0].as<std::string>());
    }
    return rows;
  }
  std::vector<std::string> dead_rows(const std::string& database, const std::string& tenant) const {
    pqxx::connection conn(url_of(database));
    pqxx::nontransaction session(conn);
    std::vector<std::string> rows;
    for (const auto& row : session.exec_params(
             "SELECT concat_ws('|', job_type, priority, error_count, payload::text, enqueued_at, client_item_id, "
             "last_error, died_at, reason) FROM quick.dead_items WHERE tenant = $1 ORDER BY payload::text",
             tenant)) {
      rows.push_back(row[0].as<std::string>());
    }
    return rows;
  }
  std::int64_t enqueue_at(const std::string& database, const NewItem& item) {
    pqxx::connection conn(url_of(database));
    return enqueue(conn, item).item_id;
  }
};

TEST_F(TenantMoveTest, EveryItemArrivesWithWhatItHadAndTheSourceIsEmptyAndFenced) {
  {
    pqxx::connection conn(url());
    pqxx::work txn(conn);
    auto urgent = make_item("acme", "mail", R"({"n": 1})");
    urgent.priority = -5;
    urgent.client_item_id = "invoice-1";
    enqueue_in(txn, urgent);
    auto later = make_item("acme", "report", R"({"n": 2})");
    later.vesting_delay = std::chrono::hours(1);
    enqueue_in(txn, later);
    enqueue_in(txn, make_item("acme", "mail", R"({"n": 3})"));
    const auto dead = enqueue_in(txn, make_item("acme", "mail", R"({"n": 4})")).item_id;
    enqueue_in(txn, make_item("other", "mail", R"({"n": 5})"));
    txn.exec_params("SELECT quick.cancel_item($1)", dead);
    txn.exec("UPDATE quick.items SET error_count = 3, last_error = 'boom' WHERE payload = '{\"n\": 3}'");
    txn.exec("SELECT quick.pause_tenant('acme', 'maintenance')");
    txn.commit();
  }
  {
    // One item leased by a consumer: it moves with its lease (vesting time and lease id).
    pqxx::connection conn(url());
    pqxx::work txn(conn);
    txn.exec("SELECT * FROM quick.dequeue('acme', 1, '1 minute')");
    txn.commit();
  }
  const auto before = zone_rows("one", "acme");
  const auto dead_before = dead_rows("one", "acme");
  ASSERT_EQ(before.size(), 3u);
  ASSERT_EQ(dead_before.size(), 1u);

  const auto result = move_tenant(config_, "acme", "two");

  EXPECT_EQ(result.from_database, "one");
  EXPECT_EQ(result.to_database, "two");
  EXPECT_EQ(result.items, 3);
  EXPECT_EQ(result.dead_items, 1);
  EXPECT_FALSE(result.already_there);
  EXPECT_EQ(zone_rows("two", "acme"), before);
  EXPECT_EQ(dead_rows("two", "acme"), dead_before);
  EXPECT_EQ(items_of("one", "acme"), 0);
  EXPECT_EQ(items_of("one", "other"), 1) << "only the moved tenant leaves";
  EXPECT_EQ(value_in("one", "SELECT count(*) FROM quick.pointers WHERE tenant = 'acme'"), 0);
  EXPECT_EQ(value_in("one", "SELECT count(*) FROM quick.dead_items WHERE tenant = 'acme'"), 0);
  EXPECT_EQ(value_in("one", "SELECT count(*) FROM quick.paused_tenants WHERE tenant = 'acme'"), 0);
  EXPECT_EQ(value_in("two", "SELECT count(*) FROM quick.paused_tenants WHERE tenant = 'acme'"), 1);
  // The destination's pointer is vested: the zone's earliest item vested before the move, so it
  // vests at the move, not at that item's time, which lies below the Scanner's floors.
  EXPECT_EQ(value_in("two",
                     "SELECT count(*) FROM quick.pointers p WHERE p.tenant = 'acme' AND p.vesting_time <= now() "
                     "AND p.vesting_time > (SELECT min(vesting_time) FROM quick.items WHERE tenant = 'acme')"),
            1);
  EXPECT_EQ(value_in("one", "SELECT count(*) FROM quick.moved_tenants WHERE tenant = 'acme' AND moved_to = 'two'"), 1);
  EXPECT_EQ(value_in("one",
                     "SELECT count(*) FROM quick.tenant_moves WHERE tenant = 'acme' AND decision = 'commit' "
                     "AND finished_at IS NOT NULL AND items = 3"),
            1);
  EXPECT_EQ(value_in("one",
                     "SELECT count(*) FROM quick.tenant_placements WHERE tenant = 'acme' AND "
                     "database_name = 'two'"),
            1);
  EXPECT_EQ(prepared_moves("one") + prepared_moves("two"), 0);
  EXPECT_EQ(orphaned_zones("one") + orphaned_zones("two"), 0);
}

// A zone whose earliest item vests later than the move: its pointer vests with that item, not now.
TEST_F(TenantMoveTest, AZoneThatVestsLaterKeepsItsEarliestItemsTime) {
  auto later = make_item("dawn", "report", R"({"n": 1})");
  later.vesting_delay = std::chrono::hours(1);
  enqueue_at("one", later);
  move_tenant(config_, "dawn", "two");
  EXPECT_EQ(value_in("two",
                     "SELECT count(*) FROM quick.pointers p WHERE p.tenant = 'dawn' AND p.vesting_time = "
                     "(SELECT min(vesting_time) FROM quick.items WHERE tenant = 'dawn') AND p.vesting_time > now()"),
            1);
}

TEST_F(TenantMoveTest, EveryEnqueuePathAtTheOldDatabaseIsRefusedNamingWhereTheTenantWent) {
  enqueue_at("one", make_item("acme"));
  move_tenant(config_, "acme", "two");

  pqxx::connection conn(url());
  const auto expect_moved = [](const std::function<void()>& enqueue_call, const std::string& path) {
    try {
      enqueue_call();
      ADD_FAILURE() << path << " enqueued into the old database";
    } catch (const TenantMoved& moved) {
      EXPECT_EQ(moved.tenant(), "acme") << path;
      EXPECT_EQ(moved.moved_to(), "two") << path;
      EXPECT_THAT(moved.what(), ::testing::HasSubstr("it moved to database \"two\"")) << path;
    }
  };
  expect_moved([&] { enqueue(conn, make_item("acme")); }, "one-call enqueue");
  expect_moved([&] { enqueue_batch(conn, {make_item("acme"), make_item("b")}); }, "one-call batch");
  expect_moved(
      [&] {
        pqxx::work txn(conn);
        enqueue_in(txn, make_item("acme"));
      },
      "enqueue_in");
  expect_moved(
      [&] {
        pqxx::work txn(conn);
        enqueue_batch_in(txn, {make_item("b"), make_item("acme")});
      },
      "enqueue_batch_in");
  {
    pqxx::nontransaction session(conn);
    try {
      session.exec("SELECT * FROM quick.enqueue('acme', 'job')");
      ADD_FAILURE() << "quick.enqueue enqueued into the old database";
    } catch (const pqxx::sql_error& error) {
      EXPECT_EQ(error.sqlstate(), "QM001");
    }
  }
  EXPECT_EQ(items_of("one", "acme"), 0);
  EXPECT_EQ(items_of("one", "b"), 0) << "a refused batch writes nothing";
  EXPECT_EQ(enqueue_at("two", make_item("acme")) > 0, true);
}

TEST_F(TenantMoveTest, ATenantMovesBackAndForthAndTheFenceFollowsIt) {
  for (int i = 0; i < 5; ++i) enqueue_at("one", make_item("acme", "job", "{\"i\": " + std::to_string(i) + "}"));
  const auto before = zone_rows("one", "acme");
  EXPECT_EQ(move_tenant(config_, "acme", "two").items, 5);
  EXPECT_EQ(move_tenant(config_, "acme", "one").items, 5);
  EXPECT_EQ(zone_rows("one", "acme"), before);
  EXPECT_EQ(value_in("one", "SELECT count(*) FROM quick.moved_tenants"), 0);
  EXPECT_EQ(value_in("two", "SELECT count(*) FROM quick.moved_tenants WHERE moved_to = 'one'"), 1);
  EXPECT_GT(enqueue_at("one", make_item("acme")), 0);
  EXPECT_THROW(enqueue_at("two", make_item("acme")), TenantMoved);
  EXPECT_TRUE(move_tenant(config_, "acme", "one").already_there);
  EXPECT_EQ(orphaned_zones("one") + orphaned_zones("two"), 0);
}

TEST_F(TenantMoveTest, TheRouterSendsWorkWhereTheTenantIsNowEvenWithAStaleCache) {
  auto config = config_;
  config.route_cache_ttl = std::chrono::hours(1);
  Router router(config);
  EXPECT_EQ(router.database_for("acme"), "one");
  router.enqueue(make_item("acme"));
  EXPECT_EQ(items_of("one", "acme"), 1);

  move_tenant(config_, "acme", "two");
  router.enqueue(make_item("acme"));  // the cache still says "one", which refuses it
  EXPECT_EQ(items_of("two", "acme"), 2);
  EXPECT_EQ(router.database_for("acme"), "two");

  move_tenant(config_, "acme", "one");
  int runs = 0;
  router.in_tenant_transaction("acme", [&](pqxx::work& txn) {
    ++runs;
    enqueue_in(txn, make_item("acme"));
  });
  EXPECT_EQ(runs, 2) << "first at two, which refused it, then at one";
  EXPECT_EQ(items_of("one", "acme"), 3);
  EXPECT_EQ(items_of("two", "acme"), 0);
}

// A move holds the tenant's pointer; an enqueue into the zone waits for it and, once the move
// commits, is refused: it never lands in the old database.
TEST_F(TenantMoveTest, AnEnqueueThatWaitedForTheMoveIsRefusedWhenTheMoveCommits) {
  for (const std::string tenant : {"full", "empty"}) {
    SCOPED_TRACE(tenant);
    if (tenant == "full") enqueue_at("one", make_item(tenant));
    std::promise<void> copied;
    std::promise<void> go_on;
    auto go_on_future = go_on.get_future().share();
    auto mover = std::async(std::launch::async, [&] {
      return move_tenant(config_, tenant, "two", {}, {}, [&](MoveStep step) {
        if (step == MoveStep::kCopied) {
          copied.set_value();
          go_on_future.wait();
        }
      });
    });
    ASSERT_EQ(copied.get_future().wait_for(std::chrono::seconds(30)), std::future_status::ready)
        << "the move never copied: " << (go_on.set_value(), "see its error below");
    pqxx::connection producer(url());
    const int pid = producer.backendpid();
    auto enqueued = std::async(std::launch::async, [&] {
      pqxx::work txn(producer);
      enqueue_in(txn, make_item(tenant));
      txn.commit();
    });
    pqxx::connection observer(url());
    wait_until_blocked_on_lock(observer, pid);
    go_on.set_value();
    EXPECT_EQ(mover.get().to_database, "two");
    EXPECT_THROW(enqueued.get(), TenantMoved);
    EXPECT_EQ(items_of("one", tenant), 0);
    EXPECT_EQ(items_of("two", tenant), tenant == "full" ? 1 : 0);
  }
}

// A producer's transaction that holds the tenant makes the move wait; past lock_timeout the move
// gives up and nothing changes; once the producer commits, the move takes its item along.
TEST_F(TenantMoveTest, AMoveWaitsForAnOpenProducerTransactionAtMostLockTimeoutAndChangesNothing) {
  enqueue_at("one", make_item("acme"));
  pqxx::connection producer(url());
  pqxx::work open(producer);
  enqueue_in(open, make_item("acme"));

  MoveOptions options;
  options.lock_timeout = std::chrono::milliseconds(200);
  try {
    move_tenant(config_, "acme", "two", options);
    ADD_FAILURE() << "the move did not wait for the open transaction";
  } catch (const pqxx::sql_error& error) {
    EXPECT_EQ(error.sqlstate(), "55P03") << error.what();
  }
  EXPECT_EQ(items_of("one", "acme"), 1);
  EXPECT_EQ(items_of("two", "acme"), 0);
  EXPECT_EQ(value_in("one", "SELECT count(*) FROM quick.moved_tenants"), 0);
  EXPECT_EQ(prepared_moves("one") + prepared_moves("two"), 0);

  open.commit();
  EXPECT_EQ(move_tenant(config_, "acme", "two").items, 2);
}

// A REPEATABLE READ (or SERIALIZABLE) producer whose snapshot predates a move cannot read the
// fence: the guard row, or the deleted pointer, makes it fail with a serialization failure.
TEST_F(TenantMoveTest, AnOlderRepeatableReadSnapshotCannotEnqueueIntoTheOldDatabase) {
  enqueue_at("one", make_item("full"));
  for (const std::string tenant : {"full", "empty"}) {
    SCOPED_TRACE(tenant);
    pqxx::connection producer(url());
    pqxx::work txn(producer);
    txn.exec("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
    txn.exec("SELECT 1 FROM quick.items LIMIT 1");  // takes the snapshot
    move_tenant(config_, tenant, "two");
    EXPECT_THROW(enqueue_in(txn, make_item(tenant)), pqxx::serialization_failure);
  }
  EXPECT_EQ(items_of("one", "full") + items_of("one", "empty"), 0);
}

// A pause or resume of a tenant that is being moved waits for the move (which carries the pause
// over as it read it when it locked the tenant), and once the move has committed it is refused
// where the tenant was, naming where it went: never applied at the source only to be deleted by
// the move, nor lost at the destination.
TEST_F(TenantMoveTest, APauseOrResumeDuringAMoveWaitsForItAndIsThenRefusedNamingWhereTheTenantWent) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"pz", "SELECT quick.pause_tenant('pz', 'incident')"},
      {"rz", "SELECT quick.resume_tenant('rz')"},
  };
  {
    pqxx::connection conn(url_of("one"));
    pqxx::nontransaction session(conn);
    session.exec("SELECT quick.pause_tenant('rz', 'maintenance')");
  }
  for (const auto& [tenant, call] : cases) {
    SCOPED_TRACE(call);
    enqueue_at("one", make_item(tenant));
    std::promise<void> locked;
    std::promise<void> go_on;
    auto go_on_future = go_on.get_future().share();
    auto mover = std::async(std::launch::async, [&, tenant = tenant] {
      return move_tenant(config_, tenant, "two", {}, {}, [&](MoveStep step) {
        if (step == MoveStep::kLocked) {
          locked.set_value();
          go_on_future.wait();
        }
      });
    });
    ASSERT_EQ(locked.get_future().wait_for(std::chrono::seconds(30)), std::future_status::ready)
        << "the move never locked: " << (go_on.set_value(), "see its error below");
    pqxx::connection admin(url_of("one"));
    const int pid = admin.backendpid();
    auto paused = std::async(std::launch::async, [&, call = call] {
      pqxx::nontransaction session(admin);
      return session.exec(call).at(0).at(0).as<bool>();
    });
    pqxx::connection observer(url_of("one"));
    bool waited = true;
    try {
      wait_until_blocked_on_lock(observer, pid);
    } catch (const std::exception&) {
      waited = false;
    }
    go_on.set_value();
    EXPECT_TRUE(waited) << "it did not wait for the move";
    EXPECT_EQ(mover.get().to_database, "two");
    try {
      paused.get();
      ADD_FAILURE() << "it went through at the database the tenant left";
    } catch (const pqxx::sql_error& error) {
      EXPECT_EQ(error.sqlstate(), "QM001") << error.what();
      EXPECT_THAT(error.what(), ::testing::HasSubstr("it moved to database \"two\""));
    }
  }
  EXPECT_EQ(value_in("one", "SELECT count(*) FROM quick.paused_tenants"), 0);
  EXPECT_EQ(value_in("two", "SELECT count(*) FROM quick.paused_tenants WHERE tenant = 'pz'"), 0);
  EXPECT_EQ(value_in("two", "SELECT count(*) FROM quick.paused_tenants WHERE tenant = 'rz'"), 1);
}

// The move functions run in READ COMMITTED only, as TenantMove does: at a snapshot isolation
// level, the statements after the tenant's locks would not see an item that an enqueuer the locks
// waited for committed, and the move would leave it behind, orphaned (no pointer, no fence).
// Each function refuses for a client that calls it itself, and changes nothing.
TEST_F(TenantMoveTest, EveryMoveFunctionRefusesToRunOutsideReadCommitted) {
  enqueue_at("one", make_item("acme"));
  const std::vector<std::string> calls = {
      "SELECT * FROM quick.move_out_begin('acme', 'two', gen_random_uuid())",
      "SELECT * FROM quick.move_out_ids('acme', false)",
      "SELECT quick.move_out_items('acme', '{}')",
      "SELECT quick.move_out_dead_items('acme', '{}')",
      "SELECT * FROM quick.move_out_finish('acme', gen_random_uuid())",
      "SELECT quick.move_in_begin('acme', 'two', gen_random_uuid())",
      "SELECT quick.move_in_items('acme', '[]')",
      "SELECT quick.move_in_dead_items('acme', '[]')",
      "SELECT quick.move_in_finish('acme', false)",
  };
  for (const std::string level : {"REPEATABLE READ", "SERIALIZABLE"}) {
    for (const auto& call : calls) {
      SCOPED_TRACE(level + ": " + call);
      pqxx::connection conn(url_of("one"));
      pqxx::work txn(conn);
      txn.exec("SET TRANSACTION ISOLATION LEVEL " + level);
      try {
        txn.exec(call);
        ADD_FAILURE() << "ran at " << level;
      } catch (const pqxx::sql_error& error) {
        EXPECT_EQ(error.sqlstate(), "25000") << error.what();
        EXPECT_THAT(error.what(), ::testing::HasSubstr("must run in READ COMMITTED"));
      }
    }
  }
  EXPECT_EQ(items_of("one", "acme"), 1);
  EXPECT_EQ(value_in("one", "SELECT count(*) FROM quick.pointers WHERE tenant = 'acme'"), 1);
  EXPECT_EQ(value_in("one", "SELECT count(*) FROM quick.moved_tenants"), 0);
}

// Recovery leaves a live mover's prepared transactions alone: it would otherwise abort every
// move that another process (a second operator, a rebalance) is committing.
TEST_F(TenantMoveTest, RecoveryDoesNotInterruptAMoverThatIsStillRunning) {
  enqueue_at("one", make_item("acme"));
  PausedMover mover(config_, "acme", "two", MoveStep::kSourcePrepared);
  const bool reached = mover.reached();
  const auto resolved = reached ? resolve_moves(config_) : std::vector<ResolvedMove>{};
  const auto result = mover.finish();
  ASSERT_TRUE(reached);
  EXPECT_TRUE(resolved.empty()) << resolved.size() << " prepared transactions of a live mover were ended";
  EXPECT_EQ(result.items, 1);
  EXPECT_EQ(items_of("two", "acme"), 1);
  EXPECT_EQ(prepared_moves("one") + prepared_moves("two"), 0);
}

TEST_F(TenantMoveTest, LocalZonesHaveNoPlacementAndAreNeverMoved) {
  const std::string local = local_tenant("maintenance");
  EXPECT_EQ(local, "@local:maintenance");
  EXPECT_TRUE(is_local_tenant(local));
  EXPECT_GT(enqueue_at("two", make_item(local)), 0);
  EXPECT_THROW(move_tenant(config_, local, "one"), InvalidArgument);
  Router router(config_);
  EXPECT_THROW(router.database_for(local), InvalidArgument);
  pqxx::connection conn(url_of("two"));
  pqxx::work txn(conn);
  EXPECT_THROW(txn.exec("SELECT * FROM quick.move_out_begin('@local:maintenance', 'one', gen_random_uuid())"),
               pqxx::sql_error);
}

TEST_F(TenantMoveTest, TheDefaultRuleSpreadsUnplacedTenantsOverItsDatabasesStably) {
  {
    pqxx::connection conn(url());
    pqxx::nontransaction session(conn);
    session.exec("UPDATE quick.placement_databases SET in_default_rule = true");
  }
  Router router(config_);
  std::map<std::string, int> counts;
  for (int i = 0; i < 200; ++i) ++counts[router.database_for("t" + std::to_string(i))];
  EXPECT_GT(counts["one"], 60);
  EXPECT_GT(counts["two"], 60);
  Router again(config_);
  for (int i = 0; i < 200; ++i) {
    EXPECT_EQ(again.database_for("t" + std::to_string(i)), router.database_for("t" + std::to_string(i)));
  }
}

}  // namespace
}  // namespace quick::testing
