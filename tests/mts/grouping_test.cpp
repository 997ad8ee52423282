// MTS model grouping (Alg. 1) against brute force over all set partitions on
// random instances with T <= 8.
#include <random>

#include <gtest/gtest.h>

#include "passes/mts/grouping.h"

namespace zp::mts {
namespace {

// Random subset costs: a per-member latency plus a stitching overhead that grows
// with the group size (sometimes faster, sometimes slower than running apart),
// memory = shared part + per-member exclusive part.
GroupCosts randomCosts(int T, std::mt19937_64& rng, bool identical) {
  std::uniform_real_distribution<double> u(0.5, 2.0);
  std::vector<double> lat(static_cast<size_t>(T)), mem(static_cast<size_t>(T));
  const double l0 = u(rng), m0 = u(rng);
  for (int t = 0; t < T; ++t) {
    lat[static_cast<size_t>(t)] = identical ? l0 : u(rng);
    mem[static_cast<size_t>(t)] = identical ? m0 : u(rng);
  }
  const double overhead = u(rng) * 0.3, saving = u(rng) * 0.4, shared = u(rng);
  GroupCosts c;
  c.members = T;
  c.latency.assign(size_t{1} << T, 0);
  c.memory.assign(size_t{1} << T, 0);
  for (uint32_t s = 1; s < (uint32_t{1} << T); ++s) {
    double sum = 0, msum = 0;
    int n = 0;
    for (int t = 0; t < T; ++t)
      if (s & (uint32_t{1} << t)) {
        sum += lat[static_cast<size_t>(t)];
        msum += mem[static_cast<size_t>(t)];
        ++n;
      }
    c.latency[s] = sum * (1.0 - saving) + overhead * n * n * (identical ? 1.0 : u(rng));
    c.memory[s] = shared + msum;
  }
  return c;
}

TEST(MtsGrouping, SubsetDpEqualsBruteForceOnRandomInstances) {
  std::mt19937_64 rng(17);
  for (int T = 1; T <= 8; ++T)
    for (int trial = 0; trial < 12; ++trial) {
      GroupCosts c = randomCosts(T, rng, false);
      const double budget = c.memory[(uint32_t{1} << T) - 1] * (trial % 3 == 0 ? 2.0 : 0.5);
      Grouping brute = groupBruteForce(c, budget);
      Grouping dp = groupSubsets(c, budget);
      ASSERT_EQ(brute.feasible, dp.feasible) << "T=" << T;
      if (!brute.feasible) continue;
      EXPECT_NEAR(dp.latency, brute.latency, 1e-9 * brute.latency) << "T=" << T << " " << groupingText(dp) << " vs "
                                                                 << groupingText(brute);
      for (uint32_t g : dp.groups) EXPECT_LE(c.memory[g], budget);
      Grouping greedy = groupGreedy(c, budget);
      if (greedy.feasible) EXPECT_GE(greedy.latency, brute.latency - 1e-9 * brute.latency);
    }
}

TEST(MtsGrouping, SizeDpEqualsBruteForceForIdenticalModels) {
  std::mt19937_64 rng(23);
  for (int T = 1; T <= 8; ++T)
    for (int trial = 0; trial < 8; ++trial) {
      GroupCosts c = randomCosts(T, rng, true);
      const double budget = c.memory[(uint32_t{1} << T) - 1] * (trial % 2 == 0 ? 2.0 : 0.6);
      Grouping brute = groupBruteForce(c, budget);
      Grouping dp = groupIdentical(c, budget);
      ASSERT_EQ(brute.feasible, dp.feasible);
      if (brute.feasible) EXPECT_NEAR(dp.latency, brute.latency, 1e-9 * brute.latency) << "T=" << T;
    }
}

TEST(MtsGrouping, BudgetBelowEveryMemberIsInfeasible) {
  std::mt19937_64 rng(5);
  GroupCosts c = randomCosts(4, rng, false);
  EXPECT_FALSE(groupSubsets(c, 0.1).feasible);
  EXPECT_FALSE(groupBruteForce(c, 0.1).feasible);
  EXPECT_FALSE(groupGreedy(c, 0.1).feasible);
  EXPECT_EQ(groupingText(groupSubsets(c, 0.1)), "(infeasible)");
}

TEST(MtsGrouping, GreedyDealsInSnakeOrder) {
  // Additive latencies, no memory limit: one group per member count G; the
  // greedy's pick is the cheapest of those, here everything in one group.
  GroupCosts c;
  c.members = 3;
  c.latency = {0, 3, 2, 4.5, 1, 3.5, 2.5, 5.0};
  c.memory.assign(8, 1.0);
  Grouping g = groupGreedy(c, 10);
  ASSERT_TRUE(g.feasible);
  EXPECT_EQ(groupingText(g), "{0,1,2}");
  EXPECT_DOUBLE_EQ(g.latency, 5.0);
}

}  // namespace
}  // namespace zp::mts
