// Either database restarted (crashed: immediate mode) in the middle of a move, each a cluster of
// its own: prepared transactions survive the restart, and recovery (here: the same move run
// again) ends the move as its decision says, with every item in one database, once.
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "quick/placement.h"
#include "quick/producer.h"
#include "support/items.h"
#include "support/own_cluster.h"

namespace quick::testing {
namespace {

long long items_at(const std::string& url, const std::string& tenant) {
  pqxx::connection conn(url);
  pqxx::nontransaction session(conn);
  return session.exec_params("SELECT count(*) FROM quick.items WHERE tenant = $1", tenant).at(0).at(0).as<long long>();
}

long long prepared_at(const std::string& url) {
  pqxx::connection conn(url);
  pqxx::nontransaction session(conn);
  return session.exec("SELECT count(*) FROM pg_prepared_xacts").at(0).at(0).as<long long>();
}

// Runs the move in a child process that, after `step`, waits for the parent to kill it.
pid_t start_move_stopping_after(const PlacementConfig& config, const std::string& tenant, const std::string& to,
                                MoveStep step, int ready_pipe) {
  const pid_t child = ::fork();
  if (child != 0) return child;
  try {
    move_tenant(config, tenant, to, {}, {}, [&](MoveStep done) {
      if (done != step) return;
      const char ready = 'r';
      if (::write(ready_pipe, &ready, 1) != 1) ::_exit(2);
      ::pause();
    });
  } catch (...) {
    ::_exit(1);
  }
  ::_exit(0);
}

TEST(MoveRestartTest, ADatabaseCrashingMidMoveLeavesItsPreparedTransactionToRecovery) {
  TempDir dir;
  OwnCluster one(dir.cluster_state_dir("one"));
  OwnCluster two(dir.cluster_state_dir("two"));
  PlacementConfig config;
  config.databases = {DatabaseConfig{"one", one.url()}, DatabaseConfig{"two", two.url()}};
  config.directory = "one";
  register_placement_databases(config, {"one"});

  struct Case {
    const char* name;
    MoveStep stop_after;
    OwnCluster* crash;
    const char* expected_holder;
  };
  // Before the decision the move is undone; after it, completed.
  const Case cases[] = {
      {"destination crashes with its transaction prepared", MoveStep::kSourcePrepared, &two, "one"},
      {"source crashes with its transaction prepared", MoveStep::kSourcePrepared, &one, "one"},
      {"source crashes after the decision", MoveStep::kDecided, &one, "two"},
      {"destination crashes after the decision", MoveStep::kDecided, &two, "two"},
  };
  int round = 0;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string tenant = "tenant" + std::to_string(round++);
    {
      pqxx::connection conn(one.url());
      for (int i = 0; i < 20; ++i) enqueue(conn, make_item(tenant, "job", "{\"i\": " + std::to_string(i) + "}"));
    }
    int pipe_fds[2];
    ASSERT_EQ(::pipe(pipe_fds), 0);
    const pid_t mover = start_move_stopping_after(config, tenant, "two", c.stop_after, pipe_fds[1]);
    ASSERT_GT(mover, 0);
    char ready = 0;
    ASSERT_EQ(::read(pipe_fds[0], &ready, 1), 1) << "the mover died before the step";
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    c.crash->restart_immediately();
    ::kill(mover, SIGKILL);
    int status = 0;
    ::waitpid(mover, &status, 0);
    EXPECT_GE(prepared_at(one.url()) + prepared_at(two.url()), 1) << "prepared transactions survive a restart";

    const auto again = move_tenant(config, tenant, "two");
    EXPECT_EQ(again.already_there, std::string(c.expected_holder) == "two");
    EXPECT_EQ(items_at(two.url(), tenant), 20);
    EXPECT_EQ(items_at(one.url(), tenant), 0);
    EXPECT_EQ(prepared_at(one.url()) + prepared_at(two.url()), 0);
  }
}

}  // namespace
}  // namespace quick::testing
