// Unit tests (no database) for scanner::selection_size and scanner::select_pointers.
#include "scanner/pointer_selection.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace quick::scanner {
namespace {

std::vector<std::string> names(int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back("p" + std::to_string(i));
  return out;
}

TEST(SelectionSize, ZeroCandidatesSelectsNothing) {
  EXPECT_EQ(selection_size(0, 1.0, 100), 0);
  EXPECT_EQ(selection_size(0, 0.5, 1), 0);
}

TEST(SelectionSize, CeilOfFraction) {
  EXPECT_EQ(selection_size(100, 0.02, 2000), 2);
  EXPECT_EQ(selection_size(101, 0.02, 2000), 3);  // ceil(2.02)
  EXPECT_EQ(selection_size(1, 0.02, 2000), 1);    // ceil(0.02): a lone pointer is always taken
  EXPECT_EQ(selection_size(10, 0.5, 2000), 5);
  EXPECT_EQ(selection_size(11, 0.5, 2000), 6);
}

TEST(SelectionSize, CappedBySelectionMax) {
  EXPECT_EQ(selection_size(1000, 0.5, 10), 10);
  EXPECT_EQ(selection_size(1000, 1.0, 1), 1);
}

TEST(SelectionSize, NeverMoreThanCandidates) {
  EXPECT_EQ(selection_size(7, 1.0, 2000), 7);
  EXPECT_EQ(selection_size(3, 1.0, 3), 3);
}

// n * frac is exactly an integer mathematically, but not in binary floating point
// (100 * 0.07 == 7.000000000000001): ceil must still give 7, not 8.
TEST(SelectionSize, ExactProductsAreNotRoundedUpByFloatingPointError) {
  EXPECT_EQ(selection_size(100, 0.07, 2000), 7);
  EXPECT_EQ(selection_size(100, 0.14, 2000), 14);
  EXPECT_EQ(selection_size(100, 0.28, 2000), 28);
  EXPECT_EQ(selection_size(10, 0.3, 2000), 3);
}

TEST(SelectPointers, InOrderTakesTheFirstK) {
  std::mt19937_64 random(1);
  const auto candidates = names(10);
  EXPECT_EQ(select_pointers(candidates, 0.3, 2000, true, random), (std::vector<std::string>{"p0", "p1", "p2"}));
  EXPECT_EQ(select_pointers(candidates, 1.0, 4, true, random), (std::vector<std::string>{"p0", "p1", "p2", "p3"}));
  EXPECT_EQ(select_pointers(candidates, 1.0, 2000, true, random), candidates);
}

TEST(SelectPointers, EmptyCandidates) {
  std::mt19937_64 random(1);
  EXPECT_TRUE(select_pointers({}, 1.0, 10, true, random).empty());
  EXPECT_TRUE(select_pointers({}, 1.0, 10, false, random).empty());
}

TEST(SelectPointers, RandomTakesKDistinctCandidates) {
  std::mt19937_64 random(42);
  const auto candidates = names(50);
  const std::set<std::string> all(candidates.begin(), candidates.end());
  for (int round = 0; round < 200; ++round) {
    const auto selected = select_pointers(candidates, 0.2, 2000, false, random);
    ASSERT_EQ(selected.size(), 10u);
    const std::set<std::string> distinct(selected.begin(), selected.end());
    EXPECT_EQ(distinct.size(), selected.size());
    for (const auto& s : selected) EXPECT_TRUE(all.count(s)) << s;
  }
}

TEST(SelectPointers, RandomSelectsAllWhenKEqualsN) {
  std::mt19937_64 random(7);
  const auto candidates = names(5);
  auto selected = select_pointers(candidates, 1.0, 2000, false, random);
  std::sort(selected.begin(), selected.end());
  EXPECT_EQ(selected, candidates);
}

TEST(SelectPointers, RandomIsDeterministicForAFixedSeed) {
  const auto candidates = names(100);
  std::mt19937_64 a(12345), b(12345);
  for (int round = 0; round < 20; ++round) {
    EXPECT_EQ(select_pointers(candidates, 0.1, 2000, false, a), select_pointers(candidates, 0.1, 2000, false, b));
  }
}

TEST(SelectPointers, RandomVariesAcrossScans) {
  const auto candidates = names(100);
  std::mt19937_64 random(99);
  const auto first = select_pointers(candidates, 0.1, 2000, false, random);
  bool differed = false;
  for (int round = 0; round < 10 && !differed; ++round) {
    differed = select_pointers(candidates, 0.1, 2000, false, random) != first;
  }
  EXPECT_TRUE(differed);
}

// Each candidate is equally likely: k/n per scan. 20 candidates, k = 5, 40000 scans: each
// candidate expected 10000 times (sd ~ 87); allow 5%.
TEST(SelectPointers, RandomIsUniformOverCandidates) {
  const auto candidates = names(20);
  std::mt19937_64 random(2024);
  std::map<std::string, int> hits;
  constexpr int kScans = 40000;
  for (int round = 0; round < kScans; ++round) {
    for (const auto& s : select_pointers(candidates, 0.25, 2000, false, random)) ++hits[s];
  }
  ASSERT_EQ(hits.size(), candidates.size());
  const double expected = kScans * 5.0 / 20.0;
  for (const auto& [name, count] : hits) {
    EXPECT_NEAR(count, expected, expected * 0.05) << name;
  }
  // The first and last candidates in particular (no positional bias).
  EXPECT_NEAR(hits["p0"], hits["p19"], expected * 0.07);
}

// The in-order Scanner takes at least one Manager batch of the oldest pointers (it contends with
// nobody over them), but never more than there are, nor more than selection_max.
TEST(SelectPointers, InOrderTakesAtLeastItsMinimumOfTheOldest) {
  const auto candidates = names(100);
  std::mt19937_64 random(1);
  const auto selected = select_pointers(candidates, 0.02, 2000, true, random, 16);
  ASSERT_EQ(selected.size(), 16u);
  EXPECT_EQ(selected.front(), "p0");
  EXPECT_EQ(selected.back(), "p15");
  EXPECT_EQ(select_pointers(names(5), 0.02, 2000, true, random, 16).size(), 5u);
  EXPECT_EQ(select_pointers(candidates, 0.02, 10, true, random, 16).size(), 10u);
  // Random selection is unaffected by the minimum.
  EXPECT_EQ(select_pointers(candidates, 0.02, 2000, false, random, 16).size(), 2u);
}

// With tenants partitioned between consumers, the count comes from everything visible (as if the
// consumer were alone) but is drawn from the eligible pointers only.
TEST(SelectEligiblePointers, CountsOverTheVisibleAndDrawsFromTheEligible) {
  std::mt19937_64 random(3);
  const auto eligible = names(250);
  const std::set<std::string> allowed(eligible.begin(), eligible.end());
  const std::vector<bool> all_own(eligible.size(), true);
  const auto selected = select_eligible_pointers(eligible, all_own, 1000, 0.02, 2000, false, random);
  ASSERT_EQ(selected.size(), 20u);  // ceil(1000 * 0.02), not ceil(250 * 0.02)
  for (const auto& s : selected) EXPECT_TRUE(allowed.count(s)) << s;
  // Never more than are eligible, and nothing when none are (the light-load case: the one
  // vested pointer belongs to another consumer).
  EXPECT_EQ(select_eligible_pointers(names(3), {true, true, true}, 1000, 0.02, 2000, false, random).size(), 3u);
  EXPECT_TRUE(select_eligible_pointers({}, {}, 2, 0.02, 2000, false, random).empty());
  EXPECT_EQ(select_eligible_pointers(names(1), {true}, 2, 0.02, 2000, false, random), names(1));
}

// Own pointers first; others' (past their grace) only to make up the count.
TEST(SelectEligiblePointers, RandomPrefersOwnPointersAndMakesUpTheCountWithOthers) {
  std::mt19937_64 random(5);
  const auto eligible = names(100);
  std::vector<bool> owned(eligible.size(), false);
  for (int i = 0; i < 100; i += 10) owned[static_cast<std::size_t>(i)] = true;  // p0, p10, ..., p90
  for (int round = 0; round < 50; ++round) {
    const auto five = select_eligible_pointers(eligible, owned, 250, 0.02, 2000, false, random);
    ASSERT_EQ(five.size(), 5u);
    for (const auto& s : five) EXPECT_TRUE(owned[std::stoul(s.substr(1))]) << s << " is not ours";
    const auto fifteen = select_eligible_pointers(eligible, owned, 750, 0.02, 2000, false, random);
    ASSERT_EQ(fifteen.size(), 15u);
    int own = 0;
    for (const auto& s : fifteen) own += owned[std::stoul(s.substr(1))] ? 1 : 0;
    EXPECT_EQ(own, 10) << "all ten own pointers first, then five of the others";
    EXPECT_EQ(std::set<std::string>(fifteen.begin(), fifteen.end()).size(), 15u);
  }
}

TEST(SelectEligiblePointers, InOrderTakesTheOldestEligibleWhoeverOwnsThem) {
  std::mt19937_64 random(3);
  const std::vector<bool> owned{false, true, false, true, false, false, false, false, false, false};
  EXPECT_EQ(select_eligible_pointers(names(10), owned, 1000, 0.001, 2000, true, random, 4), names(4));
}

TEST(SplitIntoBatches, FewestBatchesOfNearlyEqualSize) {
  auto sizes = [](const std::vector<std::vector<std::string>>& batches) {
    std::vector<std::size_t> out;
    for (const auto& batch : batches) out.push_back(batch.size());
    return out;
  };
  EXPECT_EQ(sizes(split_into_batches(names(20), 16)), (std::vector<std::size_t>{10, 10}));
  EXPECT_EQ(sizes(split_into_batches(names(16), 16)), (std::vector<std::size_t>{16}));
  EXPECT_EQ(sizes(split_into_batches(names(33), 16)), (std::vector<std::size_t>{11, 11, 11}));
  EXPECT_TRUE(split_into_batches({}, 16).empty());
  // Every pointer exactly once, in order.
  std::vector<std::string> joined;
  for (const auto& batch : split_into_batches(names(37), 8)) joined.insert(joined.end(), batch.begin(), batch.end());
  EXPECT_EQ(joined, names(37));
}

}  // namespace
}  // namespace quick::scanner
