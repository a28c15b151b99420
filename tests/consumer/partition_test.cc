// Tenant partitioning between consumers (src/scanner/tenant_partition.h): the live consumers of a
// database register in quick.consumer_roles ('member:<id>'); each Scanner takes the vested
// pointers of the tenants it owns at once and other consumers' only after scanner.partition_grace,
// so consumers stop racing for the same few pointers. Real consumers, real database.
#include <gtest/gtest.h>

#include <atomic>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "quick/consumer.h"
#include "quick/quick.h"
#include "scanner/tenant_partition.h"
#include "support/consumer_helpers.h"
#include "support/eventually.h"
#include "support/processes.h"
#include "support/test_database.h"

namespace quick {
namespace {

using namespace testing;

class PartitionTest : public testing::DatabaseTest {
 protected:
  int member_rows() const {
    return query_value<int>("SELECT count(*) FROM quick.consumer_roles WHERE role LIKE 'member:%'");
  }
  // A member row for a consumer that is not running, live for an hour.
  void add_live_member(const std::string& id) const {
    query(
        "INSERT INTO quick.consumer_roles (role, holder, expires_at, acquired_at) "
        "VALUES ('member:" +
        id + "', '" + id + "', now() + interval '1 hour', now())");
  }
  bool queue_empty() const { return query_value<int>("SELECT count(*) FROM quick.items") == 0; }
};

// Which consumers ran each tenant's items.
class TenantRuns {
 public:
  void record(const std::string& tenant, const std::string& consumer) {
    std::lock_guard<std::mutex> lock(mutex_);
    consumers_[tenant].insert(consumer);
  }
  std::map<std::string, std::set<std::string>> snapshot() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return consumers_;
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::set<std::string>> consumers_;
};

std::unique_ptr<Consumer> recording_consumer(ConsumerConfig config, TenantRuns& runs) {
  const std::string id = config.consumer_id;
  auto consumer = std::make_unique<Consumer>(std::move(config));
  consumer->handle("work", [&runs, id](JobContext& job) {
    runs.record(job.item().tenant, id);
    return JobResult::done();
  });
  return consumer;
}

// Two consumers that never take each other's pointers (a grace longer than the test): every
// tenant's items run on its owner only, and no pointer lease is ever lost to the other consumer.
TEST_F(PartitionTest, EachTenantIsServedByItsOwnerAndNoLeaseIsLost) {
  const std::vector<std::string> ids{"partition-a", "partition-b"};
  TenantRuns runs;
  std::vector<std::unique_ptr<Consumer>> consumers;
  for (const auto& id : ids) {
    auto config = fast_config(url(), id);
    config.scanner.partition_grace = std::chrono::minutes(10);
    // A membership lease of 3 s, renewed every second: a Scanner stalled for up to 2 s on a busy
    // machine stays in the other's member list (else the other would serve its tenants at once).
    config.scanner.in_order_lease_duration = seconds(3);
    config.scanner.in_order_election = false;  // the in-order Scanner would take the oldest of its own only, too
    consumers.push_back(recording_consumer(config, runs));
    consumers.back()->start();
  }
  ASSERT_TRUE(eventually(
      [&] {
        for (const auto& c : consumers)
          if (c->stats().live_consumers != 2) return false;
        return true;
      },
      seconds(10)))
      << "the consumers did not see each other";
  EXPECT_EQ(member_rows(), 2);

  // Light load: a trickle of single items into 40 tenants, so both consumers peek the same few
  // vested pointers (the situation in which random selection collides).
  pqxx::connection producer(url());
  constexpr int kItems = 200, kTenants = 40;
  for (int i = 0; i < kItems; ++i) {
    pqxx::work txn(producer);
    enqueue_in(txn, NewItem{"t" + std::to_string(i % kTenants), "work", "{}", {}, 0, std::nullopt});
    txn.commit();
    if (i % 10 == 9) std::this_thread::sleep_for(milliseconds(5));
  }
  ASSERT_TRUE(eventually([&] { return queue_empty(); }, seconds(30)))
      << query_value<int>("SELECT count(*) FROM quick.items") << " items still queued";
  std::uint64_t lost = 0, left = 0, done = 0;
  for (auto& c : consumers) {
    c->stop();
    const auto stats = c->stats();
    std::cout << stats.to_string() << std::endl;
    lost += stats.pointer_leases_lost;
    left += stats.pointers_left_to_owners;
    done += stats.items_done;
    EXPECT_GT(stats.items_done, 0u) << "one consumer owned no tenant";
  }
  EXPECT_EQ(done, static_cast<std::uint64_t>(kItems));
  EXPECT_EQ(lost, 0u) << "a consumer lost a pointer lease to the other";
  EXPECT_GT(left, 0u) << "no Scanner ever saw (and left) the other consumer's pointers";
  const auto served = runs.snapshot();
  EXPECT_EQ(served.size(), static_cast<std::size_t>(kTenants));
  for (const auto& [tenant, by] : served) {
    EXPECT_EQ(by, (std::set<std::string>{scanner::owner_of(ids, tenant)})) << tenant;
  }
  consumers.clear();
  EXPECT_EQ(member_rows(), 0) << "stopped consumers must leave the group";
}

// The owner of half the tenants is dead but its membership has not run out yet: the surviving
// consumer leaves those pointers alone for partition_grace, then serves them. Nothing starves.
TEST_F(PartitionTest, TenantsOfAMemberThatStoppedScanningAreServedAfterTheGrace) {
  add_live_member("ghost");
  TenantRuns runs;
  auto config = fast_config(url(), "survivor");
  config.scanner.partition_grace = milliseconds(100);
  auto survivor = recording_consumer(config, runs);
  survivor->start();
  ASSERT_TRUE(eventually([&] { return survivor->stats().live_consumers == 2; }, seconds(10)));

  constexpr int kItems = 200, kTenants = 50;
  enqueue_items(url(), kItems, kTenants, "work", "t", 10);
  ASSERT_TRUE(eventually([&] { return queue_empty(); }, seconds(30)))
      << query_value<int>("SELECT count(*) FROM quick.items") << " items still queued: the ghost's tenants starve";
  survivor->stop();
  const auto stats = survivor->stats();
  std::cout << stats.to_string() << std::endl;
  EXPECT_EQ(stats.items_done, static_cast<std::uint64_t>(kItems));
  EXPECT_GT(stats.pointers_left_to_owners, 0u) << "the survivor never deferred to the ghost";
  int ghost_tenants = 0;
  for (int t = 0; t < kTenants; ++t) {
    if (scanner::owner_of({"ghost", "survivor"}, "t" + std::to_string(t)) == "ghost") ++ghost_tenants;
  }
  EXPECT_GT(ghost_tenants, 0);
  EXPECT_EQ(runs.snapshot().size(), static_cast<std::size_t>(kTenants));
}

// The owner of a tenant is throttled (max_in_flight 1 for the tenant's job type, its one running
// handler blocked): its visits take nothing from the zone and requeue the pointer to vest "now"
// every few milliseconds. The other consumer must still take the zone once it has seen it vested
// for the grace (VestedSince), instead of waiting for the owner to get a free slot.
TEST_F(PartitionTest, AZoneItsThrottledOwnerCannotServeGoesToAnotherConsumerAfterTheGrace) {
  const std::vector<std::string> ids{"throttled-owner", "free-consumer"};
  // enqueue_items names the zone "<prefix>0": find a prefix whose zone the throttled consumer owns.
  std::string prefix;
  for (int i = 0; prefix.empty(); ++i) {
    const std::string candidate = "zone-" + std::to_string(i) + "-";
    if (scanner::owner_of(ids, candidate + "0") == ids[0]) prefix = candidate;
  }
  std::atomic<bool> release_owner{false};
  std::atomic<int> owner_runs{0}, other_runs{0};
  auto owner_config = fast_config(url(), ids[0]);
  owner_config.scanner.partition_grace = milliseconds(100);
  JobTypeConfig throttled = owner_config.default_job_type;
  throttled.max_in_flight = 1;
  owner_config.job_types["work"] = throttled;
  Consumer owner(owner_config);
  owner.handle("work", [&](JobContext& job) {
    ++owner_runs;
    while (!release_owner.load() && !job.should_stop()) std::this_thread::sleep_for(milliseconds(5));
    return JobResult::done();
  });
  auto other_config = fast_config(url(), ids[1]);
  other_config.scanner.partition_grace = milliseconds(100);
  Consumer other(other_config);
  other.handle("work", [&](JobContext&) {
    ++other_runs;
    return JobResult::done();
  });
  owner.start();
  other.start();
  ASSERT_TRUE(
      eventually([&] { return owner.stats().live_consumers == 2 && other.stats().live_consumers == 2; }, seconds(10)));

  constexpr int kItems = 20;
  enqueue_items(url(), kItems, 1, "work", prefix);  // all into the one zone
  const bool served = eventually([&] { return owner_runs.load() + other_runs.load() >= kItems; }, seconds(15));
  release_owner = true;
  owner.stop();
  other.stop();
  std::cout << "owner ran " << owner_runs.load() << ", the other consumer " << other_runs.load() << "\n"
            << other.stats().to_string() << std::endl;
  EXPECT_TRUE(served) << "the throttled owner kept its zone: " << owner_runs.load() << " + " << other_runs.load()
                      << " of " << kItems << " items started";
  EXPECT_GE(other_runs.load(), kItems - 2) << "the other consumer should have run the items the owner could not";
}

// Membership follows the consumers: registration, a clean stop, and the memberships of consumers
// that died long ago, which a live consumer forgets (an expired one is no member, but its row is
// kept for an hour for inspection).
TEST_F(PartitionTest, MembershipFollowsConsumersAndForgetsLongDeadOnes) {
  query(
      "INSERT INTO quick.consumer_roles (role, holder, expires_at, acquired_at) VALUES "
      "('member:died-long-ago', 'died-long-ago', now() - interval '2 hours', now() - interval '3 hours'), "
      "('member:died-recently', 'died-recently', now() - interval '1 minute', now() - interval '1 hour')");
  TenantRuns runs;
  std::vector<std::unique_ptr<Consumer>> consumers;
  for (int i = 0; i < 3; ++i) {
    consumers.push_back(recording_consumer(fast_config(url(), "member-" + std::to_string(i)), runs));
    consumers.back()->start();
  }
  ASSERT_TRUE(eventually(
      [&] {
        for (const auto& c : consumers)
          if (c->stats().live_consumers != 3) return false;
        return true;
      },
      seconds(10)))
      << "the dead memberships must not count";
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.consumer_roles WHERE holder = 'died-long-ago'"), 0);
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.consumer_roles WHERE holder = 'died-recently'"), 1);

  consumers[2]->stop();
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.consumer_roles WHERE holder = 'member-2'"), 0);
  ASSERT_TRUE(
      eventually([&] { return consumers[0]->stats().live_consumers == 2 && consumers[1]->stats().live_consumers == 2; },
                 seconds(5)))
      << "the others still count the stopped consumer";
  consumers.clear();
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.consumer_roles WHERE role LIKE 'member:%' "
                             "AND expires_at > now()"),
            0);
}

// partition_grace = 0 turns partitioning off: no membership rows, and the consumer takes
// everything at once, as in the paper.
TEST_F(PartitionTest, ZeroGraceTurnsPartitioningOff) {
  add_live_member("other");
  TenantRuns runs;
  auto config = fast_config(url(), "alone");
  config.scanner.partition_grace = milliseconds(0);
  auto consumer = recording_consumer(config, runs);
  consumer->start();
  enqueue_items(url(), 100, 50, "work");
  ASSERT_TRUE(eventually([&] { return queue_empty(); }, seconds(30)));
  consumer->stop();
  const auto stats = consumer->stats();
  EXPECT_EQ(stats.pointers_left_to_owners, 0u);
  EXPECT_EQ(stats.live_consumers, 1u);
  EXPECT_EQ(query_value<int>("SELECT count(*) FROM quick.consumer_roles WHERE holder = 'alone'"), 0);
}

}  // namespace
}  // namespace quick
