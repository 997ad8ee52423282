// Placing stitched groups as units: the enumeration against an independent
// recursive brute force on random instances; longest-first within its bound.
#include <functional>
#include <random>

#include <gtest/gtest.h>

#include "passes/mts/unit_placement.h"

namespace zp::mts {
namespace {

using Costs = std::vector<std::vector<double>>;

Costs randomCosts(size_t units, size_t processors, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0.2, 5.0), speed(0.5, 2.0);
  std::vector<double> procSpeed(processors);
  for (auto& s : procSpeed) s = speed(rng);
  Costs c(units, std::vector<double>(processors));
  for (auto& row : c) {
    const double work = u(rng);
    for (size_t p = 0; p < processors; ++p) row[p] = work * procSpeed[p] * speed(rng);
  }
  return c;
}

// The optimum by recursion over units, loads carried along (not the odometer).
double bruteForce(const Costs& c) {
  std::vector<double> load(c.front().size(), 0);
  double best = 1e300;
  std::function<void(size_t)> go = [&](size_t u) {
    if (u == c.size()) {
      best = std::min(best, *std::max_element(load.begin(), load.end()));
      return;
    }
    for (size_t p = 0; p < load.size(); ++p) {
      load[p] += c[u][p];
      go(u + 1);
      load[p] -= c[u][p];
    }
  };
  go(0);
  return best;
}

TEST(UnitPlacement, EnumerationEqualsBruteForceOnRandomInstances) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const size_t units = 1 + trial % 7, processors = 1 + trial % 3;
    const Costs c = randomCosts(units, processors, rng);
    const UnitPlacement r = placeUnits(c);
    ASSERT_TRUE(r.optimal && r.enumerated);
    ASSERT_EQ(r.processor.size(), units);
    EXPECT_DOUBLE_EQ(r.makespanMs, makespanOf(c, r.processor));
    EXPECT_NEAR(r.makespanMs, bruteForce(c), 1e-12) << "trial " << trial;
    EXPECT_EQ(r.lowerBoundMs, r.makespanMs);
    uint64_t all = 1;
    for (size_t u = 0; u < units; ++u) all *= processors;
    EXPECT_EQ(r.assignments, all);
  }
}

TEST(UnitPlacement, LongestFirstStaysBetweenItsBoundAndTheOptimumWhenTooManyToEnumerate) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 100; ++trial) {
    const Costs c = randomCosts(2 + trial % 6, 2 + trial % 2, rng);
    const UnitPlacement r = placeUnits(c, UnitPlacementParams{1});
    const double opt = bruteForce(c);
    EXPECT_GE(r.makespanMs, opt - 1e-12);
    EXPECT_LE(r.lowerBoundMs, opt + 1e-12);
    EXPECT_DOUBLE_EQ(r.makespanMs, makespanOf(c, r.processor));
    EXPECT_EQ(r.optimal, r.lowerBoundMs >= r.makespanMs);
    EXPECT_FALSE(r.enumerated);
  }
}

TEST(UnitPlacement, TwoLongUnitsGoToTwoProcessorsAndTiesTakeTheFirstPlacement) {
  // Units 0 and 1 take 10 ms anywhere, unit 2 takes 1 ms: 0 and 1 apart, 2 beside either.
  const Costs c = {{10, 10}, {10, 10}, {1, 1}};
  const UnitPlacement r = placeUnits(c);
  EXPECT_EQ(r.processor, (std::vector<int>{0, 1, 0}));
  EXPECT_DOUBLE_EQ(r.makespanMs, 11);
  // A processor twice as slow takes the short unit only.
  const Costs slow = {{4, 8}, {4, 8}, {1, 2}};
  EXPECT_EQ(placeUnits(slow).processor, (std::vector<int>{0, 0, 1}));
}

}  // namespace
}  // namespace zp::mts
