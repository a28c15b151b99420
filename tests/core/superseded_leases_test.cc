// A visit that leases an item this consumer already holds proves the older lease gone (lost in a
// server crash with its visit, or run out): the older copy is the one to stop, found by database
// and item id under another lease id.
#include "core/superseded_leases.h"

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace quick::core {
namespace {

HeldItemPtr held(int database, std::int64_t id, const std::string& lease) {
  auto item = std::make_shared<HeldItem>();
  item->database = database;
  item->item.id = id;
  item->item.lease_id = lease;
  return item;
}

HeldItems holding(const std::vector<HeldItemPtr>& items) {
  HeldItems map;
  for (const auto& item : items) map.emplace(item.get(), item);
  return map;
}

TEST(SupersededLeases, AnItemLeasedAgainUnderANewLeaseSupersedesTheCopyHeld) {
  const auto old_copy = held(0, 7, "lease-1");
  const auto other = held(0, 8, "lease-2");
  const auto superseded = superseded_leases(holding({old_copy, other}), {held(0, 7, "lease-3")});
  ASSERT_EQ(superseded.size(), 1u);
  EXPECT_EQ(superseded.front(), old_copy);
}

TEST(SupersededLeases, TheSameIdInAnotherDatabaseIsAnotherItem) {
  EXPECT_TRUE(superseded_leases(holding({held(0, 7, "lease-1")}), {held(1, 7, "lease-3")}).empty());
}

TEST(SupersededLeases, TheSameLeaseIsNotANewerOne) {
  const auto copy = held(0, 7, "lease-1");
  EXPECT_TRUE(superseded_leases(holding({copy}), {copy}).empty());
  EXPECT_TRUE(superseded_leases(holding({held(0, 7, "lease-1")}), {held(0, 7, "lease-1")}).empty());
}

TEST(SupersededLeases, NothingHeldNothingSuperseded) {
  EXPECT_TRUE(superseded_leases(holding({}), {held(0, 7, "lease-1")}).empty());
  EXPECT_TRUE(superseded_leases(holding({held(0, 7, "lease-1")}), {}).empty());
}

}  // namespace
}  // namespace quick::core
