// Unit tests (no database) for scanner::TenantPartition / owner_of: every tenant has exactly one
// owner among the live consumers, shares are about even, and a membership change moves only the
// tenants of the consumer that joined or left.
#include "scanner/tenant_partition.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace quick::scanner {
namespace {

std::vector<std::string> consumers(int n) {
  std::vector<std::string> ids;
  for (int i = 0; i < n; ++i) ids.push_back("host-1234-c" + std::to_string(i));
  return ids;
}

std::string tenant(int i) { return "t" + std::to_string(i); }

TEST(TenantPartition, AloneOwnsEveryTenant) {
  TenantPartition partition("me");
  EXPECT_EQ(partition.member_count(), 1u);
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(partition.owns(tenant(i)));
  partition.set_members({"me"});
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(partition.owns(tenant(i)));
}

TEST(TenantPartition, EveryTenantHasExactlyOneOwnerAmongTheMembers) {
  const auto ids = consumers(4);
  std::vector<TenantPartition> partitions;
  for (const auto& id : ids) {
    partitions.emplace_back(id);
    partitions.back().set_members(ids);
  }
  for (int i = 0; i < 2000; ++i) {
    int owners = 0;
    for (std::size_t c = 0; c < ids.size(); ++c) {
      if (partitions[c].owns(tenant(i))) {
        ++owners;
        EXPECT_EQ(owner_of(ids, tenant(i)), ids[c]);
      }
    }
    EXPECT_EQ(owners, 1) << tenant(i);
  }
}

// Member lists arrive sorted from the database, but order and duplicates must not matter; a
// consumer that is not (yet) listed counts itself in.
TEST(TenantPartition, MemberOrderDuplicatesAndAMissingSelfDoNotChangeOwnership) {
  const auto ids = consumers(3);
  TenantPartition listed(ids[0]), shuffled(ids[0]), unlisted(ids[0]);
  listed.set_members(ids);
  shuffled.set_members({ids[2], ids[0], ids[1], ids[2]});
  unlisted.set_members({ids[1], ids[2]});
  EXPECT_EQ(unlisted.member_count(), 3u);
  for (int i = 0; i < 500; ++i) {
    EXPECT_EQ(listed.owns(tenant(i)), shuffled.owns(tenant(i)));
    EXPECT_EQ(listed.owns(tenant(i)), unlisted.owns(tenant(i)));
  }
}

// 4 consumers, 40000 tenants: each owns about a quarter (binomial sd ~87; allow 5%).
TEST(TenantPartition, SharesAreAboutEven) {
  const auto ids = consumers(4);
  std::map<std::string, int> owned;
  constexpr int kTenants = 40000;
  for (int i = 0; i < kTenants; ++i) ++owned[owner_of(ids, tenant(i))];
  ASSERT_EQ(owned.size(), ids.size());
  for (const auto& [id, count] : owned) EXPECT_NEAR(count, kTenants / 4, kTenants / 4 * 0.05) << id;
}

// Rendezvous hashing: when a consumer leaves, only its tenants move; when one joins, tenants
// move only to it.
TEST(TenantPartition, AMembershipChangeMovesOnlyTheTenantsOfTheConsumerThatLeftOrJoined) {
  const auto four = consumers(4);
  const std::vector<std::string> three(four.begin(), four.begin() + 3);
  int moved = 0;
  for (int i = 0; i < 5000; ++i) {
    const auto before = owner_of(four, tenant(i)), after = owner_of(three, tenant(i));
    if (before != four[3]) {
      EXPECT_EQ(after, before) << tenant(i) << " moved although its owner stayed";
    } else {
      ++moved;
    }
  }
  EXPECT_GT(moved, 1000);  // about a quarter
  EXPECT_LT(moved, 1500);
}

// The hash is ours (FNV-1a and splitmix64), not std::hash, so every build on every platform
// agrees on the owner: these values are fixed forever.
TEST(TenantPartition, OwnershipIsStableAcrossBuilds) {
  const std::vector<std::string> ids{"a", "b", "c"};
  std::string owners;
  for (int i = 0; i < 12; ++i) owners += owner_of(ids, tenant(i));
  EXPECT_EQ(owners, "bbaccbbacaba");  // computed independently (Python) from the algorithm
}

}  // namespace
}  // namespace quick::scanner
