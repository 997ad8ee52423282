// The exact solvers against brute force on seeded random chains and DAGs.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "passes/opplace/opplace.h"
#include "tests/opplace/random_problem.h"

namespace zp::opplace {
namespace {

using testing::bruteForce;
using testing::randomProblem;

TEST(OpPlaceSolver, ChainDpMatchesBruteForce) {
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    const int n = 2 + static_cast<int>(seed % 7), k = 2 + static_cast<int>(seed % 2);
    auto p = randomProblem(n, k, seed, true);
    ASSERT_TRUE(isChain(p));
    auto dp = solveChainDp(p);
    auto bf = bruteForce(p);
    EXPECT_NEAR(dp.latencyMs, bf.latencyMs, 1e-9) << "seed " << seed;
    EXPECT_TRUE(dp.optimal);
  }
}

TEST(OpPlaceSolver, BranchAndBoundMatchesBruteForceOnDags) {
  int beatGreedy = 0;
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    const int n = 3 + static_cast<int>(seed % 7), k = 2 + static_cast<int>(seed % 2);
    auto p = randomProblem(n, k, 1000 + seed, false);
    ASSERT_TRUE(validate(p).ok());
    auto bb = solveBranchAndBound(p, {}, SolveParams{});
    auto bf = bruteForce(p);
    EXPECT_TRUE(bb.optimal) << "seed " << seed;
    EXPECT_NEAR(bb.latencyMs, bf.latencyMs, 1e-9) << "seed " << seed;
    EXPECT_NEAR(latencyOf(p, bb.assignment), bb.latencyMs, 1e-9);
    EXPECT_NEAR(bb.gap, 0, 1e-12);
    beatGreedy += bf.latencyMs < latencyOf(p, greedyAssignment(p)) - 1e-9;
  }
  // The instances are not trivial: greedy misses the optimum on some.
  EXPECT_GT(beatGreedy, 5);
}

TEST(OpPlaceSolver, BranchAndBoundMatchesBruteForceWithAProcessorOnSharedCores) {
  int usesShared = 0, mixes = 0;
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    const int n = 3 + static_cast<int>(seed % 6), k = 3;
    auto p = randomProblem(n, k, 3000 + seed, seed % 5 == 0, /*sharedCores=*/true);
    ASSERT_TRUE(validate(p).ok());
    auto r = solvePlacement(p, {}, SolveParams{});
    auto bf = bruteForce(p);
    EXPECT_TRUE(r.optimal) << "seed " << seed;
    EXPECT_NEAR(r.latencyMs, bf.latencyMs, 1e-9) << "seed " << seed;
    EXPECT_NEAR(latencyOf(p, r.assignment), r.latencyMs, 1e-9);
    const auto shared = std::count(r.assignment.begin(), r.assignment.end(), 2);
    usesShared += shared > 0;
    mixes += shared > 0 && shared < n;
  }
  EXPECT_GT(usesShared, 5);
  EXPECT_GT(mixes, 3) << "some optima use the shared processor for some operators only";
}

TEST(OpPlaceSolver, PlacementIsNoWorseThanAnyBaseline) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    auto p = randomProblem(8, 3, 5000 + seed, seed % 3 == 0);
    p.alone.push_back(AloneConfig{"cpu@2", std::vector<double>(p.nodes.size(), 0.5)});
    SolveParams exact;
    exact.minMixGain = 0;
    auto r = placeOperators(p, exact);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->mixedLatencyMs, 0);
    for (const auto& b : r->baselines) {
      if (b.assignment.empty()) continue;
      EXPECT_LE(r->solution.latencyMs, b.latencyMs + 1e-9) << b.name;
    }
    EXPECT_EQ(r->baselines.size(), 3u + 1 + 2);
    EXPECT_DOUBLE_EQ(r->timeline.latencyMs, r->solution.latencyMs);
  }
}

// A mix that gains less than minMixGain (a fraction of the best single
// processor's latency) or than minMixGainMs over that processor gives way to it;
// one that gains more is kept, and floors of 0 keep every mix.
TEST(OpPlaceSolver, SmallMixGainKeepsTheBestSingleProcessor) {
  int gaveWay = 0, kept = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    const auto p = randomProblem(8, 2, 9000 + seed, false);
    SolveParams exact;
    exact.minMixGain = 0;
    const auto opt = placeOperators(p, exact);
    ASSERT_TRUE(opt.ok());
    double single = 1e300;
    for (const auto& b : opt->baselines)
      if (b.name.ends_with("-only")) single = std::min(single, b.latencyMs);
    const double savedMs = single - opt->solution.latencyMs, gain = savedMs / single;
    if (gain <= 1e-9) continue;  // the optimum is a single processor already
    for (double scale : {0.5, 1.5})
      for (bool inMs : {false, true}) {
        SolveParams params;
        params.minMixGain = inMs ? 0 : gain * scale;
        params.minMixGainMs = inMs ? savedMs * scale : 0;
        const auto r = placeOperators(p, params);
        ASSERT_TRUE(r.ok());
        if (scale > 1) {
          ++gaveWay;
          EXPECT_DOUBLE_EQ(r->solution.latencyMs, single) << seed;
          EXPECT_DOUBLE_EQ(r->mixedLatencyMs, opt->solution.latencyMs) << seed;
          EXPECT_FALSE(r->solution.optimal);
          EXPECT_EQ(std::set<int>(r->solution.assignment.begin(), r->solution.assignment.end()).size(), 1u);
          EXPECT_NEAR(r->solution.gap, (single - r->solution.bound) / single, 1e-12);
        } else {
          ++kept;
          EXPECT_DOUBLE_EQ(r->solution.latencyMs, opt->solution.latencyMs) << seed;
          EXPECT_EQ(r->mixedLatencyMs, 0);
        }
        EXPECT_DOUBLE_EQ(r->timeline.latencyMs, r->solution.latencyMs);
      }
  }
  EXPECT_GT(gaveWay, 10);
  EXPECT_EQ(kept, gaveWay);
}

TEST(OpPlaceSolver, NodeLimitReportsNotProvenWithAValidBound) {
  auto p = randomProblem(40, 3, 77, false);
  auto bf = solveBranchAndBound(p, {}, SolveParams{60, 0});
  auto cut = solveBranchAndBound(p, greedyAssignment(p), SolveParams{60, 50});
  ASSERT_TRUE(bf.optimal);
  EXPECT_FALSE(cut.optimal);
  EXPECT_LE(cut.bound, bf.latencyMs + 1e-9);  // the bound holds
  EXPECT_GE(cut.latencyMs, bf.latencyMs - 1e-9);
  EXPECT_GT(cut.gap, 0);
}

}  // namespace
}  // namespace zp::opplace
