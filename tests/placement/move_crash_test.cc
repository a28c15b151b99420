// A mover killed after each step of a move (the process exits on the spot, as kill -9 would make
// it: no clean-up runs), then recovery and the same move again: the move ends exactly once,
// committed or undone, with every item in one database, once (docs/scaling.md#crash-safety).
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "quick/placement.h"
#include "quick/producer.h"
#include "support/items.h"
#include "support/placement_fixture.h"

namespace quick::testing {
namespace {

class MoveCrashTest : public TwoDatabaseTest, public ::testing::WithParamInterface<MoveStep> {
 protected:
  // Runs the move in a child process that exits at once after `step`.
  void move_and_die_after(const std::string& tenant, const std::string& to, MoveStep step) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      try {
        move_tenant(config_, tenant, to, {}, {}, [step](MoveStep done) {
          if (done == step) ::_exit(42);
        });
      } catch (...) {
        ::_exit(1);
      }
      ::_exit(0);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_EQ(WEXITSTATUS(status), 42) << "the mover did not reach step " << to_string(step);
  }

  std::vector<std::string> payloads_in(const std::string& database, const std::string& tenant) const {
    pqxx::connection conn(url_of(database));
    pqxx::nontransaction session(conn);
    std::vector<std::string> payloads;
    for (const auto& row :
         session.exec_params("SELECT payload::text FROM quick.items WHERE tenant = $1 ORDER BY 1", tenant)) {
      payloads.push_back(row[0].as<std::string>());
    }
    return payloads;
  }
};

TEST_P(MoveCrashTest, RecoveryEndsTheMoveAsDecidedAndTheMoveRunAgainCompletesIt) {
  const MoveStep step = GetParam();
  std::vector<std::string> payloads;
  {
    pqxx::connection conn(url());
    for (int i = 0; i < 7; ++i) {
      payloads.push_back("{\"i\": " + std::to_string(i) + "}");
      enqueue(conn, make_item("acme", "job", payloads.back()));
    }
  }
  std::sort(payloads.begin(), payloads.end());

  move_and_die_after("acme", "two", step);

  const bool decided = step >= MoveStep::kDecided;
  const auto resolved = resolve_moves(config_);
  for (const auto& move : resolved) EXPECT_EQ(move.decision, decided ? "commit" : "abort") << move.gid;
  EXPECT_EQ(prepared_moves("one") + prepared_moves("two"), 0);
  EXPECT_EQ(value_in("one", "SELECT count(*) FROM quick.tenant_moves WHERE decision IS NULL OR finished_at IS NULL"), 0)
      << "every move in the directory is decided and finished";
  const std::string holder = decided ? "two" : "one";
  const std::string other = decided ? "one" : "two";
  EXPECT_EQ(payloads_in(holder, "acme"), payloads) << "after recovery, every item is in " << holder << ", once";
  EXPECT_TRUE(payloads_in(other, "acme").empty());
  EXPECT_EQ(Router(config_).database_for("acme"), holder);
  // Enqueues work where the tenant is, and are refused where it is not.
  {
    pqxx::connection conn(url_of(holder));
    EXPECT_GT(enqueue(conn, make_item("acme", "job", "{\"after\": 1}")).item_id, 0);
  }
  payloads.push_back("{\"after\": 1}");
  std::sort(payloads.begin(), payloads.end());

  // "Run the command again": the move completes, or finds it done.
  const auto again = move_tenant(config_, "acme", "two");
  EXPECT_EQ(again.already_there, decided);
  EXPECT_EQ(payloads_in("two", "acme"), payloads);
  EXPECT_TRUE(payloads_in("one", "acme").empty());
  EXPECT_EQ(orphaned_zones("one") + orphaned_zones("two"), 0);
  EXPECT_EQ(prepared_moves("one") + prepared_moves("two"), 0);
}

// Without a separate recovery run: the next move of any tenant resolves what was left first.
TEST_P(MoveCrashTest, TheNextMoveResolvesWhatAnInterruptedOneLeft) {
  const MoveStep step = GetParam();
  {
    pqxx::connection conn(url());
    for (int i = 0; i < 3; ++i) enqueue(conn, make_item("acme"));
    enqueue(conn, make_item("bravo"));
  }
  move_and_die_after("acme", "two", step);
  move_tenant(config_, "bravo", "two");
  EXPECT_EQ(prepared_moves("one") + prepared_moves("two"), 0);
  EXPECT_EQ(items_of("one", "acme") + items_of("two", "acme"), 3);
  EXPECT_EQ(items_of("two", "bravo"), 1);
}

std::string step_name(const ::testing::TestParamInfo<MoveStep>& info) {
  std::string name;
  bool upper = true;
  for (const char c : std::string(to_string(info.param))) {
    if (c == '-') {
      upper = true;
      continue;
    }
    name += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    upper = false;
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(AfterEachStep, MoveCrashTest,
                         ::testing::Values(MoveStep::kLocked, MoveStep::kCopied, MoveStep::kDestinationPrepared,
                                           MoveStep::kSourcePrepared, MoveStep::kDecided,
                                           MoveStep::kDestinationCommitted),
                         step_name);

}  // namespace
}  // namespace quick::testing
